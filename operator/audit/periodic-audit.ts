/**
 * The audit, run by the leader every --audit-interval: what switching every webhook to `deny`
 * would refuse today, published as gauges (admission_audit_findings{webhook,outcome}) and as
 * Warning Events (`AuditViolation`) on the objects that would be refused, so a dashboard and
 * `kubectl describe` show it. Only the leader runs it: Events are cluster-wide writes, and one
 * replica's count is the cluster's. With --audit-policy-reports, it also writes its results as
 * PolicyReports (policy-report.ts), as `audit --policy-report` does. An audit yields to the event
 * loop as it goes, so admission reviews are answered while it runs; runs never overlap. A run that
 * could not read every object (a list error, a snapshot that expired past resuming) publishes
 * nothing and counts admission_audit_failures_total{stage="list"}.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { NO_DECISION_METRICS } from '../../webhook/metrics/decision-metrics.js';
import { NAMESPACE_NAME_LABEL } from '../../webhook/names.js';
import type { WebhookEntry } from '../../webhook/table.js';
import { systemClock, type Clock } from '../kube/clock.js';
import type { EventRecorder } from '../kube/events.js';
import { ReconcileLoop } from '../kube/reconcile-loop.js';
import type { OperatorMetrics } from '../metrics/operator-metrics.js';
import type { StateStore } from '../store/state-store.js';
import { runAudit, type AuditReport } from './audit.js';
import { PolicyReportCollector, PolicyReportCrdMissing, publishPolicyReports } from './policy-report.js';

/** Events one audit records at most: a cluster where everything fails must not flood the API server. */
export const MAX_AUDIT_EVENTS = 100;

export interface PeriodicAuditOptions {
  intervalMs: number;
  /** Also write the results as PolicyReports. */
  policyReports?: boolean;
  /** Objects per list request (DEFAULT_CHUNK_SIZE when omitted). */
  chunkSize?: number;
  kubeConfig: KubeConfig;
  store: StateStore;
  webhooks: () => readonly WebhookEntry[];
  configMaps: readonly { namespace: string; name: string }[];
  isLeader: () => boolean;
  events: Pick<EventRecorder, 'warning'>;
  metrics: OperatorMetrics;
  logger: Logger;
  clock?: Clock;
}

export class PeriodicAudit {
  /** Requeued one interval after each audit ends, so runs never overlap however long one takes. */
  private readonly loop: ReconcileLoop;
  /** Times each audit and stamps its success and its reports. */
  private readonly clock: Clock;

  constructor(private readonly options: PeriodicAuditOptions) {
    this.clock = options.clock ?? systemClock;
    this.loop = new ReconcileLoop({
      reconcile: async () => {
        try {
          await this.runOnce();
        } finally {
          this.loop.requeueAfter(options.intervalMs);
        }
      },
      // runOnce logs its own failures and never throws.
      onError: () => undefined,
      background: true,
      clock: this.clock,
    });
  }

  /** The first audit runs one interval from now. */
  start(): void {
    this.loop.requeueAfter(this.options.intervalMs);
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  /** Writes the reports; a failure is logged (the audit's metrics and Events stand without them). */
  private async publish(collector: PolicyReportCollector): Promise<void> {
    try {
      const { written, deleted } = await publishPolicyReports(
        this.options.kubeConfig,
        collector.reports(),
        undefined,
      );
      this.options.logger.info(
        { written: written.length, deleted: deleted.length },
        'audit policy reports written',
      );
    } catch (error) {
      this.options.metrics.auditFailures.inc({ stage: 'reports' });
      if (error instanceof PolicyReportCrdMissing) this.options.logger.warn(error.message);
      else this.options.logger.error({ err: error }, 'audit policy reports could not be written');
    }
  }

  /** One audit, if this replica leads; its failures are logged, never thrown. */
  async runOnce(): Promise<AuditReport | undefined> {
    const { metrics, logger, store } = this.options;
    if (!this.options.isLeader()) {
      metrics.auditFindings.reset();
      return undefined;
    }
    const started = this.clock.monotonic();
    const collector = this.options.policyReports ? new PolicyReportCollector(this.clock.now()) : undefined;
    try {
      const report = await runAudit({
        ...(collector ? { onJudged: collector.add } : {}),
        kubeConfig: this.options.kubeConfig,
        store,
        configMaps: this.options.configMaps,
        chunkSize: this.options.chunkSize,
        chainContext: () => ({
          webhooks: this.options.webhooks(),
          state: store,
          logger,
          // What the audit judges is no admission: the server's fail-open count stays its own.
          metrics: NO_DECISION_METRICS,
          namespaceLabels: (name) => store.namespace(name)?.labels ?? { [NAMESPACE_NAME_LABEL]: name },
        }),
      });
      metrics.auditFindings.reset();
      const counts = new Map<string, number>();
      for (const finding of report.findings) {
        const key = `${finding.webhook}\u0000${finding.outcome}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      for (const [key, count] of counts) {
        const [webhook = '', outcome = ''] = key.split('\u0000');
        metrics.auditFindings.set({ webhook, outcome }, count);
      }
      let recorded = 0;
      for (const finding of report.findings) {
        if (finding.outcome !== 'refused' || recorded >= MAX_AUDIT_EVENTS) continue;
        recorded += 1;
        void this.options.events.warning(
          {
            apiVersion: finding.apiVersion,
            kind: finding.kind,
            // Events about cluster-scoped objects live in default.
            namespace: finding.namespace ?? 'default',
            name: finding.name,
            ...(finding.uid ? { uid: finding.uid } : {}),
          },
          'AuditViolation',
          `${finding.webhook} would refuse this object if it were created now: ${finding.message}`,
        );
      }
      if (collector) await this.publish(collector);
      const seconds = (this.clock.monotonic() - started) / 1000;
      metrics.auditDuration.set(seconds);
      metrics.auditLastSuccess.set(this.clock.now().getTime() / 1000);
      logger.info(
        {
          judged: report.judged,
          refused: report.findings.filter((finding) => finding.outcome === 'refused').length,
          changed: report.findings.filter((finding) => finding.outcome === 'changed').length,
          seconds: Math.round(seconds * 1000) / 1000,
        },
        'audit of existing objects finished',
      );
      return report;
    } catch (error) {
      // Nothing of a run that did not read everything is published: a report of part of the
      // cluster would claim the rest clean. The last complete run's findings, Events and
      // PolicyReports stand, and admission_audit_last_success_timestamp_seconds ages.
      metrics.auditFailures.inc({ stage: 'list' });
      logger.error(
        { err: error },
        'audit of existing objects failed: nothing of it is published, the last complete audit stands; the next one runs at the next interval',
      );
      return undefined;
    }
  }
}
