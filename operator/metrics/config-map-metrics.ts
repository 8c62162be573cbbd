/**
 * Whether the operator's own ConfigMaps in force are valid: the GPU tier mapping and the
 * enforcement key, and the enforcement each webhook has from them.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

export function configMapMetrics(registers: Registry[]) {
  return {
    tierMappingValid: new Gauge({
      name: 'admission_gpu_tier_mapping_valid',
      help: '1 when the gpu-tier-mapping ConfigMap in the cluster is valid (or absent), 0 while an invalid one is ignored.',
      registers,
    }),
    tierMappingRejected: new Counter({
      name: 'admission_gpu_tier_mapping_rejected_total',
      help: 'Invalid gpu-tier-mapping versions that got into the cluster and were ignored (the last good one stayed).',
      registers,
    }),
    enforcement: new Gauge({
      name: 'admission_webhook_enforcement',
      help: 'The enforcement in force per webhook: 1 on the action (deny, warn, dryrun) it has.',
      labelNames: ['webhook', 'action'] as const,
      registers,
    }),
    enforcementConfigValid: new Gauge({
      name: 'admission_enforcement_config_valid',
      help: "1 when the enforcement key of the operator's ConfigMap is valid (or absent), 0 while an invalid one is ignored.",
      registers,
    }),
  };
}

export type ConfigMapMetrics = ReturnType<typeof configMapMetrics>;
