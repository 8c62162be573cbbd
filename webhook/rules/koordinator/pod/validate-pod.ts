/**
 * /validate-pod: Koordinator's chain, in its order, stopping at the first refusal: the
 * reserve-pod annotation, the colocation checks, then the quota meta check and quota
 * admission, then the device requests (gated), then the required labels of the enhanced
 * validation (gated). Upstream:
 * validating_handler.go;
 * every message: docs/rules/validate-pod.md.
 *
 * The colocation checks are the step `colocation`: a refusal of theirs carries what the rest of
 * the chain decides without it, for an admin who enforces that step apart from the webhook
 * (`validate-pod/colocation=warn` beside Koordinator v1.7.0, which discarded it; v1.8.0 enforces it).
 */
import type { Rule } from '../../../state.js';
import {
  checkColocation,
  checkReservePod,
  type ColocationOptions,
} from '../colocation/validate-colocation.js';
import { checkDeviceRequests } from '../device/validate-device.js';
import {
  decisionOf,
  findings,
  firstRefusal,
  PASSED,
  stepRefusal,
  type Findings,
} from '../../shared/findings.js';
import { checkPodQuota, type PodQuotaFindings, type PodQuotaOptions } from '../quota/pod-quota.js';
import { checkEnhancedValidation } from './enhanced-validation.js';
import { KINDS } from '../../../kinds.js';

export type PodValidationOptions = ColocationOptions &
  PodQuotaOptions & {
    /** Gate ValidatePodDeviceResource. */
    validateDeviceRequests: boolean;
    /** Gate EnablePodEnhancedValidator. */
    enhancedValidation: boolean;
    /** Where pod-enhanced-validator-config lives. */
    enhancedValidationNamespace: string;
  };

/** The step of /validate-pod an admin can enforce apart from it (`validate-pod/colocation`). */
export const COLOCATION_STEP = 'colocation';

export function podValidator(options: PodValidationOptions): Rule {
  return (request, state) => {
    if (request.subResource || request.resource.resource !== KINDS.pod.plural) return decisionOf(PASSED);
    const reservePod = checkReservePod(request);
    if (reservePod.errors.length > 0) return decisionOf(reservePod);
    const colocation = checkColocation(request, options);
    let reserve: PodQuotaFindings['reserve'];
    const rest = firstRefusal([
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
    const restDecision = decisionOf(findings(rest.errors, [...colocation.warnings, ...rest.warnings]));
    // Only an admitted pod counts against its quota.
    const otherwise = restDecision.allowed && reserve ? { ...restDecision, reserve } : restDecision;
    if (colocation.errors.length === 0) return otherwise;
    return stepRefusal(COLOCATION_STEP, decisionOf(colocation), otherwise);
  };
}
