/**
 * Records Kubernetes Events on objects, so what the operator noticed shows up in
 * `kubectl describe` next to the object. Recording is best effort: a failure is logged, never
 * thrown, because an Event must not stop the work it reports on.
 *
 * Events are rate limited per object and reason: the first is written at once, later ones in
 * the same interval are counted and written as one Event (its `count` and a note in the
 * message) when the interval ends. A writer fighting the operator over an object therefore
 * costs the API server at most one Event write per interval, whatever the rate of the fight.
 */
import { hostname } from 'node:os';
import { CoreV1Api, KubernetesObjectApi, type CoreV1Event, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { truncate } from '../../webhook/util/bounded-text.js';
import { systemClock, type Clock } from './clock.js';
import { abortAfter, API_CALL_TIMEOUT_MS } from './request-timeout.js';

export interface EventTarget {
  apiVersion: string;
  kind: string;
  /** Empty or absent for a cluster-scoped object, whose Events the API server keeps in `default`. */
  namespace?: string;
  name: string;
  uid?: string;
  resourceVersion?: string;
}

export type EventType = 'Normal' | 'Warning';

/** A ConfigMap as the store saw it, as the object an Event is about. */
export function configMapTarget(configMap: {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
}): EventTarget {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    namespace: configMap.namespace,
    name: configMap.name,
    uid: configMap.uid,
    resourceVersion: configMap.resourceVersion,
  };
}

/** The API server refuses Event messages over 1 KiB (counted in bytes). */
const MAX_EVENT_MESSAGE_BYTES = 1024;
/** Where Events about cluster-scoped objects must live (the API server refuses other namespaces). */
const CLUSTER_SCOPED_EVENT_NAMESPACE = 'default';

const DEFAULT_EVENT_INTERVAL_MS = 60_000;
/** Objects and reasons remembered for rate limiting; the oldest is forgotten beyond this. */
const MAX_TRACKED_EVENT_KEYS = 1024;

export interface EventRecorderOptions {
  /** At most one Event write per object and reason in this interval. */
  intervalMs?: number;
  maxTracked?: number;
  clock?: Clock;
  /** Replaces the API call, for tests. */
  write?: (namespace: string, event: CoreV1Event) => Promise<unknown>;
  /**
   * Finds the uid of a target given without one (`kubectl describe` shows only Events that
   * name the object's uid); by default a GET of the object.
   */
  lookupUid?: (target: EventTarget) => Promise<string | undefined>;
}

interface Held {
  target: EventTarget;
  type: EventType;
  message: string;
  count: number;
  firstAt: number;
  lastAt: number;
}

interface Slot {
  lastWriteAt: number;
  held?: Held;
  timer?: unknown;
}

export class EventRecorder {
  private readonly writeEvent: (namespace: string, event: CoreV1Event) => Promise<unknown>;
  private readonly lookupUid: (target: EventTarget) => Promise<string | undefined>;
  private readonly intervalMs: number;
  private readonly maxTracked: number;
  private readonly clock: Clock;
  private readonly slots = new Map<string, Slot>();

  constructor(
    kubeConfig: KubeConfig | undefined,
    private readonly logger: Logger,
    options: EventRecorderOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? DEFAULT_EVENT_INTERVAL_MS;
    this.maxTracked = options.maxTracked ?? MAX_TRACKED_EVENT_KEYS;
    this.clock = options.clock ?? systemClock;
    if (options.write) {
      this.writeEvent = options.write;
      this.lookupUid = options.lookupUid ?? (() => Promise.resolve(undefined));
    } else {
      if (!kubeConfig) throw new Error('EventRecorder needs a kubeconfig or a write function');
      const core = kubeConfig.makeApiClient(CoreV1Api);
      const objects = KubernetesObjectApi.makeApiClient(kubeConfig);
      this.writeEvent = (namespace, body) =>
        core.createNamespacedEvent({ namespace, body }, abortAfter(API_CALL_TIMEOUT_MS));
      this.lookupUid =
        options.lookupUid ??
        (async ({ apiVersion, kind, namespace, name }) => {
          const object = await objects.read({
            apiVersion,
            kind,
            metadata: { name, ...(namespace ? { namespace } : {}) },
          });
          return object.metadata?.uid;
        });
    }
  }

  normal(target: EventTarget, reason: string, message: string): Promise<void> {
    return this.record(target, 'Normal', reason, message);
  }

  warning(target: EventTarget, reason: string, message: string): Promise<void> {
    return this.record(target, 'Warning', reason, message);
  }

