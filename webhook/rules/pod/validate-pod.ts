/**
 * /validate-pod: Koordinator's chain, in its order, stopping at the first refusal: the
 * reserve-pod annotation and the colocation checks (§2.2), then the quota meta check and quota
 * admission (§2.3). Device and enhanced validation (§2.4, §2.5) join the chain with their rules.
 */
import type { Rule } from '../../state.js';
import { checkColocation, type ColocationOptions } from '../colocation/validate-colocation.js';
import { checkPodQuota, type PodQuotaOptions } from '../quota/pod-quota.js';

export type PodValidationOptions = ColocationOptions & PodQuotaOptions;

export function podValidator(options: PodValidationOptions): Rule {
  return (request, state) => {
    if (request.subResource || request.resource.resource !== 'pods') return { allowed: true };
    return checkColocation(request, options) ?? checkPodQuota(request, state, options);
  };
}
