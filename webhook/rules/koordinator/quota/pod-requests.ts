/**
 * A pod's effective resource requests, as the scheduler and Koordinator v1.8.0 count them
 * (component-helpers' PodRequests, v0.35): the containers, plus restartable (sidecar) init
 * containers, or the largest init-container step if that is larger; then the pod-level requests
 * (`spec.resources`, PodLevelResources) replace that sum for the resources they may name (cpu,
 * memory, hugepages-*); then the pod overhead. Go's order of sums is kept, since a sum keeps the
 * format of its first term.
 */
import type { JsonObject, JsonValue } from '../../../admission/types.js';
import {
  addFormatted,
  formatOf,
  quantityOf,
  writtenAs,
  type FormattedAmount,
} from '../../../util/quantity.js';
import { atField, FieldPath, type FieldError } from '../../shared/field-errors.js';
import { asObject, asArray } from '../../../util/json.js';

export type Amounts = Map<string, bigint>;
/** Amounts with the format Go would print each in (messages that quote them). */
export type FormattedAmounts = Map<string, FormattedAmount>;

/**
 * How requests are summed: nano-units alone (quota accounting, which the store runs for every
 * pod), or with Go's format too (a message that prints them as Koordinator does).
 */
interface Arithmetic<V> {
  read(text: string, amount: bigint): V;
  add(a: V | undefined, b: V): V;
  greater(a: V, b: V): boolean;
}

const NANOS: Arithmetic<bigint> = {
  read: (_text, amount) => amount,
  add: (a, b) => (a ?? 0n) + b,
  greater: (a, b) => a > b,
};

const FORMATTED: Arithmetic<FormattedAmount> = {
  read: (text, amount) => ({ nanos: amount, format: formatOf(text) }),
  add: addFormatted,
  greater: (a, b) => a.nanos > b.nanos,
};

function add<V>(into: Map<string, V>, from: Map<string, V>, arithmetic: Arithmetic<V>): void {
  for (const [key, value] of from) into.set(key, arithmetic.add(into.get(key), value));
}

/** component-helpers' maxResourceList: a value replaces the one held only when it is larger. */
function maxInto<V>(into: Map<string, V>, from: Map<string, V>, arithmetic: Arithmetic<V>): void {
  for (const [key, value] of from) {
    const held = into.get(key);
    if (held === undefined || arithmetic.greater(value, held)) into.set(key, value);
  }
}

/**
 * Where a quantity that cannot be read goes: without a list it counts as none (the store, which
 * must count pods that already exist whatever they hold); with one, an error naming the field is
 * added to it (a validating rule, which refuses such a pod).
 */
export type Unreadable = FieldError[] | undefined;

/** The path is built only for a quantity that cannot be read: the store reads every pod. */
function read<V>(
  value: JsonValue,
  path: () => FieldPath,
  bad: Unreadable,
  arithmetic: Arithmetic<V>,
): V | undefined {
  const amount = quantityOf(value);
  if (amount.ok) return arithmetic.read(writtenAs(value), amount.value);
  bad?.push(atField(path(), amount.error));
  return undefined;
}

/** A container's requests. */
function requestsOf<V>(
  container: JsonValue | undefined,
  path: () => FieldPath,
  bad: Unreadable,
  arithmetic: Arithmetic<V>,
): Map<string, V> {
  const amounts = new Map<string, V>();
  const resources = asObject(asObject(container)?.resources);
  // Limits stand in for missing requests, as the API server's defaulting does.
  for (const kind of ['limits', 'requests'] as const) {
    for (const [key, value] of Object.entries(asObject(resources?.[kind]) ?? {})) {
      const amount = read(value, () => path().child('resources', kind).key(key), bad, arithmetic);
      if (amount === undefined) amounts.delete(key);
      else amounts.set(key, amount);
    }
  }
  return amounts;
}

/** component-helpers' IsSupportedPodLevelResource: what `spec.resources` may name. */
export function isPodLevelResource(name: string): boolean {
  return name === 'cpu' || name === 'memory' || name.startsWith('hugepages-');
}

/**
 * The pod-level requests over the containers' sum. A pod-level limit stands in for a request only
 * where no container names the resource, as the API server's defaulting (defaultPodRequests)
 * sets it: otherwise it defaults the pod-level request to the containers' sum, which is what
 * `total` already holds.
 */
function podLevelInto<V>(
  total: Map<string, V>,
  resources: JsonObject | undefined,
  bad: Unreadable,
  arithmetic: Arithmetic<V>,
): void {
  if (!resources) return;
  const requests = asObject(resources.requests) ?? {};
  const at = (kind: string, key: string) => () => FieldPath.of('spec', 'resources', kind).key(key);
  for (const [key, value] of Object.entries(asObject(resources.limits) ?? {})) {
    // Hugepages are not overcommitted: their pod-level request defaults to the limit regardless.
    const fromContainers = total.has(key) && !key.startsWith('hugepages-');
    if (!isPodLevelResource(key) || Object.hasOwn(requests, key) || fromContainers) continue;
    const amount = read(value, at('limits', key), bad, arithmetic);
    if (amount !== undefined) total.set(key, amount);
  }
  for (const [key, value] of Object.entries(requests)) {
    if (!isPodLevelResource(key)) continue;
    const amount = read(value, at('requests', key), bad, arithmetic);
    if (amount === undefined) total.delete(key);
    else total.set(key, amount);
  }
}

