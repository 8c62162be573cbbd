/** /mutate-node-status: Koordinator's node resource amplification. */
import { defineWebhook, matching } from '../define.js';
import { KINDS } from '../../kinds.js';
import { amplifyNodeStatus } from '../../rules/koordinator/node/amplify-node-status.js';

export const webhook = defineWebhook({
  name: 'mutate-node-status',
  path: '/mutate-node-status',
  type: 'mutating',
  resourceRules: [matching(KINDS.node, ['CREATE', 'UPDATE'], 'status')],
  failurePolicy: 'Ignore',
  timeoutSeconds: 10,
  reinvocationPolicy: 'Never',
  featureGate: 'NodeStatusMutatingWebhook',
  docs: {
    page: 'mutate-node-status.md',
    entryPoint: 'rules/koordinator/node/amplify-node-status.ts',
    checks: '`koordinator/node/keys.ts`',
  },
  build: () => ({ handler: amplifyNodeStatus }),
});
