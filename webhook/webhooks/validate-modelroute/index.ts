/** /validate/modelroute: Kthena v1.0.0, as its charts register it: failurePolicy Fail, 30 s, CREATE and UPDATE. */
import { defineWebhook, matching } from '../define.js';
import { KINDS } from '../../kinds.js';
import { validateModelRoute } from '../../rules/kthena/index.js';

export const webhook = defineWebhook({
  name: 'validate-modelroute',
  path: '/validate/modelroute',
  type: 'validating',
  resourceRules: [matching(KINDS.modelRoute, ['CREATE', 'UPDATE'])],
  failurePolicy: 'Fail',
  timeoutSeconds: 30,
  featureGate: 'ModelRouteValidatingWebhook',
  docs: {
    page: 'validate-modelroute.md',
    entryPoint: 'rules/kthena/router/validate-model-route.ts',
    checks: '`webhook/util/go-regexp.ts`, `kthena/types/networking.ts`',
  },
  build: () => ({ handler: validateModelRoute }),
});
