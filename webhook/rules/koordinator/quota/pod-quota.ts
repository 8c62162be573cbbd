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
import type { AdmissionRequest, Decision } from '../../../admission/types.js';
import { atField, FieldPath, type FieldError } from '../../shared/field-errors.js';
import { findings, PASSED, type Findings } from '../../shared/findings.js';
import type { StateSnapshot } from '../../../state.js';
import { labelsOf } from '../../../util/json.js';
import { own } from '../../../util/own.js';
import {
  canonicalQuantity,
  goQuantityString,
  writtenAs,
  type FormattedAmount,
} from '../../../util/quantity.js';
import { quantityAt } from '../../shared/quantity-at.js';
import { DEFAULT_QUOTA, QUOTA_ANNOTATIONS, QUOTA_LABELS, ROOT_QUOTA, SYSTEM_QUOTA } from './keys.js';
import { podRequestsFormatted, type Amounts } from './pod-requests.js';
import type { QuotaView } from './quota-view.js';
import { transformReplaceResources } from './replace-resources.js';
import { quotaNameOf } from './resolve-quota.js';

export interface PodQuotaOptions {
  quotaAdmission: boolean;
  quotaAdmissionOnUpdate: boolean;
  /**
   * Gates ElasticQuotaEvaluationTransformPod and ReplaceResourcesTransformer, both on: the pod is
   * counted as its replace-resources annotation renames it (replace-resources.ts).
   */
  replaceResources?: boolean;
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

/**
 * The exceeded resources as Koordinator's prettyPrint lists them: `k=v` joined by `,`, only the
 * keys `amounts` holds, each as Go prints the quantity.
 */
const list = (keys: readonly string[], text: (key: string) => string | undefined): string =>
  keys
    .flatMap((key) => {
      const value = text(key);
      return value === undefined ? [] : [`${key}=${value}`];
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
  // The object's name, as Koordinator's message names it: for a generateName create the API server
  // names the pod before validation, while the review's name stays empty.
  const podName =
    typeof pod.metadata.name === 'string' && pod.metadata.name !== ''
      ? pod.metadata.name
      : (request.name ?? '');

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
  const formatted = new Map(
    [
      ...podRequestsFormatted(
        options.replaceResources ? transformReplaceResources(pod) : pod,
        unreadableRequests,
      ),
    ].filter(([key, value]) => names.has(key) && value.nanos !== 0n),
  );
  if (unreadableRequests[0]) return unreadable('quota admission', unreadableRequests[0]);
  if (formatted.size === 0) return PASSED;
  const requested: Amounts = new Map([...formatted].map(([key, value]) => [key, value.nanos]));
  const refusal = exceededQuota(quota, formatted, state.quotaUsed(quotaName));
  if (refusal) return refusal;
  return { ...PASSED, reserve: { key: `${namespace}/${podName}`, quota: quotaName, requests: requested } };
}

/**
 * Koordinator's evaluator: the refusal when `requested` on top of `used` passes the quota's
 * limit (its admission annotation, else spec.max) in some resource, or undefined when it fits.
 * Only the resources `requested` names are checked.
 */
export function exceededQuota(
  quota: QuotaView,
  formatted: ReadonlyMap<string, FormattedAmount>,
  used: ReadonlyMap<string, bigint>,
): PodQuotaFindings | undefined {
  const quotaName = quota.name;
  const limitText = quota.admission ?? quota.max;
  const limitPath = quota.admission
    ? ANNOTATIONS.key(QUOTA_ANNOTATIONS.admission)
    : FieldPath.of('spec', 'max');
  const exceeded: string[] = [];
  const limits: Amounts = new Map();
  for (const [key, text] of Object.entries(limitText)) {
    const asked = formatted.get(key)?.nanos;
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
    const asked = (key: string): FormattedAmount | undefined => formatted.get(key);
    // What the quota's pods use is a sum in nano-units: printed in the format of the pod's own
    // request, where Koordinator prints its child-request annotation in the format of the first
    // pod it admitted (docs/rules/validate-pod.md). A resource nothing uses is left out, as there.
    const usedText = (key: string): string | undefined => {
      const amount = used.get(key) ?? 0n;
      return amount === 0n ? undefined : goQuantityString(amount, asked(key)?.format ?? 'DecimalSI');
    };
    const askedText = (key: string): string | undefined => {
      const amount = asked(key);
      return amount && goQuantityString(amount.nanos, amount.format);
    };
    const limitOf = (key: string): string | undefined => {
      const text = own(limitText, key);
      return text === undefined ? undefined : canonicalQuantity(writtenAs(text));
    };
    return refused(
      FieldPath.of('spec', 'containers[*]', 'resources', 'requests'),
      `exceeded quota: ${quota.namespace}/${quotaName}, ` +
        `requested: ${list(exceeded, askedText)}, used: ${list(exceeded, usedText)}, limited: ${list(exceeded, limitOf)}`,
    );
  }
  return undefined;
}
