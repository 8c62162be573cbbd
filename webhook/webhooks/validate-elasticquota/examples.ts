/** /validate-…-elasticquota's example reviews. */
import type { WebhookExamples } from '../../../test/harness/webhook-examples.js';
import { quotaFixtures, request } from '../../../test/fuzz/seed-kit.js';
import type { JsonObject } from '../../admission/types.js';
import { KINDS } from '../../kinds.js';
import { webhook } from './index.js';

export const examples: WebhookExamples = {
  seeds: () => {
    const { child, hot } = quotaFixtures();
    const { path } = webhook;
    return [
      { path, label: 'child quota CREATE', request: request(KINDS.elasticQuota, 'CREATE', child), hot },
      { path, label: 'child quota UPDATE', request: request(KINDS.elasticQuota, 'UPDATE', child), hot },
      {
        path,
        label: 'quota DELETE',
        request: request(KINDS.elasticQuota, 'DELETE', {
          ...child,
          metadata: { ...(child.metadata as JsonObject), name: 'leaf' },
        }),
        hot,
      },
    ];
  },
};
