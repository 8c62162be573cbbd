/**
 * Koordinator §1.5: a container asking for koordinator.sh/gpu (a percentage: 200 is two whole
 * GPUs) gets it split into gpu-core and gpu-memory-ratio, and every GPU container gets its
 * gpu.shared count. nvidia.com/gpu is left alone. Unlike Koordinator, a container with only
 * requests or only limits gets the missing map created instead of crashing the handler.
 */
import type { JsonValue, KubeObject } from '../../admission/types.js';
import { parseQuantity } from '../../util/quantity.js';
import { asObject } from '../../util/json.js';

const GPU = 'koordinator.sh/gpu';
const GPU_CORE = 'koordinator.sh/gpu-core';
const GPU_MEMORY = 'koordinator.sh/gpu-memory';
const GPU_MEMORY_RATIO = 'koordinator.sh/gpu-memory-ratio';
const GPU_SHARED = 'koordinator.sh/gpu.shared';
const DEVICE_RESOURCES = [GPU, GPU_CORE, GPU_MEMORY, GPU_MEMORY_RATIO, GPU_SHARED];
const NANOS = 1_000_000_000n;

/** Quantity.Value(): whole units, rounded up. */
export function wholeUnits(value: JsonValue | undefined): bigint | undefined {
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  try {
    const nanos = parseQuantity(String(value));
    return (nanos + NANOS - 1n) / NANOS;
  } catch {
    return undefined;
  }
}

const sharedFrom = (units: bigint | undefined): bigint | undefined =>
  units !== undefined && units > 100n && units % 100n === 0n ? units / 100n : undefined;

/** Rewrites the GPU requests of `pod`'s containers in place; true when anything changed. */
export function applyDeviceResourceSpec(pod: KubeObject): boolean {
  let changed = false;
  const spec = asObject(pod.spec);
  for (const container of Array.isArray(spec?.containers) ? spec.containers : []) {
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
    const limits = existingLimits ?? {};
    const gpu = wholeUnits(requests[GPU]);
    if (gpu !== undefined) {
      for (const list of [requests, limits]) {
        list[GPU_CORE] = gpu.toString();
        list[GPU_MEMORY_RATIO] = gpu.toString();
        Reflect.deleteProperty(list, GPU);
      }
    }
    if (requests[GPU_SHARED] === undefined) {
      // The memory ratio decides when it is there, even at 100 or less; then the core count.
      const ratio = wholeUnits(requests[GPU_MEMORY_RATIO]);
      const shared =
        ratio !== undefined ? (sharedFrom(ratio) ?? 1n) : (sharedFrom(wholeUnits(requests[GPU_CORE])) ?? 1n);
      requests[GPU_SHARED] = shared.toString();
      limits[GPU_SHARED] = shared.toString();
    }
    resources.requests = requests;
    resources.limits = limits;
    containerObject.resources = resources;
    changed = true;
  }
  return changed;
}
