/**
 * What the certificate manager counts: the certificates in use, those it issued, its failed
 * reconciles.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

export function certificateMetrics(registers: Registry[]) {
  return {
    certificateNotAfter: new Gauge({
      name: 'admission_certificate_not_after_seconds',
      help: 'Expiry (Unix time) of the certificates in use: the serving certificate and each CA in the bundle.',
      labelNames: ['certificate', 'serial'] as const,
      registers,
    }),
    certificateRotations: new Counter({
      name: 'admission_certificate_rotations_total',
      help: 'Certificates this replica issued and stored, by kind (ca, serving).',
      labelNames: ['certificate'] as const,
      registers,
    }),
    certificateReconcileErrors: new Counter({
      name: 'admission_certificate_reconcile_errors_total',
      help: 'Certificate reconciles that failed (the Secret could not be read or written); each is retried.',
      registers,
    }),
  };
}

export type CertificateMetrics = ReturnType<typeof certificateMetrics>;
