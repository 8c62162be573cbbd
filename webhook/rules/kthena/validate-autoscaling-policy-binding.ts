/**
 * /validate-registry-volcano-sh-v1alpha1-autoscalingpolicybinding: Kthena's binding validator.
 * Exactly one of optimizerConfiguration and scalingConfiguration must be set (the CRD's CEL rule
 * says the same and runs first, so in a cluster this part rarely speaks), and the referenced
 * AutoscalingPolicy must exist in the binding's namespace. Paths keep Kthena's capitalised Go
 * names (`spec.ScalingConfiguration`, `spec.PolicyRef`).
 */
import type { AdmissionRequest } from '../../admission/types.js';
import type { Rule, StateSnapshot } from '../../state.js';
import { decisionOf, type Findings, findings, PASSED } from '../shared/findings.js';
import {
  type FieldError,
  FieldPath,
  forbidden,
  internal,
  invalid,
  required,
} from '../shared/field-errors.js';
import { decodeFailed, validationFailed } from './denials.js';
import { type AutoscalingPolicyBinding, decodeAutoscalingPolicyBinding } from './model-types.js';

function configurationErrors(binding: AutoscalingPolicyBinding): FieldError[] {
  const optimizer = binding.spec?.optimizerConfiguration !== undefined;
  const scaling = binding.spec?.scalingConfiguration !== undefined;
  const path = FieldPath.of('spec', 'ScalingConfiguration');
  if (!optimizer && !scaling) {
    return [
      required(path, 'spec.ScalingConfiguration should be set if spec.OptimizerConfiguration does not exist'),
    ];
  }
  if (optimizer && scaling) {
    return [
      forbidden(
        path,
        'both spec.OptimizerConfiguration and spec.ScalingConfiguration can not be set at the same time',
      ),
    ];
  }
  return [];
}

function policyErrors(
  binding: AutoscalingPolicyBinding,
  request: AdmissionRequest,
  state: StateSnapshot,
): FieldError[] {
  const path = FieldPath.of('spec', 'PolicyRef');
  const name = binding.spec?.policyRef?.name ?? '';
  // client-go's refusal of a GET without a name, which Kthena reports as an internal error.
  if (name === '') return [internal(path, 'resource name may not be empty')];
  // Kthena looks in the object's namespace; should the object not carry one, the request's is
  // where the binding is being created.
  const namespace = binding.metadata?.namespace || request.namespace || '';
  if (state.autoscalingPolicy(namespace, name)) return [];
  return [invalid(path, name, `autoscaling policy resource ${name} does not exist`)];
}

/** Every error, in Kthena's order: the configuration first, then the policy it refers to. */
function checkAutoscalingPolicyBinding(
  binding: AutoscalingPolicyBinding,
  request: AdmissionRequest,
  state: StateSnapshot,
): Findings {
  return findings([...configurationErrors(binding), ...policyErrors(binding, request, state)]);
}

export const validateAutoscalingPolicyBinding: Rule = (request, state) => {
  if (request.operation === 'DELETE' || !request.object) return decisionOf(PASSED);
  const decoded = decodeAutoscalingPolicyBinding(request.object);
  if (!decoded.ok) return decisionOf(findings(decoded.error), decodeFailed);
  return decisionOf(checkAutoscalingPolicyBinding(decoded.value, request, state), validationFailed);
};
