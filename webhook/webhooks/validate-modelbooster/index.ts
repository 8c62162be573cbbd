/** /validate/modelbooster: Kthena v1.0.0, as its charts register it: failurePolicy Fail, 30 s, CREATE and UPDATE. */
import { defineWebhook, matching } from '../define.js';
import { KINDS } from '../../kinds.js';
import { validateModelBooster } from '../../rules/kthena/index.js';

export const webhook = defineWebhook({
  name: 'validate-modelbooster',
  path: '/validate/modelbooster',
  type: 'validating',
  resourceRules: [matching(KINDS.modelBooster, ['CREATE', 'UPDATE'])],
  failurePolicy: 'Fail',
  timeoutSeconds: 30,
  featureGate: 'ModelBoosterValidatingWebhook',
  docs: {
    page: 'validate-modelbooster.md',
    entryPoint: 'rules/kthena/model-booster/validate-model-booster.ts',
    checks:
      '`kthena/worker-checks.ts`, `kthena/types/workload.ts`, `kthena/go-values.ts`, `kthena/denials.ts`',
  },
  build: () => ({ handler: validateModelBooster }),
});
