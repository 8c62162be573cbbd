/**
 * /validate-pod-resize: quota admission for an in-place resize (the `pods/resize` subresource,
 * Kubernetes 1.33 on), which neither Koordinator's configuration nor /validate-pod matches, so a
 * running pod could otherwise grow past its ElasticQuota's max unchecked. Kubernetes' own
 * ResourceQuota admission checks resizes; this does the same against the ElasticQuota, with
 * Koordinator's exceeded-quota message (docs/rules/validate-pod-resize.md).
 *
 * The pod's requests are counted as the store counts every live pod (pod-requests.ts,
 * followStatus): a resize that grows a resource is checked against what the quota's other pods
 * use; one that shrinks or keeps every resource is never refused.
 */
import type { Rule } from '../../../state.js';
import type { StateSnapshot } from '../../../state.js';
import type { AdmissionRequest } from '../../../admission/types.js';
import { atField, FieldPath, type FieldError } from '../../shared/field-errors.js';
import { decisionOf, findings, PASSED } from '../../shared/findings.js';
import { labelsOf } from '../../../util/json.js';
import { DEFAULT_QUOTA, ROOT_QUOTA, SYSTEM_QUOTA } from './keys.js';
import { COUNTED, exceededQuota, type PodQuotaFindings } from './pod-quota.js';
import { podRequestsFormatted, type Amounts } from './pod-requests.js';
import { quotaNameOf } from './resolve-quota.js';
import { transformReplaceResources } from './replace-resources.js';
import { KINDS } from '../../../kinds.js';

export interface PodResizeOptions {
  /** Gate EnableQuotaAdmission: resizes are checked when creates are. */
  quotaAdmission: boolean;
  /** As quota admission counts a pod (PodQuotaOptions), so a resize is counted the same way. */
  replaceResources?: boolean;
}

export const RESIZE_SUBRESOURCE = 'resize';

export function podResizeValidator(options: PodResizeOptions): Rule {
  return (request, state) => {
    const found = checkPodResize(request, state, options);
    const decision = decisionOf(found);
    return decision.allowed && found.reserve ? { ...decision, reserve: found.reserve } : decision;
  };
}

export function checkPodResize(
  request: AdmissionRequest,
  state: StateSnapshot,
  options: PodResizeOptions,
): PodQuotaFindings {
  const pod = request.object;
  if (!options.quotaAdmission || !pod || request.operation !== 'UPDATE') return PASSED;
  if (request.resource.resource !== KINDS.pod.plural || request.subResource !== RESIZE_SUBRESOURCE)
    return PASSED;
  const namespace = request.namespace ?? '';
  const quotaName = quotaNameOf(labelsOf(pod), namespace, state);
  if ([DEFAULT_QUOTA, SYSTEM_QUOTA, ROOT_QUOTA, ''].includes(quotaName)) return PASSED;
  // A pod whose quota is gone, or counts nothing, has no max to grow past.
  const quota = state.elasticQuota(quotaName);
  if (!quota) return PASSED;
  const names = new Set(Object.keys(quota.max));
  if (![...names].some((name) => COUNTED.has(name))) return PASSED;

  const unreadable: FieldError[] = [];
  const counted = options.replaceResources ? transformReplaceResources(pod) : pod;
  const asked = podRequestsFormatted(counted, unreadable, { followStatus: true });
  if (unreadable[0]) return findings([atField(FieldPath.of('quota admission'), unreadable[0].toString())]);
  const podName =
    typeof pod.metadata.name === 'string' && pod.metadata.name !== ''
      ? pod.metadata.name
      : (request.name ?? '');
  const key = `${namespace}/${podName}`;
  // What the store counts for this pod is in `used` already; a pod the watch has not seen yet
  // is not, and then its new size must fit beside everything counted.
  const own = state.podQuotaUsage(key);
  const held = own?.quota === quotaName ? own.requests : new Map<string, bigint>();
  const grown = new Map(
    [...asked].filter(([name, amount]) => names.has(name) && amount.nanos > (held.get(name) ?? 0n)),
  );
  if (grown.size === 0) return PASSED;
  const others: Amounts = new Map(state.quotaUsed(quotaName));
  for (const [name, amount] of held) others.set(name, (others.get(name) ?? 0n) - amount);
  const refusal = exceededQuota(quota, grown, others);
  if (refusal) return refusal;
  const requests: Amounts = new Map(
    [...asked].filter(([name]) => names.has(name)).map(([name, amount]) => [name, amount.nanos]),
  );
  return { ...PASSED, reserve: { key, quota: quotaName, requests } };
}
