/** /mutate-pod's example reviews and the inputs of its match condition. */
import type { WebhookExamples } from '../../../test/harness/webhook-examples.js';
import { podFixtures, request } from '../../../test/fuzz/seed-kit.js';
import { field, podInputs } from '../../../test/harness/condition-inputs.js';
import { KINDS } from '../../kinds.js';
import { webhook } from './index.js';

export const examples: WebhookExamples = {
  seeds: () => {
    const { colocated, gpu, quotaPod, optedIn, hotColocated, hotGpu, hotQuota, hotOpted } = podFixtures();
    const { path } = webhook;
    return [
      {
        path,
        label: 'colocated pod CREATE',
        request: request(KINDS.pod, 'CREATE', colocated),
        hot: hotColocated,
      },
      { path, label: 'GPU pod CREATE', request: request(KINDS.pod, 'CREATE', gpu), hot: hotGpu },
      { path, label: 'quota pod CREATE', request: request(KINDS.pod, 'CREATE', quotaPod), hot: hotQuota },
      { path, label: 'opted-in pod UPDATE', request: request(KINDS.pod, 'UPDATE', optedIn), hot: hotOpted },
      { path, label: 'quota pod UPDATE', request: request(KINDS.pod, 'UPDATE', quotaPod), hot: hotQuota },
    ];
  },
  conditions: {
    'create-or-opted-in-update': {
      inputs: podInputs,
      meaning: ({ object, request }) =>
        field(request, 'operation') === 'CREATE' ||
        field(object, 'metadata', 'labels', 'pod.koordinator.sh/mutating-update') === 'true',
    },
  },
};
