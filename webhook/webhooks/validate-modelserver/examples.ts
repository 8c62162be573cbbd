/** validate-modelserver's example reviews, from Kthena v1.0.0's examples. */
import type { WebhookExamples } from '../../../test/harness/webhook-examples.js';
import { kthenaFixtures, request } from '../../../test/fuzz/seed-kit.js';
import { KINDS } from '../../kinds.js';
import { webhook } from './index.js';

export const examples: WebhookExamples = {
  seeds: () => {
    const { server, serverHot } = kthenaFixtures();
    return [
      {
        path: webhook.path,
        label: 'ModelServer CREATE',
        request: request(KINDS.modelServer, 'CREATE', server),
        hot: serverHot,
      },
    ];
  },
};
