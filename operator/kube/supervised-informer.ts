/**
 * A list+watch cache that keeps itself alive. client-node 1.x informers stop for good on a
 * watch or list error; this one restarts them with exponential backoff. A 410 Gone (an
 * expired resourceVersion) makes client-node relist on its own.
 *
 * Its watches ask for bookmarks and are dropped after SILENCE_BOUND_MS without a byte (client-node
 * then resumes them at once from the last resourceVersion), as the store's reflectors are: a
 * half-open connection does not freeze the cache (docs/operations.md, "Stalled watches").
 */
import { DEFAULT_BACKOFF } from './reconcile-loop.js';
import { EventEmitter } from 'node:events';
import {
  ListWatch,
  Watch,
  type ConfigurationOptions,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { systemClock, type Clock } from './clock.js';
import { isNotFound } from './errors.js';
import { SILENCE_BOUND_MS, watchSeconds } from './reflector.js';
import { watchLiveness } from './watch-liveness.js';
import { abortAfter, API_CALL_TIMEOUT_MS } from './request-timeout.js';

/** The longest timer Node.js keeps (about 24.8 days): no inactivity timeout, for the bench's reference. */
const NEVER_MS = 2 ** 31 - 1;

/** A watch the server ends sooner than this is resumed with client-node's backoff, not at once. */
const SHORTEST_WATCH_MS = 1000;

/**
 * client-node's Watch, asking for bookmarks and for a watch of under a minute (as the reflector
 * does, reflector.ts), with its inactivity timeout at the silence bound.
 */
class LiveWatch extends Watch {
  constructor(
    kubeConfig: KubeConfig,
    private readonly clock: Clock,
    private readonly onSilent: () => void,
    /** The API server was heard from: an event, a bookmark, or the end of a watch at its timeout. */
    private readonly heard: () => void,
  ) {
    super(kubeConfig);
    // Typed private, yet the only setting of client-node's inactivity timeout (30 s by default:
    // with no bookmarks asked for, an idle kind was resumed every 30 s).
    Object.assign(this, { requestTimeoutMs: watchLiveness ? SILENCE_BOUND_MS : NEVER_MS });
  }

  override watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    const started = this.clock.monotonic();
    const query = watchLiveness
      ? { ...queryParams, allowWatchBookmarks: true, timeoutSeconds: watchSeconds() }
      : queryParams;
    const heardCallback = (phase: string, apiObj: unknown, watchObj?: unknown): void => {
      this.heard();
      callback(phase, apiObj, watchObj);
    };
    return super.watch(path, query, heardCallback, (error: unknown) => {
      // client-node's name for its inactivity timeout; it resumes such a watch at once, from the
      // last resourceVersion.
      if (error instanceof Error && error.name === 'TimeoutError') {
        this.onSilent();
        done(error);
        return;
      }
      // The server ended the watch at its timeoutSeconds: resumed at once too, where client-node
      // would wait a backoff growing to 30 s on a kind that has not changed.
      if (error === null) this.heard();
      const lasted = this.clock.monotonic() - started;
      done(
        error === null && lasted >= SHORTEST_WATCH_MS
          ? new DOMException('watch ended', 'TimeoutError')
          : error,
      );
    });
  }
}

export interface WatchSpec<T extends KubernetesObject> {
  /** A short name for logs and metrics, e.g. "namespaces". */
  kind: string;
  /** The collection's API path, e.g. /api/v1/namespaces. */
  path: string;
  /**
   * Lists the collection, passing `bounded` to the API call: it aborts the list after
   * `listTimeoutMs`. Unbounded, a list on a connection that went silent under it waits five
   * minutes (undici's own timeout), and the informer with it.
   */
  list: (bounded: ConfigurationOptions) => Promise<KubernetesListObject<T>>;
  /** The bound of one list; API_CALL_TIMEOUT_MS unless a test shortens it. */
  listTimeoutMs?: number;
  labelSelector?: string;
  fieldSelector?: string;
  /**
   * The kind comes from a CRD that may not be installed. A 404 on list then means "none":
   * the informer counts as synced (empty) and keeps checking quietly until the CRD appears.
   */
  optional?: boolean;
}

export interface InformerEvents<T> {
  add: [T];
  update: [T];
  delete: [T];
  /** After every successful (re)list: the cache reflects the server. */
  synced: [];
}

// The retry policy every loop of the operator follows (reconcile-loop.ts).
const { baseMs: INITIAL_BACKOFF_MS, maxMs: MAX_BACKOFF_MS } = DEFAULT_BACKOFF;
const OPTIONAL_KIND_RECHECK_MS = 5_000;

