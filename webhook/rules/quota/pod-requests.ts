/**
 * A pod's effective resource requests, as the scheduler and Koordinator count them
 * (component-helpers' PodRequests): the containers, plus restartable (sidecar) init containers,
 * or the largest init-container step if that is larger, plus the pod overhead.
 */
import type { JsonObject, JsonValue } from '../../admission/types.js';
import { parseQuantity } from '../../util/quantity.js';
import { asObject, asArray } from '../../util/json.js';

export type Amounts = Map<string, bigint>;

function add(into: Amounts, from: Amounts): void {
  for (const [key, value] of from) into.set(key, (into.get(key) ?? 0n) + value);
}

function maxInto(into: Amounts, from: Amounts): void {
  for (const [key, value] of from) if (value > (into.get(key) ?? 0n)) into.set(key, value);
}

/** A container's requests; an unparsable quantity (the API server refuses those) counts as none. */
function requestsOf(container: JsonValue | undefined): Amounts {
  const amounts: Amounts = new Map();
  const resources = asObject(asObject(container)?.resources);
  // Limits stand in for missing requests, as the API server's defaulting does.
  const lists = [asObject(resources?.limits), asObject(resources?.requests)];
  for (const list of lists) {
    for (const [key, text] of Object.entries(list ?? {})) {
      if (typeof text !== 'string' && typeof text !== 'number') continue;
      try {
        amounts.set(key, parseQuantity(String(text)));
      } catch {
        amounts.delete(key);
      }
    }
  }
  return amounts;
}

export function podRequests(pod: JsonObject): Amounts {
  const spec = asObject(pod.spec);
  const total: Amounts = new Map();
  for (const container of asArray(spec?.containers)) add(total, requestsOf(container));
  const sidecars: Amounts = new Map();
  const initSteps: Amounts = new Map();
  for (const container of asArray(spec?.initContainers)) {
    const requests = requestsOf(container);
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
  for (const [key, text] of Object.entries(overhead ?? {})) {
    if (typeof text === 'string' || typeof text === 'number') {
      try {
        total.set(key, (total.get(key) ?? 0n) + parseQuantity(String(text)));
      } catch {
        // Refused by the API server's own validation.
      }
    }
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
