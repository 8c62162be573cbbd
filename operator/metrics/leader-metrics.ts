/**
 * Whether this replica leads: set by leader election; 0 from the start, so a replica that never
 * leads still exports the series the alerts count leaders with.
 */
import { Gauge, type Registry } from 'prom-client';

export function leaderMetrics(registers: Registry[]) {
  const leader = new Gauge({
    name: 'admission_leader',
    help: '1 while this replica holds the admission-operator Lease (it alone writes the Secret and the webhook configurations), else 0.',
    registers,
  });
  leader.set(0);
  return { leader };
}

export type LeaderMetrics = ReturnType<typeof leaderMetrics>;
