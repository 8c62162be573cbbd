/**
 * Everything the operator's loops count, one object for the parts that share it: the certificate
 * manager, the state store and its trackers, the configuration reconciler, the periodic audit and
 * leader election each read the fields of their own concern (one file each, beside this one).
 * The admission server counts into webhook/metrics/admission-metrics.ts; both register into the
 * one registry the operator's /metrics serves.
 */
import { Registry } from 'prom-client';
import { auditMetrics, type AuditMetrics } from './audit-metrics.js';
import { certificateMetrics, type CertificateMetrics } from './certificate-metrics.js';
import { configMapMetrics, type ConfigMapMetrics } from './config-map-metrics.js';
import { configurationMetrics, type ConfigurationMetrics } from './configuration-metrics.js';
import {
  informerMetrics,
  type InformerMetrics,
  type StoreSizes,
  type WatchSilences,
} from './informer-metrics.js';
import { leaderMetrics, type LeaderMetrics } from './leader-metrics.js';
import { quotaLedgerMetrics, type QuotaLedgerMetrics } from './quota-ledger-metrics.js';

export type OperatorMetrics = AuditMetrics &
  CertificateMetrics &
  ConfigMapMetrics &
  ConfigurationMetrics &
  InformerMetrics &
  LeaderMetrics &
  QuotaLedgerMetrics & {
    readonly registry: Registry;
    /** What the state store holds, by watched kind; set by the store, read at each scrape. */
    storeSizes: StoreSizes;
    /** How long each watched kind has not heard from the API server; set by the store, read at each scrape. */
    watchSilences: WatchSilences;
    /** The informers outside the store (the Secret's, the configurations'), read at each scrape too. */
    readonly informers: Set<{ readonly kind: string; silentFor(): number | undefined }>;
    /** The quota ledger's entries; set by the store, read at each scrape. */
    ledgerSize: () => number;
  };

/**
 * The operator's metrics in `registry`. A command's state store gets its own registry, never
 * served, so what it counts reaches no process's /metrics.
 */
export function operatorMetrics(registry: Registry = new Registry()): OperatorMetrics {
  const registers = [registry];
  const metrics: OperatorMetrics = {
    registry,
    storeSizes: () => [],
    watchSilences: () => [],
    informers: new Set(),
    ledgerSize: () => 0,
    ...auditMetrics(registers),
    ...certificateMetrics(registers),
    ...configMapMetrics(registers),
    ...configurationMetrics(registers),
    ...informerMetrics(
      registers,
      () => metrics.storeSizes(),
      () => [
        ...metrics.watchSilences(),
        ...[...metrics.informers].map((informer) => [informer.kind, informer.silentFor()] as const),
      ],
    ),
    ...leaderMetrics(registers),
    ...quotaLedgerMetrics(registers, () => metrics.ledgerSize()),
  };
  return metrics;
}
