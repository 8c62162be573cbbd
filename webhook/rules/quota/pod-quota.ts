/**
 * The quota checks of /validate-pod (Koordinator spec §2.3):
 * - meta check (always on): a pod cannot count against a parent quota, and its preemptible
 *   label is immutable;
 * - quota admission (gate EnableQuotaAdmission; UPDATE also needs EnableQuotaAdmissionOnUpdate):
 *   a pod whose requests would push its quota's use past the limit (the admission annotation,
 *   else spec.max) is refused, naming the quota, resource, requested, used and limit.
 *
 * Admission writes nothing to the cluster: an allowed pod comes back as a `reserve` effect, which
 * the server records in the store's in-memory ledger until the pod watch sees the pod.
 */
import type { AdmissionRequest, Decision, JsonValue } from '../../admission/types.js';
import type { StateSnapshot } from '../../state.js';
import { labelsOf } from '../../util/json.js';
import { formatQuantity, QuantityFieldError, quantityAt } from '../../util/quantity.js';
import { DEFAULT_QUOTA, QUOTA_ANNOTATIONS, QUOTA_LABELS, ROOT_QUOTA, SYSTEM_QUOTA } from './keys.js';
import { podRequests, type Amounts } from './pod-requests.js';
import { quotaNameOf } from './resolve-quota.js';

export interface PodQuotaOptions {
  quotaAdmission: boolean;
  quotaAdmissionOnUpdate: boolean;
}

/** The resources quota admission counts (Koordinator's evaluator set). */
const COUNTED = new Set([
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
  'kubernetes.io/batch-cpu',
  'kubernetes.io/batch-memory',
  'kubernetes.io/mid-cpu',
  'kubernetes.io/mid-memory',
  'koordinator.sh/gpu',
  'nvidia.com/gpu',
  'koordinator.sh/gpu.shared',
  'koordinator.sh/gpu-memory-ratio',
]);

function refuse(message: string, code = 403): Decision {
  return { allowed: false, code, reason: code === 403 ? 'Forbidden' : 'BadRequest', message };
}

const list = (
  keys: readonly string[],
  amounts: ReadonlyMap<string, bigint>,
  like: Readonly<Record<string, JsonValue>> = {},
): string =>
  keys
    .map((key) => {
      const written = like[key];
      return `${key}=${formatQuantity(amounts.get(key) ?? 0n, typeof written === 'string' ? written : '')}`;
    })
    .join(',');

export function checkPodQuota(
  request: AdmissionRequest,
  state: StateSnapshot,
  options: PodQuotaOptions,
): Decision {
  const pod = request.object;
  if (!pod || (request.operation !== 'CREATE' && request.operation !== 'UPDATE')) return { allowed: true };
  const namespace = request.namespace ?? '';
  const labels = labelsOf(pod);
  const podName = request.name ?? (typeof pod.metadata.name === 'string' ? pod.metadata.name : '');

  if (request.operation === 'UPDATE') {
    const before = labelsOf(request.oldObject)[QUOTA_LABELS.preemptible];
    if (before !== labels[QUOTA_LABELS.preemptible]) {
      return refuse(`metadata.labels[${QUOTA_LABELS.preemptible}]: the preemptible label cannot be changed`);
    }
  }

  const quotaName = quotaNameOf(labels, namespace, state);
  const quota = state.elasticQuota(quotaName);
  if (quotaName !== DEFAULT_QUOTA && quota?.isParent) {
    return refuse(
      `metadata.labels[${QUOTA_LABELS.name}]: pod ${podName} cannot be linked to parent quota ${quotaName}; use one of its leaf quotas`,
    );
  }

  if (!options.quotaAdmission) return { allowed: true };
  if (request.operation === 'UPDATE') {
    if (!options.quotaAdmissionOnUpdate) return { allowed: true };
    // Only a move to another quota is evaluated (the old quota is not credited, as in Koordinator).
    if (quotaNameOf(labelsOf(request.oldObject), namespace, state) === quotaName) return { allowed: true };
  }
  if ([DEFAULT_QUOTA, SYSTEM_QUOTA, ROOT_QUOTA, ''].includes(quotaName)) return { allowed: true };
  if (!quota) {
    return refuse(`metadata.labels[${QUOTA_LABELS.name}]: elastic quota ${quotaName} not found`, 400);
  }
  const names = new Set(Object.keys(quota.max));
  if (![...names].some((name) => COUNTED.has(name))) return { allowed: true };

  let requested: Amounts;
  try {
    requested = new Map(
      [...podRequests(pod, 'throw')].filter(([key, value]) => names.has(key) && value !== 0n),
    );
  } catch (error) {
    if (!(error instanceof QuantityFieldError)) throw error;
    return refuse(`quota admission: ${error.message}`, 400);
  }
  if (requested.size === 0) return { allowed: true };

  const limitText = quota.admission ?? quota.max;
  const limitPath = quota.admission ? `metadata.annotations[${QUOTA_ANNOTATIONS.admission}]` : 'spec.max';
  const used = state.quotaUsed(quotaName);
  const exceeded: string[] = [];
  const limits: Amounts = new Map();
  for (const [key, text] of Object.entries(limitText)) {
    const asked = requested.get(key);
    if (asked === undefined) continue;
    let limit: bigint;
    try {
      limit = quantityAt(text, `${limitPath}[${key}]`);
    } catch (error) {
      if (!(error instanceof QuantityFieldError)) throw error;
      // The pod cannot be checked against a limit that cannot be read: it is refused, naming the
      // quota's field, which whoever keeps that quota has to fix.
      return refuse(`quota admission: elastic quota ${quota.namespace}/${quotaName}: ${error.message}`, 400);
    }
    limits.set(key, limit);
    if ((used.get(key) ?? 0n) + asked > limit) exceeded.push(key);
  }
  if (exceeded.length > 0) {
    exceeded.sort();
    return refuse(
      `spec.containers[*].resources.requests: exceeded quota: ${quota.namespace}/${quotaName}, ` +
        `requested: ${list(exceeded, requested)}, used: ${list(exceeded, used)}, limited: ${list(exceeded, limits, limitText)}`,
    );
  }
  return {
    allowed: true,
    reserve: { key: `${namespace}/${podName}`, quota: quotaName, requests: requested },
  };
}
