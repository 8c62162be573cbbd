/** /mutate-pod-gpu-class's example reviews and the inputs of its match condition. */
import type { WebhookExamples } from '../../../test/harness/webhook-examples.js';
import { podFixtures, request } from '../../../test/fuzz/seed-kit.js';
import { podInputs } from '../../../test/harness/condition-inputs.js';
import type { JsonObject } from '../../admission/types.js';
import { KINDS } from '../../kinds.js';
import { webhook } from './index.js';

export const examples: WebhookExamples = {
  seeds: () => {
    const { gpu, hotGpu } = podFixtures();
    return [
      {
        path: webhook.path,
        label: 'GPU pod in a gold namespace',
        request: request(KINDS.pod, 'CREATE', gpu),
        hot: hotGpu,
      },
      {
        path: webhook.path,
        label: 'GPU pod with a node selector',
        request: request(KINDS.pod, 'CREATE', {
          ...gpu,
          spec: { ...(gpu.spec as JsonObject), nodeSelector: { 'gpu.nvidia.com/class': 'h100' } },
        }),
        hot: [
          ...hotGpu,
          { at: ['object', 'spec', 'nodeSelector', 'gpu.nvidia.com/class'], kind: 'label-value' },
        ],
      },
    ];
  },
  conditionInputs: { 'requests-gpu': podInputs },
};
