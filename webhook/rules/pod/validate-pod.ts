/**
 * /validate-pod: Koordinator's chain, in its order, stopping at the first refusal: the
 * reserve-pod annotation and the colocation checks (§2.2), then the quota meta check and quota
 * admission (§2.3), then the device requests (§2.4, gated), then the required labels of the
 * enhanced validation (§2.5, gated).
 */
import type { Rule } from '../../state.js';
import { checkColocation, type ColocationOptions } from '../colocation/validate-colocation.js';
import { checkDeviceRequests } from '../device/validate-device.js';
import { checkPodQuota, type PodQuotaOptions } from '../quota/pod-quota.js';
import { checkEnhancedValidation } from './enhanced-validation.js';

export type PodValidationOptions = ColocationOptions &
  PodQuotaOptions & {
    /** Gate ValidatePodDeviceResource. */
    validateDeviceRequests: boolean;
    /** Gate EnablePodEnhancedValidator. */
    enhancedValidation: boolean;
    /** Where pod-enhanced-validator-config lives. */
    enhancedValidationNamespace: string;
  };

export function podValidator(options: PodValidationOptions): Rule {
  return (request, state) => {
    if (request.subResource || request.resource.resource !== 'pods') return { allowed: true };
    const colocation = checkColocation(request, options);
    if (colocation) return colocation;
    const quota = checkPodQuota(request, state, options);
    if (!quota.allowed) return quota;
    // A later refusal drops the quota reservation with the decision.
    const device = options.validateDeviceRequests ? checkDeviceRequests(request) : undefined;
    if (device) return device;
    const enhanced = options.enhancedValidation
      ? checkEnhancedValidation(request, state, options.enhancedValidationNamespace)
      : undefined;
    if (!enhanced) return quota;
    if (!enhanced.allowed) return enhanced;
    return { ...quota, warnings: [...(quota.warnings ?? []), ...(enhanced.warnings ?? [])] };
  };
}
