/** /validate-pod-resize's example review. */
import type { WebhookExamples } from '../../../test/harness/webhook-examples.js';
import { podFixtures, request } from '../../../test/fuzz/seed-kit.js';
import { KINDS } from '../../kinds.js';
import { webhook } from './index.js';

export const examples: WebhookExamples = {
  seeds: () => {
    const { quotaPod, hotQuota } = podFixtures();
    return [
      {
        path: webhook.path,
        label: 'quota pod resized in place',
        request: request(KINDS.pod, 'UPDATE', quotaPod, { subResource: 'resize' }),
        hot: hotQuota,
      },
    ];
  },
};
