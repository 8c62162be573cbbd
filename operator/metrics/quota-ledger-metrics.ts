/**
 * The quota ledger (operator/store/quota-usage.ts): how many admitted pods it counts until the
 * watch sees them, and the entries that left it without that: expired (admitted, never seen
 * within the ledger's 30 s: a later admission step refused the pod, or the watch lags) or evicted
 * to keep it within its bound (the quota was then judged without them).
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { LEDGER_MAX_ENTRIES } from '../store/quota-usage.js';

/** `entries` is read at each scrape: the store sets it once it exists (see OperatorMetrics.ledgerEntries). */
export function quotaLedgerMetrics(registers: Registry[], entries: () => number) {
  return {
    ledgerEntries: new Gauge({
      name: 'admission_quota_ledger_entries',
      help: 'Pods admitted with a quota reservation that the pod watch has not seen yet (each counts 30 s at most).',
      registers,
      collect() {
        this.set(entries());
      },
    }),
    ledgerExpired: new Counter({
      name: 'admission_quota_ledger_expired_total',
      help: 'Quota reservations that expired before the pod watch saw their pod.',
      registers,
    }),
    ledgerEvictions: new Counter({
      name: 'admission_quota_ledger_evictions_total',
      help: `Quota reservations dropped before they expired to make room: the ledger holds ${LEDGER_MAX_ENTRIES} at most.`,
      registers,
    }),
  };
}

export type QuotaLedgerMetrics = ReturnType<typeof quotaLedgerMetrics>;
