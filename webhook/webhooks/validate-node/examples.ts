/** /validate-node's example reviews. */
import type { WebhookExamples } from '../../../test/harness/webhook-examples.js';
import { RATIO, node, nodeFixture, request } from '../../../test/fuzz/seed-kit.js';
import { KINDS } from '../../kinds.js';
import { webhook } from './index.js';

export const examples: WebhookExamples = {
  seeds: () => {
    const { amplified, hot } = nodeFixture();
    return [
      { path: webhook.path, label: 'node UPDATE', request: request(KINDS.node, 'UPDATE', amplified), hot },
      {
        path: webhook.path,
        label: 'node UPDATE joining a second strategy',
        request: {
          ...request(KINDS.node, 'UPDATE', node({ pool: 'a', gpu: 'true' }, { [RATIO]: '{"cpu":2}' }, null)),
          oldObject: node({ pool: 'a' }, {}, null),
        },
        hot: [...hot, { at: ['object', 'metadata', 'labels', 'gpu'], kind: 'label-value' }],
      },
    ];
  },
};
