/**
 * Kthena v1.0.0's webhooks, one rule each (ModelBooster, AutoscalingPolicy, ModelServing,
 * ModelRoute, ModelServer, in folders per resource). Where a port departs from Kthena is on each
 * webhook's page in docs/rules/.
 */
export { mutateModelBooster } from './model-booster/mutate-model-booster.js';
export { validateModelBooster } from './model-booster/validate-model-booster.js';
export { mutateWorkloadAutoscalingPolicy } from './autoscaling-policy/mutate-autoscaling-policy.js';
export { validateWorkloadAutoscalingPolicy } from './autoscaling-policy/validate-autoscaling-policy.js';
export { validateModelServing } from './model-serving/validate-model-serving.js';
export { validateModelRoute } from './router/validate-model-route.js';
export { validateModelServer } from './router/validate-model-server.js';
