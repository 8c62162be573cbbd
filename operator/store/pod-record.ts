/**
 * What the store keeps of a pod: only what quota accounting reads, held once. The store keeps a
 * record for every live pod of the cluster, so its size is the operator's memory per pod: the
 * namespace and the quota name are shared strings, and the requests a shared object (the pods of
 * one workload all ask for the same); labels, containers and status are read once, when the pod
 * arrives, and dropped.
 */
import type { JsonObject } from '../../webhook/admission/types.js';
import { QUOTA_LABELS } from '../../webhook/rules/koordinator/quota/keys.js';
import { podIsDone, podRequests, type Amounts } from '../../webhook/rules/koordinator/quota/pod-requests.js';
import { transformReplaceResources } from '../../webhook/rules/koordinator/quota/replace-resources.js';
import { asObject } from '../../webhook/util/json.js';
import { Interner, StringInterner } from './interner.js';

/** A live pod, kept under its key (namespace/name). */
export interface PodRecord {
  readonly namespace: string;
  /** The pod's quota-name label, which decides its quota before anything else. */
  readonly quotaLabel: string | undefined;
  /** The quota the pod counts against, resolved when it arrived or when quotas changed. */
  quota: string;
  /** What it requests, shared with every pod that requests the same. */
  readonly requests: PodRequests;
  /** The list that last saw it: a relist drops the records it did not see. */
  listEpoch: number;
}

/** A pod's effective requests: resource names and, in the same order, amounts in nanos. */
export interface PodRequests {
  readonly resources: readonly string[];
  readonly amounts: readonly bigint[];
}

const names = new StringInterner();
const requestShapes = new Interner<PodRequests>(16_384);

/** `requests` in the compact form, one object for every pod (or ledger entry) that asks for the same. */
export function sharedRequests(requests: Amounts): PodRequests {
  let key = '';
  for (const [name, amount] of requests) key += `${name}=${amount};`;
  return requestShapes.intern(key, { resources: [...requests.keys()], amounts: [...requests.values()] });
}

/** The fields of a pod that identify it, or undefined when it has no name. */
export function podKeyOf(pod: JsonObject): { key: string; namespace: string } | undefined {
  const metadata = asObject(pod.metadata);
  const name = metadata?.name;
  if (typeof name !== 'string' || name === '') return undefined;
  const namespace = typeof metadata?.namespace === 'string' ? names.intern(metadata.namespace) : '';
  return { key: `${namespace}/${name}`, namespace };
}

/**
 * The record of a live pod, or undefined for a pod that can never count again (finished, or past
 * its deletion grace period at `now`). `quotaOf` resolves its quota.
 */
export function podRecord(
  pod: JsonObject,
  id: { namespace: string },
  now: Date,
  quotaOf: (quotaLabel: string | undefined, namespace: string) => string,
  replaceResources = false,
): PodRecord | undefined {
  if (podIsDone(pod, now)) return undefined;
  const label = asObject(asObject(pod.metadata)?.labels)?.[QUOTA_LABELS.name];
  const quotaLabel = typeof label === 'string' ? names.intern(label) : undefined;
  return {
    namespace: id.namespace,
    quotaLabel,
    quota: names.intern(quotaOf(quotaLabel, id.namespace)),
    // As Kubernetes' ResourceQuota counts a pod that may be resized: the larger of its spec and
    // what the kubelet allocated (pod-requests.ts, RequestOptions).
    // Counted as quota admission counted it: renamed by its replace-resources annotation when
    // both of Koordinator's gates say so, as its child-request annotation sums the pods it admitted.
    requests: sharedRequests(
      podRequests(replaceResources ? transformReplaceResources(pod) : pod, undefined, { followStatus: true }),
    ),
    listEpoch: 0,
  };
}

/** Requests as a map, the form the rules and the ledger use. */
export function amountsOf({ resources, amounts }: PodRequests): Amounts {
  return new Map(resources.map((name, i) => [name, amounts[i] ?? 0n]));
}