  /** Writes the Event now, or holds it for the end of the object's and reason's interval. */
  record(target: EventTarget, type: EventType, reason: string, message: string): Promise<void> {
    const key = [target.kind, target.namespace ?? '', target.name, reason].join('\u0000');
    const now = this.clock.now().getTime();
    const slot = this.slots.get(key);
    if (slot && now - slot.lastWriteAt < this.intervalMs) {
      const held = slot.held ?? { target, type, message, count: 0, firstAt: now, lastAt: now };
      slot.held = { ...held, target, type, message, count: held.count + 1, lastAt: now };
      slot.timer ??= this.timer(key, slot.lastWriteAt + this.intervalMs - now);
      return Promise.resolve();
    }
    if (slot) {
      // The interval is over but its timer has not run yet: what it held goes out first.
      this.slots.delete(key);
      if (slot.timer !== undefined) this.clock.clearTimeout(slot.timer);
      if (slot.held) void this.write(slot.held, reason);
    }
    this.slots.set(key, { lastWriteAt: now });
    this.forgetOldest();
    return this.write({ target, type, message, count: 1, firstAt: now, lastAt: now }, reason);
  }

  /** Writes every held Event now and stops the timers (on shutdown). */
  async flush(): Promise<void> {
    const writes: Promise<void>[] = [];
    for (const [key, slot] of this.slots) {
      if (slot.timer !== undefined) this.clock.clearTimeout(slot.timer);
      slot.timer = undefined;
      if (slot.held) writes.push(this.write(slot.held, reasonOf(key)));
      slot.held = undefined;
    }
    await Promise.all(writes);
  }

  private timer(key: string, delayMs: number): unknown {
    return this.clock.setTimeout(
      () => {
        const slot = this.slots.get(key);
        if (!slot) return;
        slot.timer = undefined;
        const held = slot.held;
        if (!held) return;
        slot.held = undefined;
        slot.lastWriteAt = this.clock.now().getTime();
        void this.write(held, reasonOf(key));
      },
      Math.max(0, delayMs),
      true,
    );
  }

  /** Bounds memory: a forgotten key's held Event is written now rather than lost. */
  private forgetOldest(): void {
    while (this.slots.size > this.maxTracked) {
      const oldest = this.slots.keys().next();
      if (oldest.done) return;
      const slot = this.slots.get(oldest.value);
      this.slots.delete(oldest.value);
      if (slot?.timer !== undefined) this.clock.clearTimeout(slot.timer);
      if (slot?.held) void this.write(slot.held, reasonOf(oldest.value));
    }
  }

  private async write(held: Held, reason: string): Promise<void> {
    const { target, type, count } = held;
    const namespace = target.namespace || CLUSTER_SCOPED_EVENT_NAMESPACE;
    const seconds = Math.max(1, Math.round((held.lastAt - held.firstAt) / 1000));
    const note = count > 1 ? ` (${count} times in ${seconds} s)` : '';
    const message = boundedMessage(held.message, note);
    try {
      const uid = target.uid ?? (await this.lookupUid(target).catch(() => undefined));
      await this.writeEvent(namespace, {
        metadata: { generateName: `${target.name}.`, namespace },
        involvedObject: {
          apiVersion: target.apiVersion,
          kind: target.kind,
          ...(target.namespace ? { namespace: target.namespace } : {}),
          name: target.name,
          ...(uid ? { uid } : {}),
          ...(target.resourceVersion ? { resourceVersion: target.resourceVersion } : {}),
        },
        type,
        reason,
        message,
        source: { component: 'admission-operator' },
        reportingComponent: 'admission-operator',
        reportingInstance: hostname(),
        firstTimestamp: new Date(held.firstAt),
        lastTimestamp: new Date(held.lastAt),
        count,
      });
    } catch (error) {
      this.logger.warn(
        { err: error, reason, object: `${target.namespace ?? ''}/${target.name}` },
        'could not record an Event',
      );
    }
  }
}

function reasonOf(key: string): string {
  return key.slice(key.lastIndexOf('\u0000') + 1);
}

/** `message` cut so that it and `note` fit in MAX_EVENT_MESSAGE_BYTES of UTF-8. */
function boundedMessage(message: string, note: string): string {
  let chars = MAX_EVENT_MESSAGE_BYTES - note.length;
  let text = truncate(message, chars) + note;
  // Each pass drops at least the excess bytes' worth of characters, so this ends within a few.
  while (Buffer.byteLength(text) > MAX_EVENT_MESSAGE_BYTES && chars > 0) {
    chars -= Buffer.byteLength(text) - MAX_EVENT_MESSAGE_BYTES;
    text = truncate(message, Math.max(0, chars)) + note;
  }
  return text;
}
