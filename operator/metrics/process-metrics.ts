/**
 * The process's own metrics: Node's default ones (CPU, memory, event-loop lag, handles) and the
 * container's memory limit. Registered once per operator process, into the registry /metrics
 * serves; the commands and the periodic audit's judging never register them again.
 */
import { Gauge, collectDefaultMetrics, type Registry } from 'prom-client';

export function registerProcessMetrics(registry: Registry, memoryLimitBytes: number | undefined): void {
  collectDefaultMetrics({ register: registry });
  const memoryLimit = new Gauge({
    name: 'admission_memory_limit_bytes',
    help: "The container's memory limit, from the downward API (ADMISSION_MEMORY_LIMIT); absent without one.",
    registers: [registry],
  });
  if (memoryLimitBytes !== undefined) memoryLimit.set(memoryLimitBytes);
}
