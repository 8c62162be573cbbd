/**
 * What the leader's periodic audit publishes about its last run.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

export function auditMetrics(registers: Registry[]) {
  return {
    auditFindings: new Gauge({
      name: 'admission_audit_findings',
      help: 'Existing objects the last periodic audit found that a webhook would refuse or change (outcome refused, changed), by webhook; only on the leader.',
      labelNames: ['webhook', 'outcome'] as const,
      registers,
    }),
    auditLastSuccess: new Gauge({
      name: 'admission_audit_last_success_timestamp_seconds',
      help: 'When (Unix time) the last periodic audit finished.',
      registers,
    }),
    auditFailures: new Counter({
      name: 'admission_audit_failures_total',
      help: 'Periodic audits that failed, by stage: list (the cluster could not be read in full; nothing of that run was published, the last complete run stands) or reports (its PolicyReports could not be written).',
      labelNames: ['stage'] as const,
      registers,
    }),
    auditDuration: new Gauge({
      name: 'admission_audit_duration_seconds',
      help: 'How long the last periodic audit took.',
      registers,
    }),
  };
}

export type AuditMetrics = ReturnType<typeof auditMetrics>;
