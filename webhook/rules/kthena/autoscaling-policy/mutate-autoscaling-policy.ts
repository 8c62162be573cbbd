/**
 * /mutate/autoscalingpolicy: Kthena v1.0.0's AutoscalingPolicy defaults (behavior-defaults.ts).
 */
import { decodeAutoscalingPolicy } from '../types/workload.js';
import { behaviorDefaulter } from './behavior-defaults.js';

export const mutateWorkloadAutoscalingPolicy = behaviorDefaulter(decodeAutoscalingPolicy);
