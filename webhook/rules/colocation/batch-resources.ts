/**
 * Koordinator §1.3: a koord-batch or koord-mid pod asks for the node's reclaimed resources
 * (kubernetes.io/batch-cpu, -memory; mid-cpu, -memory) instead of cpu and memory, so the
 * scheduler places it against what colocation frees rather than against prod capacity.
 */
import type { JsonObject, JsonValue } from '../../admission/types.js';
import { asArray, asObject } from '../../util/json.js';
import { formatQuantity, parseQuantity } from '../../util/quantity.js';
import { priorityClassWithDefault } from './priority-qos.js';

const NANOS_PER_MILLI = 1_000_000n;
const NANOS_PER_UNIT = 1_000_000_000n;

/** Where each class's cpu and memory go; koord-prod, koord-free and none keep theirs. */
const PREFIXES: Readonly<Record<string, string>> = {
  'koord-batch': 'kubernetes.io/batch',
  'koord-mid': 'kubernetes.io/mid',
};

/**
 * batch-cpu counts millicores as whole units (Go: NewQuantity(cpu.MilliValue(), DecimalSI)):
 * "1" becomes 1000 (printed "1k"), "500m" becomes 500; a fraction of a millicore rounds up.
 */
function millicoresAsUnits(cpu: string): string {
  const millis = (parseQuantity(cpu) + NANOS_PER_MILLI - 1n) / NANOS_PER_MILLI;
  return formatQuantity(millis * NANOS_PER_UNIT);
}

/** Moves cpu and memory in one resource list to the prefixed names. */
function translateList(list: Record<string, JsonValue>, prefix: string, path: string): void {
  const cpu = list.cpu;
  if (cpu !== undefined) {
    if (typeof cpu !== 'string' && typeof cpu !== 'number')
      throw new Error(`${path}.cpu: must be a quantity`);
    try {
      list[`${prefix}-cpu`] = millicoresAsUnits(String(cpu));
    } catch (error) {
      throw new Error(`${path}.cpu: ${(error as Error).message}`, { cause: error });
    }
    delete list.cpu;
  }
  const memory = list.memory;
  if (memory !== undefined) {
    list[`${prefix}-memory`] = memory;
    delete list.memory;
  }
}

/**
 * Translates `pod` in place when its class (after profiles) is koord-batch or koord-mid.
 * Throws, naming the field, on a cpu quantity that does not parse.
 */
export function translateBatchResources(pod: JsonObject): void {
  const prefix = PREFIXES[priorityClassWithDefault(pod)];
  const spec = asObject(pod.spec);
  if (!prefix || !spec) return;
  for (const field of ['initContainers', 'containers'] as const) {
    for (const [index, item] of asArray(spec[field]).entries()) {
      const resources = asObject(asObject(item)?.resources);
      if (!resources) continue;
      const requests = asObject(resources.requests);
      const limits = asObject(resources.limits);
      const path = `spec.${field}[${index}].resources`;
      if (requests) translateList(requests, prefix, `${path}.requests`);
      if (limits) translateList(limits, prefix, `${path}.limits`);
      // A translated limit without a request gets the limit as its request; the reverse never
      // happens, so an unlimited pod stays unlimited.
      for (const name of [`${prefix}-cpu`, `${prefix}-memory`]) {
        const limit = limits?.[name];
        if (limit === undefined) continue;
        const current = asObject(resources.requests) ?? {};
        if (current[name] === undefined) resources.requests = { ...current, [name]: limit };
      }
    }
  }
  const overhead = asObject(spec.overhead);
  if (overhead) translateList(overhead, prefix, 'spec.overhead');
}
