/** /validate/modelserver: Kthena v1.0.0, as its charts register it: failurePolicy Fail, 30 s, CREATE and UPDATE. */
import { defineWebhook, matching } from '../define.js';
import { KINDS } from '../../kinds.js';
import { validateModelServer } from '../../rules/kthena/index.js';

export const webhook = defineWebhook({
  name: 'validate-modelserver',
  path: '/validate/modelserver',
  type: 'validating',
  resourceRules: [matching(KINDS.modelServer, ['CREATE', 'UPDATE'])],
  failurePolicy: 'Fail',
  timeoutSeconds: 30,
  featureGate: 'ModelServerValidatingWebhook',
  docs: {
    page: 'validate-modelserver.md',
    entryPoint: 'rules/kthena/router/validate-model-server.ts',
    checks: '`kthena/types/networking.ts`',
  },
  build: () => ({ handler: validateModelServer }),
});
