/**
 * The one registry behind the process's /metrics: the process's own series, the operator's
 * (certificates, leader, informers, audit, configuration writes) and the admission server's.
 */
import { Registry } from 'prom-client';
import { admissionMetrics, type AdmissionMetrics } from '../../webhook/metrics/admission-metrics.js';
import { operatorMetrics, type OperatorMetrics } from './operator-metrics.js';
import { registerProcessMetrics } from './process-metrics.js';

export interface ProcessRegistry {
  registry: Registry;
  metrics: OperatorMetrics;
  admission: AdmissionMetrics;
}

export function processRegistry(memoryLimitBytes: number | undefined): ProcessRegistry {
  const registry = new Registry();
  registerProcessMetrics(registry, memoryLimitBytes);
  return { registry, metrics: operatorMetrics(registry), admission: admissionMetrics(registry) };
}
