/**
 * What the leader's periodic audit publishes about its last run.
 */
import { Gauge, type Registry } from 'prom-client';

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
    auditDuration: new Gauge({
      name: 'admission_audit_duration_seconds',
      help: 'How long the last periodic audit took.',
      registers,
    }),
  };
}

export type AuditMetrics = ReturnType<typeof auditMetrics>;
