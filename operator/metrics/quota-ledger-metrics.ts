/**
 * The quota ledger (operator/store/quota-usage.ts): how many admitted pods it counts until the
 * watch delivers them, and the entries that left it without that: expired (the pod watch was
 * current well past the admission and the pod never came: a later admission step or the API
 * server refused it) or folded into their quota's overflow to keep the ledger within its bound.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { LEDGER_MAX_ENTRIES, RESERVATION_SETTLE_MS } from '../store/quota-usage.js';

/** `entries` is read at each scrape: the store sets it once it exists (see OperatorMetrics.ledgerEntries). */
export function quotaLedgerMetrics(registers: Registry[], entries: () => number) {
  return {
    ledgerEntries: new Gauge({
      name: 'admission_quota_ledger_entries',
      help:
        'Pods admitted with a quota reservation that the pod watch has not delivered yet ' +
        '(kept until it does, or until the watch is current past the admission without the pod).',
      registers,
      collect() {
        this.set(entries());
      },
    }),
    ledgerExpired: new Counter({
      name: 'admission_quota_ledger_expired_total',
      help: `Quota reservations released without their pod: the pod watch was current ${RESERVATION_SETTLE_MS / 1000} s past the admission and the pod never came.`,
      registers,
    }),
    ledgerEvictions: new Counter({
      name: 'admission_quota_ledger_evictions_total',
      help: `Quota reservations folded into their quota's overflow sum to make room: the ledger holds ${LEDGER_MAX_ENTRIES} by name at most.`,
      registers,
    }),
  };
}

export type QuotaLedgerMetrics = ReturnType<typeof quotaLedgerMetrics>;
