/**
 * Kthena's registry webhooks (Model, AutoscalingPolicy, AutoscalingPolicyBinding), one rule each.
 * Where this port departs from Kthena (its int32 sums, the whole request echoed back in its replies,
 * its `null` patch, its plain-text answer to a malformed object) is listed in DIVERGENCES.md.
 */
export { mutateAutoscalingPolicy } from './mutate-autoscaling-policy.js';
export { mutateModel } from './mutate-model.js';
export { validateAutoscalingPolicyBinding } from './validate-autoscaling-policy-binding.js';
export { validateAutoscalingPolicy } from './validate-autoscaling-policy.js';
export { validateModel } from './validate-model.js';
