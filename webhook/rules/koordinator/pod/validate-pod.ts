/**
 * /validate-pod: Koordinator's chain, in its order, stopping at the first refusal: the
 * reserve-pod annotation and the colocation checks, then the quota meta check and quota
 * admission, then the device requests (gated), then the required labels of the enhanced
 * validation (gated). Upstream:
 * validating_handler.go;
 * every message: docs/rules/validate-pod.md.
 */
import type { Rule } from '../../../state.js';
import { checkColocation, type ColocationOptions } from '../colocation/validate-colocation.js';
import { checkDeviceRequests } from '../device/validate-device.js';
import { decisionOf, firstRefusal, PASSED, type Findings } from '../../shared/findings.js';
import { checkPodQuota, type PodQuotaFindings, type PodQuotaOptions } from '../quota/pod-quota.js';
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
    if (request.subResource || request.resource.resource !== 'pods') return decisionOf(PASSED);
    let reserve: PodQuotaFindings['reserve'];
    const found = firstRefusal([
      (): Findings => checkColocation(request, options),
      (): Findings => {
        const quota = checkPodQuota(request, state, options);
        reserve = quota.reserve;
        return quota;
      },
      (): Findings => (options.validateDeviceRequests ? checkDeviceRequests(request) : PASSED),
      (): Findings =>
        options.enhancedValidation
          ? checkEnhancedValidation(request, state, options.enhancedValidationNamespace)
          : PASSED,
    ]);
    const decision = decisionOf(found);
    // Only an admitted pod counts against its quota.
    return decision.allowed && reserve ? { ...decision, reserve } : decision;
  };
}
