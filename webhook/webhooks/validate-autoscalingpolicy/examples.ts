/** validate-autoscalingpolicy's example reviews, from Kthena v1.0.0's examples. */
import type { WebhookExamples } from '../../../test/harness/webhook-examples.js';
import { kthenaFixtures, request } from '../../../test/fuzz/seed-kit.js';
import { KINDS } from '../../kinds.js';
import { webhook } from './index.js';

export const examples: WebhookExamples = {
  seeds: () => {
    const { policy, policyHot } = kthenaFixtures();
    return [
      {
        path: webhook.path,
        label: 'AutoscalingPolicy CREATE',
        request: request(KINDS.autoscalingPolicy, 'CREATE', policy),
        hot: policyHot,
      },
      {
        path: webhook.path,
        label: 'AutoscalingPolicy UPDATE',
        request: request(KINDS.autoscalingPolicy, 'UPDATE', policy),
        hot: policyHot,
      },
    ];
  },
};
