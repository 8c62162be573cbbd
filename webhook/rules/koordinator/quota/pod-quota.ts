/**
 * The quota checks of /validate-pod, Koordinator's, with its messages:
 * - meta check (always on): a pod cannot count against a parent quota, and its preemptible
 *   label is immutable;
 * - quota admission (gate EnableQuotaAdmission; UPDATE also needs EnableQuotaAdmissionOnUpdate):
 *   a pod whose requests would push its quota's use past the limit (the admission annotation,
 *   else spec.max) is refused, naming the quota, resource, requested, used and limit.
 * Upstream: pod_check.go
 * and pkg/webhook/pod/validating/evaluate_quota.go; every message: docs/rules/validate-pod.md.
 *
 * Admission writes nothing to the cluster: an allowed pod comes back as a `reserve` effect, which
 * the server records in the store's in-memory ledger until the pod watch sees the pod.
 */
import type { AdmissionRequest, Decision, JsonValue } from '../../../admission/types.js';
import { atField, FieldPath, type FieldError } from '../../shared/field-errors.js';
import { findings, PASSED, type Findings } from '../../shared/findings.js';
import type { StateSnapshot } from '../../../state.js';
import { labelsOf } from '../../../util/json.js';
import { formatQuantity } from '../../../util/quantity.js';
import { quantityAt } from '../../shared/quantity-at.js';
import { DEFAULT_QUOTA, QUOTA_ANNOTATIONS, QUOTA_LABELS, ROOT_QUOTA, SYSTEM_QUOTA } from './keys.js';
import { podRequests, type Amounts } from './pod-requests.js';
import { quotaNameOf } from './resolve-quota.js';

export interface PodQuotaOptions {
  quotaAdmission: boolean;
  quotaAdmissionOnUpdate: boolean;
}

/** The resources quota admission counts (Koordinator's evaluator set). */
export const COUNTED = new Set([
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

const LABELS = FieldPath.of('metadata', 'labels');
const QUOTA_NAME = LABELS.key(QUOTA_LABELS.name);
const ANNOTATIONS = FieldPath.of('metadata', 'annotations');

/** What the quota checks found, and the pod to count against its quota if it is admitted. */
export interface PodQuotaFindings extends Findings {
  reserve?: Decision['reserve'];
}

const refused = (path: FieldPath, message: string): PodQuotaFindings => findings([atField(path, message)]);

/** A quantity the checks cannot read: `<what>: <path>: <why>`. */
const unreadable = (what: string, error: FieldError): PodQuotaFindings =>
  refused(FieldPath.of(what), error.toString());

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
): PodQuotaFindings {
  const pod = request.object;
  if (!pod || (request.operation !== 'CREATE' && request.operation !== 'UPDATE')) return PASSED;
  const namespace = request.namespace ?? '';
  const labels = labelsOf(pod);
  const podName = request.name ?? (typeof pod.metadata.name === 'string' ? pod.metadata.name : '');

  if (request.operation === 'UPDATE') {
    const before = labelsOf(request.oldObject)[QUOTA_LABELS.preemptible];
    if (before !== labels[QUOTA_LABELS.preemptible]) {
      return refused(LABELS.key(QUOTA_LABELS.preemptible), 'Preemptible label is forbidden modify now.');
    }
  }

  const quotaName = quotaNameOf(labels, namespace, state);
  const quota = state.elasticQuota(quotaName);
  if (quotaName !== DEFAULT_QUOTA && quota?.isParent) {
    return refused(
      QUOTA_NAME,
      `pod can not be linked to a parentQuotaGroup,quota:${quotaName}, pod:${podName}`,
    );
  }

  if (!options.quotaAdmission) return PASSED;
  if (request.operation === 'UPDATE') {
    if (!options.quotaAdmissionOnUpdate) return PASSED;
    // Only a move to another quota is evaluated (the old quota is not credited, as in Koordinator).
    if (quotaNameOf(labelsOf(request.oldObject), namespace, state) === quotaName) return PASSED;
  }
  if ([DEFAULT_QUOTA, SYSTEM_QUOTA, ROOT_QUOTA, ''].includes(quotaName)) return PASSED;
  if (!quota) {
    return refused(QUOTA_NAME, `elastic quota ${quotaName} not found`);
  }
  const names = new Set(Object.keys(quota.max));
  if (![...names].some((name) => COUNTED.has(name))) return PASSED;

  const unreadableRequests: FieldError[] = [];
  const requested: Amounts = new Map(
    [...podRequests(pod, unreadableRequests)].filter(([key, value]) => names.has(key) && value !== 0n),
  );
  if (unreadableRequests[0]) return unreadable('quota admission', unreadableRequests[0]);
  if (requested.size === 0) return PASSED;

  const limitText = quota.admission ?? quota.max;
  const limitPath = quota.admission
    ? ANNOTATIONS.key(QUOTA_ANNOTATIONS.admission)
    : FieldPath.of('spec', 'max');
  const used = state.quotaUsed(quotaName);
  const exceeded: string[] = [];
  const limits: Amounts = new Map();
  for (const [key, text] of Object.entries(limitText)) {
    const asked = requested.get(key);
    if (asked === undefined) continue;
    const read = quantityAt(text, limitPath.key(key));
    // The pod cannot be checked against a limit that cannot be read: it is refused, naming the
    // quota's field, which whoever keeps that quota has to fix.
    if (!read.ok)
      return unreadable(`quota admission: elastic quota ${quota.namespace}/${quotaName}`, read.error);
    const limit = read.value;
    limits.set(key, limit);
    if ((used.get(key) ?? 0n) + asked > limit) exceeded.push(key);
  }
  if (exceeded.length > 0) {
    exceeded.sort();
    return refused(
      FieldPath.of('spec', 'containers[*]', 'resources', 'requests'),
      `exceeded quota: ${quota.namespace}/${quotaName}, ` +
        `requested: ${list(exceeded, requested)}, used: ${list(exceeded, used)}, limited: ${list(exceeded, limits, limitText)}`,
    );
  }
  return { ...PASSED, reserve: { key: `${namespace}/${podName}`, quota: quotaName, requests: requested } };
}
