/**
 * Pods are the one kind the store holds by the thousand. client-node's ListWatch caches every
 * object it receives, and it hands its event callbacks the very object it caches, so trimming
 * that object in place, before anything else keeps it, keeps the cache small: only what quota
 * accounting reads survives.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { QUOTA_LABELS } from '../../webhook/rules/quota/keys.js';

type Loose = Record<string, unknown>;

const KEPT_LABELS = [QUOTA_LABELS.name, QUOTA_LABELS.preemptible];

function containerResources(containers: unknown): Loose[] | undefined {
  if (!Array.isArray(containers)) return undefined;
  return containers.map((container: Loose) => ({
    name: container.name,
    resources: container.resources,
    ...(container.restartPolicy ? { restartPolicy: container.restartPolicy } : {}),
  }));
}

export function slimPod(pod: KubernetesObject): void {
  const loose = pod as unknown as Loose;
  const metadata = (loose.metadata ?? {}) as Loose;
  const labels = (metadata.labels ?? {}) as Record<string, string>;
  loose.metadata = {
    name: metadata.name,
    namespace: metadata.namespace,
    uid: metadata.uid,
    resourceVersion: metadata.resourceVersion,
    deletionTimestamp: metadata.deletionTimestamp,
    deletionGracePeriodSeconds: metadata.deletionGracePeriodSeconds,
    labels: Object.fromEntries(
      KEPT_LABELS.flatMap((key) => (labels[key] === undefined ? [] : [[key, labels[key]]])),
    ),
  };
  const spec = (loose.spec ?? {}) as Loose;
  loose.spec = {
    containers: containerResources(spec.containers),
    initContainers: containerResources(spec.initContainers),
    overhead: spec.overhead,
  };
  const status = (loose.status ?? {}) as Loose;
  loose.status = { phase: status.phase };
}
