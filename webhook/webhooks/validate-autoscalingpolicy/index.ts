/** /validate/autoscalingpolicy: Kthena v1.0.0, as its charts register it: failurePolicy Fail, 30 s, CREATE and UPDATE. */
import { defineWebhook, matching } from '../define.js';
import { KINDS } from '../../kinds.js';
import { validateWorkloadAutoscalingPolicy } from '../../rules/kthena/index.js';

export const webhook = defineWebhook({
  name: 'validate-autoscalingpolicy',
  path: '/validate/autoscalingpolicy',
  type: 'validating',
  resourceRules: [matching(KINDS.autoscalingPolicy, ['CREATE', 'UPDATE'])],
  failurePolicy: 'Fail',
  timeoutSeconds: 30,
  featureGate: 'AutoscalingPolicyValidatingWebhook',
  docs: {
    page: 'validate-autoscalingpolicy.md',
    entryPoint: 'rules/kthena/autoscaling-policy/validate-autoscaling-policy.ts',
    checks: '`kthena/autoscaling-policy/quantities.ts`, `kthena/types/workload.ts`, `kthena/go-values.ts`',
  },
  build: () => ({ handler: validateWorkloadAutoscalingPolicy }),
});
