/** /validate-configmap's example reviews and the inputs of its match condition. */
import type { WebhookExamples } from '../../../test/harness/webhook-examples.js';
import { configMapFixtures, request } from '../../../test/fuzz/seed-kit.js';
import { field, configMapInputs } from '../../../test/harness/condition-inputs.js';
import { KINDS } from '../../kinds.js';
import { webhook } from './index.js';

export const examples: WebhookExamples = {
  seeds: () => {
    const { slo, sloHot, tier, enhanced } = configMapFixtures();
    const { path } = webhook;
    return [
      {
        path,
        label: 'slo-controller-config CREATE',
        request: request(KINDS.configMap, 'CREATE', slo),
        hot: sloHot,
      },
      {
        path,
        label: 'slo-controller-config UPDATE',
        request: request(KINDS.configMap, 'UPDATE', slo),
        hot: sloHot,
      },
      {
        path,
        label: 'gpu-tier-mapping UPDATE',
        request: request(KINDS.configMap, 'UPDATE', tier),
        hot: [{ at: ['object', 'data', 'mapping.yaml'], kind: 'yaml-text' }],
      },
      {
        path,
        label: 'pod-enhanced-validator-config CREATE',
        request: request(KINDS.configMap, 'CREATE', enhanced),
        hot: [
          { at: ['object', 'data', 'rules'], kind: 'json-text' },
          { at: ['object', 'data', 'enable'], kind: 'label-value' },
        ],
      },
    ];
  },
  conditions: {
    'managed-configmaps': {
      inputs: configMapInputs,
      meaning: ({ request }, context) =>
        field(request, 'operation') !== 'DELETE' &&
        context.configMaps.some(
          ({ namespace, name }) =>
            field(request, 'namespace') === namespace && field(request, 'name') === name,
        ),
    },
  },
};
