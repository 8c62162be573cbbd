/**
 * Kthena's webhooks, one rule each: Kthena v1.0.0's (ModelBooster, AutoscalingPolicy,
 * ModelServing, ModelRoute, ModelServer, in folders per resource) and the registry.volcano.sh
 * ones (Model, AutoscalingPolicy, AutoscalingPolicyBinding) of an unreleased commit. Where a port
 * departs from Kthena is on each webhook's page in docs/rules/.
 */
export { mutateModelBooster } from './model-booster/mutate-model-booster.js';
export { validateModelBooster } from './model-booster/validate-model-booster.js';
export { mutateWorkloadAutoscalingPolicy } from './autoscaling-policy/mutate-autoscaling-policy.js';
export { validateWorkloadAutoscalingPolicy } from './autoscaling-policy/validate-autoscaling-policy.js';
export { validateModelServing } from './model-serving/validate-model-serving.js';
export { validateModelRoute } from './router/validate-model-route.js';
export { validateModelServer } from './router/validate-model-server.js';
export { mutateAutoscalingPolicy } from './mutate-autoscaling-policy.js';
export { mutateModel } from './mutate-model.js';
export { validateAutoscalingPolicyBinding } from './validate-autoscaling-policy-binding.js';
export { validateAutoscalingPolicy } from './validate-autoscaling-policy.js';
export { validateModel } from './validate-model.js';
