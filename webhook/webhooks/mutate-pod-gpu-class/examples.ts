/** /mutate-pod-gpu-class's example reviews and the inputs of its match condition. */
import type { ConditionOutcome, WebhookExamples } from '../../../test/harness/webhook-examples.js';
import type { CelJson, ConditionVariables } from '../../../test/harness/condition-inputs.js';
import type { TableContext } from '../../table.js';
import { podFixtures, request } from '../../../test/fuzz/seed-kit.js';
import { field, podInputs } from '../../../test/harness/condition-inputs.js';
import type { JsonObject } from '../../admission/types.js';
import { KINDS } from '../../kinds.js';
import { webhook } from './index.js';

function requestsAny(container: CelJson, names: readonly string[]): boolean {
  const resources = field(container, 'resources');
  return ['requests', 'limits'].some((list) => {
    const amounts = field(resources, list);
    return (
      typeof amounts === 'object' &&
      amounts !== null &&
      !Array.isArray(amounts) &&
      names.some((name) => Object.hasOwn(amounts, name))
    );
  });
}

/** A container or init container requests or limits one of the GPU resources; no containers errs. */
const requestsGpu = ({ object }: ConditionVariables, context: TableContext): ConditionOutcome => {
  // With no GPU resource to look for, nothing is read: no pod asks for one.
  if (context.gpuResourceNames.length === 0) return false;
  const containers = field(object, 'spec', 'containers');
  if (!Array.isArray(containers)) return 'error';
  const initContainers = field(object, 'spec', 'initContainers');
  return [...containers, ...(Array.isArray(initContainers) ? initContainers : [])].some((container) =>
    requestsAny(container, context.gpuResourceNames),
  );
};

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
  conditions: {
    'requests-gpu': {
      inputs: podInputs,
      meaning: requestsGpu,
    },
  },
};
