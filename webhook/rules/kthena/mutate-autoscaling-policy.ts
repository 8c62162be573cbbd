/**
 * /mutate-registry-volcano-sh-v1alpha1-autoscalingpolicy: Kthena's AutoscalingPolicy defaults
 * (autoscaling-policy/behavior-defaults.ts), on the registry kind.
 */
import { behaviorDefaulter } from './autoscaling-policy/behavior-defaults.js';
import { decodeAutoscalingPolicy } from './model-types.js';

export const mutateAutoscalingPolicy = behaviorDefaulter(decodeAutoscalingPolicy);
