/** /validate-node: Koordinator's node validation (amplification ratios, SLO node strategies). */
import { defineWebhook, matching } from '../define.js';
import { KINDS } from '../../kinds.js';
import { nodeValidator } from '../../rules/koordinator/node/validate-node.js';

export const webhook = defineWebhook({
  name: 'validate-node',
  path: '/validate-node',
  type: 'validating',
  resourceRules: [matching(KINDS.node, ['CREATE', 'UPDATE'])],
  failurePolicy: 'Ignore',
  timeoutSeconds: 10,
  featureGate: 'NodeValidatingWebhook',
  docs: {
    page: 'validate-node.md',
    entryPoint: 'rules/koordinator/node/validate-node.ts',
    checks:
      '`koordinator/slo-config/node-strategy-conflicts.ts`, `koordinator/slo-config/node-selectors.ts`, `koordinator/node/keys.ts`',
  },
  build: (context) => ({
    handler: nodeValidator({
      maxRatio: context.maxAmplificationRatio,
      sloConfigNamespace: context.koordinatorNamespace,
    }),
  }),
});
