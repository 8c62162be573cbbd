/** /validate-workload-ai-v1alpha1-modelserving: Kthena v1.0.0, as its charts register it: failurePolicy Fail, 30 s, CREATE and UPDATE. */
import { defineWebhook, matching } from '../define.js';
import { KINDS } from '../../kinds.js';
import { validateModelServing } from '../../rules/kthena/index.js';

export const webhook = defineWebhook({
  name: 'validate-modelserving',
  path: '/validate-workload-ai-v1alpha1-modelserving',
  type: 'validating',
  resourceRules: [matching(KINDS.modelServing, ['CREATE', 'UPDATE'])],
  failurePolicy: 'Fail',
  timeoutSeconds: 30,
  featureGate: 'ModelServingValidatingWebhook',
  docs: {
    page: 'validate-workload-ai-v1alpha1-modelserving.md',
    entryPoint: 'rules/kthena/model-serving/validate-model-serving.ts',
    checks: '`kthena/model-serving/int-or-percent.ts`, `kthena/worker-checks.ts`, `kthena/types/workload.ts`',
  },
  build: () => ({ handler: validateModelServing }),
});
