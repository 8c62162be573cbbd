/**
 * What the watches count: the state store's complete lists and the objects it keeps, and every
 * informer's restarts (the store's, the certificate manager's, the configuration reconciler's).
 */
import { Counter, Gauge, type Registry } from 'prom-client';

/** What the state store holds, by watched kind. */
export type StoreSizes = () => Iterable<readonly [kind: string, objects: number]>;

/** Milliseconds since each watched kind last heard from the API server (absent: never yet). */
export type WatchSilences = () => Iterable<readonly [kind: string, silentMs: number | undefined]>;

/**
 * `sizes` and `silences` are read at each scrape: the store sets them once it exists (see
 * OperatorMetrics.storeSizes and watchSilences).
 */
export function informerMetrics(registers: Registry[], sizes: StoreSizes, silences: WatchSilences) {
  const watchSilence: Gauge<'kind'> = new Gauge({
    name: 'admission_watch_silence_seconds',
    help:
      'Seconds since the API server was last heard from (an object, a bookmark) on each watched kind: ' +
      'bookmarks come every 60 s, and a watch silent for 75 s is replaced.',
    labelNames: ['kind'] as const,
    registers,
    collect: () => {
      watchSilence.reset();
      for (const [kind, ms] of silences()) if (ms !== undefined) watchSilence.set({ kind }, ms / 1000);
    },
  });
  const storeObjects: Gauge<'kind'> = new Gauge({
    name: 'admission_store_objects',
    help: 'Objects the state store keeps, by watched kind (pods: the live pods counted against quotas).',
    labelNames: ['kind'] as const,
    registers,
    collect: () => {
      for (const [kind, objects] of sizes()) storeObjects.set({ kind }, objects);
    },
  });
  return {
    storeLists: new Counter({
      name: 'admission_store_lists_total',
      help:
        'Complete lists of a watched kind into the state store: one at start, then one per relist (410 Gone, SIGHUP); ' +
        'mode: stream (a streaming list), pages (the API server refuses streaming lists), none (a CRD not installed).',
      labelNames: ['kind', 'mode'] as const,
      registers,
    }),
    storeObjects,
    watchSilence,
    watchReplacements: new Counter({
      name: 'admission_watch_replacements_total',
      help: 'Watches (and lists) replaced because they heard nothing from the API server for 75 s, by watched kind.',
      labelNames: ['kind'] as const,
      registers,
    }),
    kindInstalled: new Gauge({
      name: 'admission_kind_installed',
      help:
        "Custom kinds the state store watches (Koordinator's, from CRDs their charts install): 1 while the CRD " +
        'is served, 0 while it is absent (no objects of it exist for the rules; it is watched once it appears).',
      labelNames: ['kind'] as const,
      registers,
    }),
    informerRestarts: new Counter({
      name: 'admission_informer_restarts_total',
      help: 'Watch restarts after an error, by watched kind.',
      labelNames: ['kind'] as const,
      registers,
    }),
  };
}

export type InformerMetrics = ReturnType<typeof informerMetrics>;
