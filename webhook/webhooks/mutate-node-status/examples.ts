/** /mutate-node-status's example reviews. */
import type { WebhookExamples } from '../../../test/harness/webhook-examples.js';
import { nodeFixture, request } from '../../../test/fuzz/seed-kit.js';
import { KINDS } from '../../kinds.js';
import { webhook } from './index.js';

export const examples: WebhookExamples = {
  seeds: () => {
    const { amplified, hot } = nodeFixture();
    return [
      {
        path: webhook.path,
        label: 'node status UPDATE',
        request: request(KINDS.node, 'UPDATE', amplified, { subResource: 'status' }),
        hot,
      },
      {
        path: webhook.path,
        label: 'node status CREATE',
        request: request(KINDS.node, 'CREATE', amplified, { subResource: 'status' }),
        hot,
      },
    ];
  },
};
