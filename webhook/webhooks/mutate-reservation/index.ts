/** /mutate-reservation: Koordinator's Reservation mutation. */
import { defineWebhook, matching } from '../define.js';
import { KINDS } from '../../kinds.js';
import { reservationMutator } from '../../rules/koordinator/reservation/mutate-reservation.js';

export const webhook = defineWebhook({
  name: 'mutate-reservation',
  path: '/mutate-reservation',
  type: 'mutating',
  resourceRules: [matching(KINDS.reservation, ['CREATE'])],
  failurePolicy: 'Fail',
  timeoutSeconds: 10,
  reinvocationPolicy: 'Never',
  featureGate: 'ReservationMutatingWebhook',
  docs: {
    page: 'mutate-reservation.md',
    entryPoint: 'rules/koordinator/reservation/mutate-reservation.ts',
    checks: '`koordinator/colocation/colocation-profile.ts`',
  },
  build: (context) => ({ handler: reservationMutator(context.roll) }),
});
