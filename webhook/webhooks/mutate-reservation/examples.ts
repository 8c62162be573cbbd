/** /mutate-reservation's example reviews. */
import type { WebhookExamples } from '../../../test/harness/webhook-examples.js';
import { request, reservationFixture } from '../../../test/fuzz/seed-kit.js';
import type { JsonObject } from '../../admission/types.js';
import { KINDS } from '../../kinds.js';
import { webhook } from './index.js';

export const examples: WebhookExamples = {
  seeds: () => {
    const { reservation, hot } = reservationFixture();
    return [
      {
        path: webhook.path,
        label: 'Reservation with a template',
        request: request(KINDS.reservation, 'CREATE', reservation),
        hot,
      },
      {
        path: webhook.path,
        label: 'Reservation with a ttl',
        request: request(KINDS.reservation, 'CREATE', {
          ...reservation,
          spec: { ...(reservation.spec as JsonObject), ttl: '1h' },
        }),
        hot,
      },
    ];
  },
};
