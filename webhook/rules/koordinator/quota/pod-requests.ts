/**
 * A pod's effective resource requests, as the scheduler and Koordinator count them
 * (component-helpers' PodRequests): the containers, plus restartable (sidecar) init containers,
 * or the largest init-container step if that is larger, plus the pod overhead.
 */
import type { JsonObject, JsonValue } from '../../../admission/types.js';
import { quantityOf } from '../../../util/quantity.js';
import { atField, FieldPath, type FieldError } from '../../shared/field-errors.js';
import { asObject, asArray } from '../../../util/json.js';

export type Amounts = Map<string, bigint>;

function add(into: Amounts, from: Amounts): void {
  for (const [key, value] of from) into.set(key, (into.get(key) ?? 0n) + value);
}

function maxInto(into: Amounts, from: Amounts): void {
  for (const [key, value] of from) if (value > (into.get(key) ?? 0n)) into.set(key, value);
}

/**
 * Where a quantity that cannot be read goes: without a list it counts as none (the store, which
 * must count pods that already exist whatever they hold); with one, an error naming the field is
 * added to it (a validating rule, which refuses such a pod).
 */
export type Unreadable = FieldError[] | undefined;

/** The path is built only for a quantity that cannot be read: the store reads every pod. */
function read(value: JsonValue, path: () => FieldPath, bad: Unreadable): bigint | undefined {
  const amount = quantityOf(value);
  if (amount.ok) return amount.value;
  bad?.push(atField(path(), amount.error));
  return undefined;
}

/** A container's requests. */
function requestsOf(container: JsonValue | undefined, path: () => FieldPath, bad: Unreadable): Amounts {
  const amounts: Amounts = new Map();
  const resources = asObject(asObject(container)?.resources);
  // Limits stand in for missing requests, as the API server's defaulting does.
  for (const kind of ['limits', 'requests'] as const) {
    for (const [key, value] of Object.entries(asObject(resources?.[kind]) ?? {})) {
      const amount = read(value, () => path().child('resources', kind).key(key), bad);
      if (amount === undefined) amounts.delete(key);
      else amounts.set(key, amount);
    }
  }
  return amounts;
}

export function podRequests(pod: JsonObject, bad?: Unreadable): Amounts {
  const spec = asObject(pod.spec);
  const total: Amounts = new Map();
  for (const [index, container] of asArray(spec?.containers).entries())
    add(
      total,
      requestsOf(container, () => FieldPath.of('spec', 'containers').index(index), bad),
    );
  const sidecars: Amounts = new Map();
  const initSteps: Amounts = new Map();
  for (const [index, container] of asArray(spec?.initContainers).entries()) {
    const requests = requestsOf(container, () => FieldPath.of('spec', 'initContainers').index(index), bad);
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
    const amount = read(value, () => FieldPath.of('spec', 'overhead').key(key), bad);
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