export class SupervisedInformer<T extends KubernetesObject> extends EventEmitter<InformerEvents<T>> {
  private readonly informer: ListWatch<T>;
  private backoffMs = INITIAL_BACKOFF_MS;
  private restartTimer: unknown;
  private failedSinceStart = false;
  private stopped = false;
  private hasSynced = false;
  private lastHeard: number | undefined;

  constructor(
    kubeConfig: KubeConfig,
    private readonly spec: WatchSpec<T>,
    private readonly logger: Logger,
    private readonly onRestart: (kind: string) => void = () => undefined,
    /** Times the restarts' backoff. */
    private readonly clock: Clock = systemClock,
    /** Called when a watch heard nothing for SILENCE_BOUND_MS (`silentMs`) and was replaced. */
    onSilent: (kind: string, silentMs: number) => void = () => undefined,
  ) {
    super();
    this.informer = new ListWatch<T>(
      spec.path,
      new LiveWatch(
        kubeConfig,
        clock,
        () => {
          logger.warn(
            { kind: spec.kind, silentSeconds: SILENCE_BOUND_MS / 1000 },
            'watch silent; replacing it',
          );
          onSilent(spec.kind, SILENCE_BOUND_MS);
        },
        () => {
          this.lastHeard = this.clock.monotonic();
        },
      ),
      () => spec.list(abortAfter(spec.listTimeoutMs ?? API_CALL_TIMEOUT_MS)),
      false,
      spec.labelSelector,
      spec.fieldSelector,
    );
    this.informer.on('add', (obj) => this.emit('add', obj));
    this.informer.on('update', (obj) => this.emit('update', obj));
    this.informer.on('delete', (obj) => this.emit('delete', obj));
    this.informer.on('error', (error: unknown) => {
      this.failedSinceStart = true;
      this.scheduleRestart(error);
    });
  }

  get synced(): boolean {
    return this.hasSynced;
  }

  /** Milliseconds since the API server was last heard from on this watch; undefined before it ever was. */
  silentFor(): number | undefined {
    return this.lastHeard === undefined ? undefined : this.clock.monotonic() - this.lastHeard;
  }

  get kind(): string {
    return this.spec.kind;
  }

  /** Starts listing and watching; resolves once the first list has succeeded. */
  async start(): Promise<void> {
    this.stopped = false;
    await this.attempt();
    if (this.hasSynced) return;
    await new Promise<void>((resolvePromise) => {
      this.once('synced', resolvePromise);
    });
  }

  private async attempt(): Promise<void> {
    this.failedSinceStart = false;
    await this.informer.start();
    if (this.succeeded()) {
      this.lastHeard = this.clock.monotonic();
      this.backoffMs = INITIAL_BACKOFF_MS;
      this.hasSynced = true;
      this.emit('synced');
    }
  }

  /** Whether the attempt that just returned listed without error (the error callback sets the flag). */
  private succeeded(): boolean {
    return !this.failedSinceStart && !this.stopped;
  }

  private scheduleRestart(error: unknown): void {
    if (this.stopped || this.restartTimer !== undefined) return;
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
    if (this.spec.optional && isNotFound(error)) {
      // A CRD installed later should be noticed within seconds, not after the 30 s cap.
      this.backoffMs = Math.min(this.backoffMs, OPTIONAL_KIND_RECHECK_MS);
      this.logger.debug(
        { kind: this.spec.kind, retryInMs: delay },
        'kind not installed; checking again later',
      );
      if (!this.hasSynced) {
        this.hasSynced = true;
        this.emit('synced');
      }
      this.restartTimer = this.clock.setTimeout(() => {
        this.restartTimer = undefined;
        if (!this.stopped) void this.attempt();
      }, delay);
      return;
    }
    this.logger.warn(
      {
        kind: this.spec.kind,
        err: error instanceof Error ? error : new Error(String(error)),
        retryInMs: delay,
      },
      'watch failed; restarting',
    );
    this.onRestart(this.spec.kind);
    this.restartTimer = this.clock.setTimeout(() => {
      this.restartTimer = undefined;
      if (!this.stopped) void this.attempt();
    }, delay);
  }

  get(name: string, namespace?: string): T | undefined {
    return this.informer.get(name, namespace);
  }

  list(namespace?: string): readonly T[] {
    return this.informer.list(namespace);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.restartTimer !== undefined) this.clock.clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    await this.informer.stop();
  }
}
