/**
 * The options Koordinator's pod webhooks read from the context: /mutate-pod's, and those
 * /validate-pod and /validate-pod-resize share (so their quota admission counts alike).
 */
import { replaceResourcesCounted } from '../rule-gates.js';
import type { BuildContext } from './define.js';

export function podMutation(context: BuildContext) {
  return {
    roll: context.roll,
    skipMutatingResources: context.gates.ColocationProfileSkipMutatingResources,
    skipExtendedResourceSpec: context.gates.DisableExtendedResourceSpec,
    multiQuotaTree: context.gates.MultiQuotaTree,
    skipDeviceResourceSpec: context.gates.DisableDeviceResourceSpec,
  };
}

export function podValidation(context: BuildContext) {
  return {
    skipValidatingPriority: context.gates.ColocationProfileSkipValidatingPriority,
    quotaAdmission: context.gates.EnableQuotaAdmission,
    quotaAdmissionOnUpdate: context.gates.EnableQuotaAdmissionOnUpdate,
    replaceResources: replaceResourcesCounted(context.gates),
    validateDeviceRequests: context.gates.ValidatePodDeviceResource,
    enhancedValidation: context.gates.EnablePodEnhancedValidator,
    enhancedValidationNamespace: context.koordinatorNamespace,
  };
}
