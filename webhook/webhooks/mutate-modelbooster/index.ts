/** /mutate/modelbooster: Kthena v1.0.0, as its charts register it: failurePolicy Fail, 30 s, CREATE and UPDATE. */
import { defineWebhook, matching } from '../define.js';
import { KINDS } from '../../kinds.js';
import { mutateModelBooster } from '../../rules/kthena/index.js';

export const webhook = defineWebhook({
  name: 'mutate-modelbooster',
  path: '/mutate/modelbooster',
  type: 'mutating',
  resourceRules: [matching(KINDS.modelBooster, ['CREATE', 'UPDATE'])],
  failurePolicy: 'Fail',
  timeoutSeconds: 30,
  reinvocationPolicy: 'IfNeeded',
  featureGate: 'ModelBoosterMutatingWebhook',
  docs: {
    page: 'mutate-modelbooster.md',
    entryPoint: 'rules/kthena/model-booster/mutate-model-booster.ts',
    checks:
      '`kthena/types/workload.ts` (decoding, with `kthena/core-types.ts`, `webhook/util/go-decode/`), `kthena/denials.ts`',
  },
  build: () => ({ handler: mutateModelBooster }),
});
