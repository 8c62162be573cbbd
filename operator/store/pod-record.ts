/**
 * What the store keeps of a pod: only what quota accounting reads, held once. The store keeps a
 * record for every live pod of the cluster, so its size is the operator's memory per pod: the
 * namespace and the quota name are shared strings, the resource names a shared list, and the
 * amounts one small array; labels, containers and status are read once, when the pod arrives,
 * and dropped.
 */
import type { JsonObject } from '../../webhook/admission/types.js';
import { QUOTA_LABELS } from '../../webhook/rules/quota/keys.js';
import { podIsDone, podRequests, type Amounts } from '../../webhook/rules/quota/pod-requests.js';
import { asObject } from '../../webhook/util/json.js';
import { Interner, StringInterner } from './interner.js';

export interface PodRecord {
  /** namespace/name */
  readonly key: string;
  readonly namespace: string;
  /** The pod's quota-name label, which decides its quota before anything else. */
  readonly quotaLabel: string | undefined;
  /** The quota the pod counts against, resolved when it arrived or when quotas changed. */
  quota: string;
  /** The names of the resources it requests, in the order of `amounts`. */
  readonly resources: readonly string[];
  /** What it requests of each, in nanos (the unit of webhook/util/quantity.ts). */
  readonly amounts: readonly bigint[];
  /** The list that last saw it: a relist drops the records it did not see. */
  listEpoch: number;
}

const names = new StringInterner();
const resourceLists = new Interner<readonly string[]>(1024);

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
 * its deletion grace period at `now`) or has no name. `quotaOf` resolves its quota.
 */
export function podRecord(
  pod: JsonObject,
  now: Date,
  quotaOf: (quotaLabel: string | undefined, namespace: string) => string,
): PodRecord | undefined {
  const id = podKeyOf(pod);
  if (!id || podIsDone(pod, now)) return undefined;
  const label = asObject(asObject(pod.metadata)?.labels)?.[QUOTA_LABELS.name];
  const quotaLabel = typeof label === 'string' ? names.intern(label) : undefined;
  const requests = podRequests(pod);
  const resourceNames = [...requests.keys()];
  return {
    key: id.key,
    namespace: id.namespace,
    quotaLabel,
    quota: names.intern(quotaOf(quotaLabel, id.namespace)),
    resources: resourceLists.intern(resourceNames.join('\n'), resourceNames),
    amounts: [...requests.values()],
    listEpoch: 0,
  };
}

/** A record's requests as a map, the form the rules and the ledger use. */
export function requestsOf(record: Pick<PodRecord, 'resources' | 'amounts'>): Amounts {
  return new Map(record.resources.map((name, i) => [name, record.amounts[i] ?? 0n]));
}
