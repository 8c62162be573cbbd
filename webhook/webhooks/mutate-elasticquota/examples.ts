/** /mutate-…-elasticquota's example reviews. */
import type { WebhookExamples } from '../../../test/harness/webhook-examples.js';
import { quotaFixtures, request } from '../../../test/fuzz/seed-kit.js';
import { KINDS } from '../../kinds.js';
import { webhook } from './index.js';

export const examples: WebhookExamples = {
  seeds: () => {
    const { child, root, hot } = quotaFixtures();
    const { path } = webhook;
    return [
      { path, label: 'child quota CREATE', request: request(KINDS.elasticQuota, 'CREATE', child), hot },
      { path, label: 'root-level quota CREATE', request: request(KINDS.elasticQuota, 'CREATE', root), hot },
    ];
  },
};
