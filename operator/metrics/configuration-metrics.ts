/**
 * What the configuration reconciler counts: its writes of the webhook configurations.
 */
import { Counter, type Registry } from 'prom-client';

export function configurationMetrics(registers: Registry[]) {
  return {
    configurationRepairs: new Counter({
      name: 'admission_webhook_configuration_writes_total',
      help: 'Writes of the webhook configurations (create, repair of drift, follow of the state the pod webhooks are narrowed to), by kind.',
      labelNames: ['configuration', 'action'] as const,
      registers,
    }),
  };
}

export type ConfigurationMetrics = ReturnType<typeof configurationMetrics>;
