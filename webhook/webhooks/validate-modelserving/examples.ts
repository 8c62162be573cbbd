/** validate-modelserving's example reviews, from Kthena v1.0.0's examples. */
import type { WebhookExamples } from '../../../test/harness/webhook-examples.js';
import { kthenaFixtures, request } from '../../../test/fuzz/seed-kit.js';
import { KINDS } from '../../kinds.js';
import { webhook } from './index.js';

export const examples: WebhookExamples = {
  seeds: () => {
    const { serving, servingHot } = kthenaFixtures();
    return [
      {
        path: webhook.path,
        label: 'ModelServing CREATE',
        request: request(KINDS.modelServing, 'CREATE', serving),
        hot: servingHot,
      },
      {
        path: webhook.path,
        label: 'ModelServing UPDATE',
        request: request(KINDS.modelServing, 'UPDATE', serving),
        hot: servingHot,
      },
    ];
  },
};
