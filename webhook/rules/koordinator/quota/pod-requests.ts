/**
 * A pod's effective resource requests, as the scheduler and Koordinator count them
 * (component-helpers' PodRequests): the containers, plus restartable (sidecar) init containers,
 * or the largest init-container step if that is larger, plus the pod overhead.
 */
import type { JsonObject, JsonValue } from '../../../admission/types.js';
import { QuantityFieldError, quantityAt } from '../../../util/quantity.js';
import { asObject, asArray } from '../../../util/json.js';

export type Amounts = Map<string, bigint>;

function add(into: Amounts, from: Amounts): void {
  for (const [key, value] of from) into.set(key, (into.get(key) ?? 0n) + value);
}

function maxInto(into: Amounts, from: Amounts): void {
  for (const [key, value] of from) if (value > (into.get(key) ?? 0n)) into.set(key, value);
}

/**
 * What to do with a quantity that cannot be read: 'skip' counts it as none (the store, which
 * must count pods that already exist whatever they hold), 'throw' throws a QuantityFieldError
 * naming the field (a validating rule, which refuses such a pod).
 */
export type BadQuantity = 'skip' | 'throw';

function read(value: JsonValue, path: string, bad: BadQuantity): bigint | undefined {
  try {
    return quantityAt(value, path);
  } catch (error) {
    if (bad === 'skip' && error instanceof QuantityFieldError) return undefined;
    throw error;
  }
}

/** A container's requests. */
function requestsOf(container: JsonValue | undefined, path: string, bad: BadQuantity): Amounts {
  const amounts: Amounts = new Map();
  const resources = asObject(asObject(container)?.resources);
  // Limits stand in for missing requests, as the API server's defaulting does.
  for (const kind of ['limits', 'requests'] as const) {
    for (const [key, value] of Object.entries(asObject(resources?.[kind]) ?? {})) {
      const amount = read(value, `${path}.resources.${kind}[${key}]`, bad);
      if (amount === undefined) amounts.delete(key);
      else amounts.set(key, amount);
    }
  }
  return amounts;
}

export function podRequests(pod: JsonObject, bad: BadQuantity = 'skip'): Amounts {
  const spec = asObject(pod.spec);
  const total: Amounts = new Map();
  for (const [index, container] of asArray(spec?.containers).entries())
    add(total, requestsOf(container, `spec.containers[${index}]`, bad));
  const sidecars: Amounts = new Map();
  const initSteps: Amounts = new Map();
  for (const [index, container] of asArray(spec?.initContainers).entries()) {
    const requests = requestsOf(container, `spec.initContainers[${index}]`, bad);
    if (asObject(container)?.restartPolicy === 'Always') {
      add(total, requests);
      add(sidecars, requests);
      maxInto(initSteps, sidecars);
    } else {
      const step: Amounts = new Map(sidecars);
      add(step, requests);
      maxInto(initSteps, step);
    }
  }
  maxInto(total, initSteps);
  const overhead = asObject(spec?.overhead);
  for (const [key, value] of Object.entries(overhead ?? {})) {
    const amount = read(value, `spec.overhead[${key}]`, bad);
    if (amount !== undefined) total.set(key, (total.get(key) ?? 0n) + amount);
  }
  return total;
}

/** True when the pod no longer holds resources: finished, or past its deletion grace period. */
export function podIsDone(pod: JsonObject, now: Date): boolean {
  const phase = asObject(pod.status)?.phase;
  if (phase === 'Failed' || phase === 'Succeeded') return true;
  const metadata = asObject(pod.metadata);
  const deletion = metadata?.deletionTimestamp;
  if (typeof deletion !== 'string') return false;
  const grace =
    typeof metadata?.deletionGracePeriodSeconds === 'number' ? metadata.deletionGracePeriodSeconds : 0;
  return Date.parse(deletion) + grace * 1000 <= now.getTime();
}