/**
 * How far a pod's status is followed: not at all (Koordinator's admission, which reads the spec),
 * or as Kubernetes' ResourceQuota counts a pod since InPlacePodVerticalScaling (UseStatusResources):
 * each container, and each sidecar, at the largest of what its spec asks, what the kubelet
 * actuated (`status.containerStatuses[].resources.requests`) and what it allocated
 * (`allocatedResources`); with a resize the kubelet found infeasible, at the larger of the last
 * two only.
 */
export interface RequestOptions {
  followStatus?: boolean;
}

/** A container's requests as followStatus counts them: `spec` is what requestsOf read. */
function effectiveRequests<V>(
  spec: Map<string, V>,
  status: JsonObject | undefined,
  infeasible: boolean,
  arithmetic: Arithmetic<V>,
): Map<string, V> {
  const resources = asObject(status?.resources);
  if (!status || !resources) return spec;
  const result = infeasible ? new Map<string, V>() : new Map(spec);
  for (const list of [asObject(resources.requests), asObject(status.allocatedResources)]) {
    const read = new Map<string, V>();
    for (const [key, value] of Object.entries(list ?? {})) {
      const amount = quantityOf(value);
      if (amount.ok) read.set(key, arithmetic.read(writtenAs(value), amount.value));
    }
    maxInto(result, read, arithmetic);
  }
  return result;
}

/** The container statuses by name, and whether the kubelet found the pod's resize infeasible. */
function statusesOf(pod: JsonObject): { byName: Map<string, JsonObject>; infeasible: boolean } {
  const status = asObject(pod.status);
  const byName = new Map<string, JsonObject>();
  for (const list of [status?.containerStatuses, status?.initContainerStatuses]) {
    for (const entry of asArray(list)) {
      const object = asObject(entry);
      if (object && typeof object.name === 'string') byName.set(object.name, object);
    }
  }
  const pending = asArray(status?.conditions).find((c) => asObject(c)?.type === 'PodResizePending');
  return { byName, infeasible: asObject(pending)?.reason === 'Infeasible' };
}

/** A container's requests, followed into its status when `statuses` are read (RequestOptions). */
function followed<V>(
  container: JsonValue,
  requests: Map<string, V>,
  statuses: ReturnType<typeof statusesOf> | undefined,
  arithmetic: Arithmetic<V>,
): Map<string, V> {
  if (!statuses) return requests;
  const name = asObject(container)?.name;
  const status = typeof name === 'string' ? statuses.byName.get(name) : undefined;
  return effectiveRequests(requests, status, statuses.infeasible, arithmetic);
}

function sumRequests<V>(
  pod: JsonObject,
  bad: Unreadable,
  arithmetic: Arithmetic<V>,
  options: RequestOptions = {},
): Map<string, V> {
  const spec = asObject(pod.spec);
  const statuses = options.followStatus ? statusesOf(pod) : undefined;
  const total = new Map<string, V>();
  for (const [index, container] of asArray(spec?.containers).entries())
    add(
      total,
      followed(
        container,
        requestsOf(container, () => FieldPath.of('spec', 'containers').index(index), bad, arithmetic),
        statuses,
        arithmetic,
      ),
      arithmetic,
    );
  const sidecars = new Map<string, V>();
  const initSteps = new Map<string, V>();
  for (const [index, container] of asArray(spec?.initContainers).entries()) {
    const declared = requestsOf(
      container,
      () => FieldPath.of('spec', 'initContainers').index(index),
      bad,
      arithmetic,
    );
    // PodRequests follows the status of sidecars only: an init container has finished by the
    // time a resize could be actuated.
    if (asObject(container)?.restartPolicy === 'Always') {
      const requests = followed(container, declared, statuses, arithmetic);
      add(total, requests, arithmetic);
      add(sidecars, requests, arithmetic);
      maxInto(initSteps, sidecars, arithmetic);
    } else {
      const step = new Map<string, V>();
      add(step, declared, arithmetic);
      add(step, sidecars, arithmetic);
      maxInto(initSteps, step, arithmetic);
    }
  }
  maxInto(total, initSteps, arithmetic);
  podLevelInto(total, asObject(spec?.resources), bad, arithmetic);
  const overhead = asObject(spec?.overhead);
  for (const [key, value] of Object.entries(overhead ?? {})) {
    const amount = read(value, () => FieldPath.of('spec', 'overhead').key(key), bad, arithmetic);
    if (amount !== undefined) total.set(key, arithmetic.add(total.get(key), amount));
  }
  return total;
}

export function podRequests(pod: JsonObject, bad?: Unreadable, options?: RequestOptions): Amounts {
  return sumRequests(pod, bad, NANOS, options);
}

/** podRequests with the format Go's sums keep (a sum takes its first non-zero term's), for messages. */
export function podRequestsFormatted(
  pod: JsonObject,
  bad?: Unreadable,
  options?: RequestOptions,
): FormattedAmounts {
  return sumRequests(pod, bad, FORMATTED, options);
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
