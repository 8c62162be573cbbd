/** /mutate/autoscalingpolicy: Kthena v1.0.0, as its charts register it: failurePolicy Fail, 30 s, CREATE and UPDATE. */
import { defineWebhook, matching } from '../define.js';
import { KINDS } from '../../kinds.js';
import { mutateWorkloadAutoscalingPolicy } from '../../rules/kthena/index.js';

export const webhook = defineWebhook({
  name: 'mutate-autoscalingpolicy',
  path: '/mutate/autoscalingpolicy',
  type: 'mutating',
  resourceRules: [matching(KINDS.autoscalingPolicy, ['CREATE', 'UPDATE'])],
  failurePolicy: 'Fail',
  timeoutSeconds: 30,
  reinvocationPolicy: 'IfNeeded',
  featureGate: 'AutoscalingPolicyMutatingWebhook',
  docs: {
    page: 'mutate-autoscalingpolicy.md',
    entryPoint: 'rules/kthena/autoscaling-policy/mutate-autoscaling-policy.ts',
    checks: '`kthena/autoscaling-policy/behavior-defaults.ts`, `kthena/types/workload.ts`',
  },
  build: () => ({ handler: mutateWorkloadAutoscalingPolicy }),
});
