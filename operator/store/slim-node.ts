/**
 * Nodes are large (images, conditions, addresses) and the rules read only their labels. As with
 * pods (see slim-pod.ts), the object is trimmed in place before client-node's cache keeps it.
 */
import type { KubernetesObject } from '@kubernetes/client-node';

type Loose = Record<string, unknown>;

export function slimNode(node: KubernetesObject): void {
  const loose = node as unknown as Loose;
  const metadata = (loose.metadata ?? {}) as Loose;
  loose.metadata = {
    name: metadata.name,
    uid: metadata.uid,
    resourceVersion: metadata.resourceVersion,
    labels: metadata.labels,
  };
  delete loose.spec;
  delete loose.status;
}
