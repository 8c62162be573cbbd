/**
 * Koordinator's mutatePodResourceSpec
 * (https://github.com/koordinator-sh/koordinator/blob/main/pkg/webhook/pod/mutating/cluster_colocation_profile.go): a koord-batch or koord-mid pod asks for the node's reclaimed resources
 * (kubernetes.io/batch-cpu, -memory; mid-cpu, -memory) instead of cpu and memory, so the
 * scheduler places it against what colocation frees rather than against prod capacity.
 */
import type { JsonObject, JsonValue } from '../../admission/types.js';
import { asArray, asObject } from '../../util/json.js';
import { formatQuantity, quantityAt } from '../../util/quantity.js';
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
function millicoresAsUnits(nanos: bigint): string {
  const millis = (nanos + NANOS_PER_MILLI - 1n) / NANOS_PER_MILLI;
  return formatQuantity(millis * NANOS_PER_UNIT);
}

/** Moves cpu (already read as `cpu`) and memory in one resource list to the prefixed names. */
function translateList(list: Record<string, JsonValue>, prefix: string, cpu: bigint | undefined): void {
  if (cpu !== undefined) {
    list[`${prefix}-cpu`] = millicoresAsUnits(cpu);
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
 * Every quantity it reads is read before anything changes, so a QuantityFieldError (naming the
 * field) leaves the pod untouched.
 */
export function translateBatchResources(pod: JsonObject): void {
  const prefix = PREFIXES[priorityClassWithDefault(pod)];
  const spec = asObject(pod.spec);
  if (!prefix || !spec) return;
  const lists: { list: JsonObject; cpu: bigint | undefined }[] = [];
  const read = (list: JsonObject | undefined, path: string): void => {
    if (list)
      lists.push({ list, cpu: list.cpu === undefined ? undefined : quantityAt(list.cpu, `${path}[cpu]`) });
  };
  const containers: { resources: JsonObject; requests?: JsonObject; limits?: JsonObject }[] = [];
  for (const field of ['initContainers', 'containers'] as const) {
    for (const [index, item] of asArray(spec[field]).entries()) {
      const resources = asObject(asObject(item)?.resources);
      if (!resources) continue;
      const requests = asObject(resources.requests);
      const limits = asObject(resources.limits);
      const path = `spec.${field}[${index}].resources`;
      read(requests, `${path}.requests`);
      read(limits, `${path}.limits`);
      containers.push({ resources, ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) });
    }
  }
  read(asObject(spec.overhead), 'spec.overhead');

  for (const { list, cpu } of lists) translateList(list, prefix, cpu);
  for (const { resources, limits } of containers) {
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
