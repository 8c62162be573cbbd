/**
 * Koordinator's mutatePodResourceSpec
 * (cluster_colocation_profile.go): a koord-batch or koord-mid pod asks for the node's reclaimed resources
 * (kubernetes.io/batch-cpu, -memory; mid-cpu, -memory) instead of cpu and memory, so the
 * scheduler places it against what colocation frees rather than against prod capacity.
 *
 * Upstream sources and every message: docs/rules/mutate-pod.md.
 */
import type { JsonObject, JsonValue } from '../../../admission/types.js';
import type { CopyOnWrite, PathSegment } from '../../../util/copy-on-write.js';
import { asArray, asObject } from '../../../util/json.js';
import { formatQuantity, quantityOf } from '../../../util/quantity.js';
import { failure, success, type Result } from '../../../util/result.js';
import { atField, FieldPath, type FieldError } from '../../shared/field-errors.js';
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
 * Translates the pod when its class (after profiles) is koord-batch or koord-mid. Every quantity
 * it reads is read before anything changes, so a quantity it cannot read (the error names the
 * field) leaves the pod untouched.
 */
export function translateBatchResources(draft: CopyOnWrite): Result<void, FieldError> {
  const pod = draft.current;
  const priorityClass = priorityClassWithDefault(pod);
  if (!priorityClass.ok) return priorityClass;
  const prefix = PREFIXES[priorityClass.value];
  const spec = asObject(pod.spec);
  if (!prefix || !spec) return success(undefined);
  const lists: { at: PathSegment[]; cpu: bigint | undefined }[] = [];
  const errors: FieldError[] = [];
  const read = (list: JsonObject | undefined, at: PathSegment[], path: FieldPath): void => {
    if (!list || (list.cpu === undefined && list.memory === undefined)) return;
    if (list.cpu === undefined) {
      lists.push({ at, cpu: undefined });
      return;
    }
    const cpu = quantityOf(list.cpu);
    if (cpu.ok) lists.push({ at, cpu: cpu.value });
    else errors.push(atField(path.key('cpu'), cpu.error));
  };
  const limited: { field: 'initContainers' | 'containers'; index: number }[] = [];
  for (const field of ['initContainers', 'containers'] as const) {
    for (const [index, item] of asArray(spec[field]).entries()) {
      const resources = asObject(asObject(item)?.resources);
      if (!resources) continue;
      const at = ['spec', field, index, 'resources'];
      const path = FieldPath.of('spec', field).index(index).child('resources');
      read(asObject(resources.requests), [...at, 'requests'], path.child('requests'));
      const limits = asObject(resources.limits);
      read(limits, [...at, 'limits'], path.child('limits'));
      if (limits) limited.push({ field, index });
    }
  }
  read(asObject(spec.overhead), ['spec', 'overhead'], FieldPath.of('spec', 'overhead'));
  if (errors[0]) return failure(errors[0]);

  for (const { at, cpu } of lists) translateList(draft.mapAt(...at), prefix, cpu);
  const translated = asObject(draft.current.spec);
  for (const { field, index } of limited) {
    // A translated limit without a request gets the limit as its request; the reverse never
    // happens, so an unlimited pod stays unlimited.
    const resources = asObject(asObject(asArray(translated?.[field])[index])?.resources);
    const limits = asObject(resources?.limits);
    let requests = asObject(resources?.requests) ?? {};
    const before = requests;
    for (const name of [`${prefix}-cpu`, `${prefix}-memory`]) {
      const limit = limits?.[name];
      if (limit !== undefined && requests[name] === undefined) requests = { ...requests, [name]: limit };
    }
    if (requests !== before) draft.mapAt('spec', field, index, 'resources').requests = requests;
  }
  return success(undefined);
}
