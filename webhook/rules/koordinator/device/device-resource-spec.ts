/**
 * Koordinator's device_resource_spec.go
 * (device_resource_spec.go): a container asking for koordinator.sh/gpu (a percentage: 200 is two whole
 * GPUs) gets it split into gpu-core and gpu-memory-ratio, and every GPU container gets its
 * gpu.shared count. nvidia.com/gpu is left alone. Unlike Koordinator, a container with only
 * requests or only limits gets the missing map created instead of crashing the handler.
 *
 * Upstream sources and every message: docs/rules/mutate-pod.md.
 */
import type { JsonValue, KubeObject } from '../../../admission/types.js';
import type { CopyOnWrite } from '../../../util/copy-on-write.js';
import { quantityAt } from '../../shared/quantity-at.js';
import { FieldPath, type FieldError } from '../../shared/field-errors.js';
import { asArray, asObject } from '../../../util/json.js';
import type { StepSkip } from '../../shared/step-skip.js';

const GPU = 'koordinator.sh/gpu';
const GPU_CORE = 'koordinator.sh/gpu-core';
const GPU_MEMORY = 'koordinator.sh/gpu-memory';
const GPU_MEMORY_RATIO = 'koordinator.sh/gpu-memory-ratio';
const GPU_SHARED = 'koordinator.sh/gpu.shared';
export const DEVICE_RESOURCES = [GPU, GPU_CORE, GPU_MEMORY, GPU_MEMORY_RATIO, GPU_SHARED];
const NANOS = 1_000_000_000n;

/**
 * Quantity.Value() (whole units, rounded up) of the quantity at `path`; undefined when absent, or
 * when it cannot be read: then an error naming the field is added to `unreadable`.
 */
export function wholeUnits(
  value: JsonValue | undefined,
  path: FieldPath,
  unreadable: FieldError[],
): bigint | undefined {
  if (value === undefined) return undefined;
  const nanos = quantityAt(value, path);
  if (nanos.ok) return (nanos.value + NANOS - 1n) / NANOS;
  unreadable.push(nanos.error);
  return undefined;
}

const sharedFrom = (units: bigint | undefined): bigint | undefined =>
  units !== undefined && units > 100n && units % 100n === 0n ? units / 100n : undefined;

interface GpuRequests {
  index: number;
  gpu: bigint | undefined;
  ratio: bigint | undefined;
  core: bigint | undefined;
}

/**
 * Rewrites the GPU requests of the pod's containers. Every quantity is read before anything
 * changes: one that cannot be read leaves the pod alone, and the returned warning names the field.
 */
export function applyDeviceResourceSpec(draft: CopyOnWrite<KubeObject>): StepSkip | undefined {
  const spec = asObject(draft.current.spec);
  const asking: GpuRequests[] = [];
  const unreadable: FieldError[] = [];
  for (const [index, container] of asArray(spec?.containers).entries()) {
    const containerObject = asObject(container);
    if (!containerObject) continue;
    const resources = asObject(containerObject.resources) ?? {};
    const existingRequests = asObject(resources.requests);
    const existingLimits = asObject(resources.limits);
    const asks = DEVICE_RESOURCES.some(
      (name) => existingRequests?.[name] !== undefined || existingLimits?.[name] !== undefined,
    );
    if (!asks) continue;
    const requests = existingRequests ?? {};
    const path = FieldPath.of('spec', 'containers').index(index).child('resources', 'requests');
    asking.push({
      index,
      gpu: wholeUnits(requests[GPU], path.key(GPU), unreadable),
      ratio: wholeUnits(requests[GPU_MEMORY_RATIO], path.key(GPU_MEMORY_RATIO), unreadable),
      core: wholeUnits(requests[GPU_CORE], path.key(GPU_CORE), unreadable),
    });
  }
  if (unreadable[0]) {
    const warning = `${unreadable[0].toString()}; the GPU resources were not split`;
    return { warning, reason: 'invalid-quantity' };
  }
  for (const { index, gpu, ratio, core } of asking) {
    // Both lists are written, created if missing, as Koordinator's handler leaves them.
    const requests = draft.mapAt('spec', 'containers', index, 'resources', 'requests');
    const limits = draft.mapAt('spec', 'containers', index, 'resources', 'limits');
    if (gpu !== undefined) {
      for (const list of [requests, limits]) {
        list[GPU_CORE] = gpu.toString();
        list[GPU_MEMORY_RATIO] = gpu.toString();
        Reflect.deleteProperty(list, GPU);
      }
    }
    if (requests[GPU_SHARED] === undefined) {
      // The memory ratio decides when it is there, even at 100 or less; then the core count. A
      // whole-GPU request has just become both.
      const memoryRatio = gpu ?? ratio;
      const shared =
        memoryRatio !== undefined ? (sharedFrom(memoryRatio) ?? 1n) : (sharedFrom(gpu ?? core) ?? 1n);
      requests[GPU_SHARED] = shared.toString();
      limits[GPU_SHARED] = shared.toString();
    }
  }
  return undefined;
}
