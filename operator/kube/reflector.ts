/**
 * Keeps a sink equal to one collection of the API server, keeping nothing itself: client-go's
 * reflector without its cache. Each object is handed to the sink as raw JSON, the moment it is
 * read, and dropped; the sink keeps what it needs of it (for a pod, a record of a few hundred bytes).
 *
 * How it lists, in order of preference:
 * - a streaming list (a watch with `sendInitialEvents=true`): the API server sends the objects
 *   one event at a time from its watch cache, then a bookmark marking the end, and the same
 *   stream goes on as the watch. At most one object is in memory at a time.
 * - pages of `LIST_PAGE_SIZE` (servers without the WatchList feature, or where it is turned off),
 *   then a watch from the list's resourceVersion. At most one page is in memory at a time.
 *
 * A watch that ends is resumed from the last resourceVersion seen (bookmarks keep it current); a
 * 410 Gone relists. Any other failure retries with exponential backoff. A relist brackets its
 * objects with `listing()` and `listed()`, so the sink can drop what the list no longer has.
 *
 * Nothing trusts a connection to stay alive: a half-open one (a NAT or conntrack entry expired, a
 * balancer failed over) neither delivers nor ends. Every request the reflector makes is watched for
 * silence: a live API server sends a watch a bookmark every BOOKMARK_CADENCE_MS, or ends it at its
 * timeoutSeconds (WATCH_SECONDS, under a minute), so one that has heard nothing for SILENCE_BOUND_MS
 * is taken for dead, dropped and resumed from the last resourceVersion on a new connection
 * (docs/operations.md, "Stalled watches").
 */
import { DEFAULT_BACKOFF } from './reconcile-loop.js';
import { systemClock, type Clock } from './clock.js';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { JsonObject } from '../../webhook/admission/types.js';
import { apiGet, ApiStatusError, forEachLine, readJson } from './api-stream.js';
import { watchLiveness } from './watch-liveness.js';
import { pagedList } from './paged-list.js';

export interface ReflectorSpec {
  /** A short name for logs and metrics, e.g. "pods". */
  kind: string;
  /** The collection's API path, e.g. /api/v1/pods. */
  path: string;
  fieldSelector?: string;
  labelSelector?: string;
  /**
   * The kind comes from a CRD that may not be installed. A 404 then means "none": the reflector
   * counts as synced (empty) and keeps checking quietly until the CRD appears.
   */
  optional?: boolean;
}

/** Where the reflector hands what it reads. Objects are the API server's JSON, metadata included. */
export interface ReflectorSink {
  /** A list starts: every object that exists is put before `listed()`. */
  listing(): void;
  /** The object exists in this form (listed, added or modified). */
  put(object: JsonObject): void;
  /** The object was deleted. */
  remove(object: JsonObject): void;
  /**
   * The list is complete: what was not put since `listing()` no longer exists. `mode` says how the
   * objects were listed; none when nothing was (an optional kind that is not installed).
   */
  listed(mode?: ListMode): void;
}

/** A streaming list (sendInitialEvents), or pages (servers without the WatchList feature turned on). */
export type ListMode = 'stream' | 'pages';

export interface ReflectorOptions {
  /** How to list first; a server that refuses streaming lists is then listed in pages. */
  listMode?: ListMode;
  pageSize?: number;
  /** Called on each restart after a failure (for the informer-restarts metric). */
  onRestart?: (kind: string) => void;
  /** Times its backoff, its watches' deadlines and how long a watch lasted. */
  clock?: Clock;
  /**
   * Called when a request heard nothing for SILENCE_BOUND_MS and was replaced (metrics, an Event);
   * `silentMs` is how long it had been silent.
   */
  onSilent?: (kind: string, silentMs: number) => void;
  /**
   * Called when the collection is known current as of `at` (monotonic ms): a bookmark came, which
   * the API server sends only after every event before it, or a consistent list began then.
   */
  onCurrent?: (kind: string, at: number) => void;
  /**
   * An optional kind only: called with false when its CRD is found absent (a 404), with true when
   * a list of it succeeds, each time that changes, the first time at the first list.
   */
  onInstalled?: (kind: string, installed: boolean) => void;
}

/**
 * How often the API server's watch cache sends a bookmark to a watch that asked for them: every
 * minute (measured on 1.37: gaps of 60-61 s on an idle cluster; 1.30 sends them once its cache of
 * the kind has seen a change since it started, none before; docs/operations.md).
 */
export const BOOKMARK_CADENCE_MS = 60_000;
/**
 * A request that has heard nothing for this long is dead: one bookmark interval (and the longest
 * watch, WATCH_SECONDS.max) plus a quarter for a busy API server, well under the 90 s within which
 * a stalled watch must be replaced. A live watch never gets near it; a list's page arrives in seconds.
 */
export const SILENCE_BOUND_MS = 75_000;

const LIST_PAGE_SIZE = 500;
/** A page larger than this halves the next page's limit: objects can be up to ~1.5 MiB each. */
const PAGE_BYTES_SOFT_LIMIT = 16 * 2 ** 20;
const MIN_PAGE_SIZE = 20;
// The retry policy every loop of the operator follows (reconcile-loop.ts).
const { baseMs: INITIAL_BACKOFF_MS, maxMs: MAX_BACKOFF_MS } = DEFAULT_BACKOFF;
const OPTIONAL_KIND_RECHECK_MS = 5_000;
/**
 * How long a watch is asked to last (timeoutSeconds), spread so that clients do not reconnect at
 * once. Shorter than the silence bound: an API server that sends no bookmarks to an idle watch
 * (1.30 sends none for a kind without a change since it started; measured) still ends it within
 * a minute, so that silence past the bound can only mean a dead connection. A resume is served
 * from the watch cache and costs the API server next to nothing.
 */
export const WATCH_SECONDS = { min: 45, max: 60 } as const;
const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';
/** A watch the server ends sooner than this, with nothing in it, is a failure (backoff), not a timeout. */
const SHORTEST_WATCH_MS = 1000;

/** A watch's timeoutSeconds, spread across WATCH_SECONDS. */
export const watchSeconds = (): number =>
  WATCH_SECONDS.min + Math.floor(Math.random() * (WATCH_SECONDS.max - WATCH_SECONDS.min));

/** A request went silent for SILENCE_BOUND_MS and was dropped: resumed at once, without backoff. */
class SilenceError extends Error {
  override name = 'SilenceError';
  constructor(readonly silentMs: number) {
    super(`heard nothing from the API server for ${Math.round(silentMs / 1000)} s`);
  }
}

interface WatchEvent {
  type?: unknown;
  object?: unknown;
}

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function resourceVersionOf(object: JsonObject): string | undefined {
  const metadata = object.metadata;
  if (!isObject(metadata)) return undefined;
  return typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : undefined;
}

/** The resourceVersion was compacted away (or a continue token expired): only a relist helps. */
const isGone = (error: unknown): boolean => error instanceof ApiStatusError && error.code === 410;
/** Nothing listens where the API server should (it is restarting): no request reached it. */
const refusedConnection = (error: unknown): boolean =>
  error instanceof Error && (error as NodeJS.ErrnoException).code === 'ECONNREFUSED';
/** The longest wait between attempts to reach an API server that refuses connections. */
const CONNECT_RETRY_MAX_MS = 3_000;
/** The server refuses a streaming list (WatchList off, or a server too old to know it). */
const refusesStreaming = (error: unknown): boolean =>
  error instanceof ApiStatusError && [400, 403, 405, 422].includes(error.code);

export class Reflector {
  private resourceVersion: string | undefined;
  private listMode: ListMode;
  private readonly pageSize: number;
  private readonly clock: Clock;
  private backoffMs = INITIAL_BACKOFF_MS;
  private hasSynced = false;
  private stopped = true;
  private abort = new AbortController();
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private readonly syncWaiters: (() => void)[] = [];
  /** relist() was called: the next round lists from scratch. */
  private relistRequested = false;
  /** A streaming list has begun and its closing bookmark has not come. */
  private initialEventsPending = false;
  /** When the streaming list under way was asked for: its objects are the state as of then. */
  private listAskedAt = 0;
  /** When the API server was last heard from (monotonic ms): any byte of any answer. */
  private lastHeard: number | undefined;
  /** An optional kind's CRD as last found: served (true), absent (false), not yet known. */
  private installed: boolean | undefined;
  /** Replacements for silence and relists, since start (tests and the restart target count them). */
  private readonly counts = { silent: 0, lists: 0, resumes: 0 };

  constructor(
    private readonly kubeConfig: KubeConfig,
    private readonly spec: ReflectorSpec,
    private readonly sink: ReflectorSink,
    private readonly logger: Logger,
    private readonly options: ReflectorOptions = {},
  ) {
    // A streaming list ends with a bookmark: without bookmarks (the idle-CPU bench's reference,
    // watch-liveness.ts) it would never end, so that reference lists in pages.
    this.listMode = watchLiveness ? (options.listMode ?? 'stream') : 'pages';
    this.pageSize = options.pageSize ?? LIST_PAGE_SIZE;
    this.clock = options.clock ?? systemClock;
  }

  get kind(): string {
    return this.spec.kind;
  }

  get synced(): boolean {
    return this.hasSynced;
  }

  /** Milliseconds since the API server was last heard from on this kind; undefined before it ever was. */
  silentFor(): number | undefined {
    return this.lastHeard === undefined ? undefined : this.clock.monotonic() - this.lastHeard;
  }

  /** How many times the reflector listed, resumed a watch, or replaced a silent request. */
  get stats(): Readonly<{ silent: number; lists: number; resumes: number }> {
    return { ...this.counts };
  }

  /** Starts listing and watching; resolves once the first list is complete. */
  start(): Promise<void> {
    if (!this.stopped) return this.whenSynced();
    this.stopped = false;
    this.abort = new AbortController();
    this.loop = this.run();
    return this.whenSynced();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    this.wake?.();
    await this.loop;
    this.loop = undefined;
  }

  /**
   * Lists again from scratch, as after a 410 Gone: what the sink holds is put right and what no
   * longer exists dropped. For an admin who suspects the store has drifted (SIGHUP), and the
   * scale bench, which measures the memory a relist takes.
   */
  relist(): void {
    if (this.stopped) return;
    this.relistRequested = true;
    const current = this.abort;
    this.abort = new AbortController();
    current.abort();
    this.wake?.();
  }

  private whenSynced(): Promise<void> {
    if (this.hasSynced) return Promise.resolve();
    return new Promise((resolvePromise) => this.syncWaiters.push(resolvePromise));
  }

  /** A list completed: `installed` false when it found an optional kind's CRD absent. */
  private markSynced(installed = true): void {
    this.backoffMs = INITIAL_BACKOFF_MS;
    if (this.spec.optional && this.installed !== installed) {
      this.installed = installed;
      this.options.onInstalled?.(this.spec.kind, installed);
    }
    if (this.hasSynced) return;
    this.hasSynced = true;
    for (const waiter of this.syncWaiters.splice(0)) waiter();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      if (this.relistRequested) {
        this.relistRequested = false;
        this.resourceVersion = undefined;
      }
      try {
        // A streaming list: the objects as events from the watch cache, then the watch goes on.
        if (this.resourceVersion === undefined && this.listMode === 'stream') await this.watch(true);
        else {
          if (this.resourceVersion === undefined) await this.pagedList();
          await this.watch(false);
        }
      } catch (error) {
        await this.recover(error);
      }
    }
  }

  private async recover(error: unknown): Promise<void> {
    if (this.stopped || this.relistRequested) return;
    if (error instanceof SilenceError) {
      this.counts.silent++;
      this.logger.warn(
        {
          kind: this.spec.kind,
          silentSeconds: Math.round(error.silentMs / 1000),
          resume: this.resourceVersion,
        },
        'watch silent; replacing it',
      );
      this.options.onSilent?.(this.spec.kind, error.silentMs);
      return;
    }
    if (isGone(error)) {
      this.logger.info(
        { kind: this.spec.kind, reason: (error as Error).message.slice(0, 256) },
        'watch expired; listing again',
      );
      this.resourceVersion = undefined;
      return;
    }
    if (this.listMode === 'stream' && this.resourceVersion === undefined && refusesStreaming(error)) {
      this.logger.info(
        { kind: this.spec.kind, reason: (error as Error).message.slice(0, 256) },
        'the API server refuses streaming lists; listing in pages',
      );
      this.listMode = 'pages';
      return;
    }
    if (this.spec.optional && error instanceof ApiStatusError && error.code === 404) {
      // The CRD is absent (or was removed): none of its objects exist.
      this.logger.debug({ kind: this.spec.kind }, 'kind not installed; checking again later');
      this.resourceVersion = undefined;
      this.sink.listing();
      this.sink.listed();
      this.markSynced(false);
      await this.sleep(OPTIONAL_KIND_RECHECK_MS);
      return;
    }
    // A refused connection costs the API server nothing: one restarting is retried every few
    // seconds, so that the state is current again within seconds of its return.
    const delay = refusedConnection(error) ? Math.min(this.backoffMs, CONNECT_RETRY_MAX_MS) : this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
    this.logger.warn(
      {
        kind: this.spec.kind,
        reason: (error instanceof Error ? error.message : String(error)).slice(0, 512),
        retryInMs: delay,
      },
      'watch failed; restarting',
    );
    this.options.onRestart?.(this.spec.kind);
    await this.sleep(delay);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolvePromise) => {
      const clock = this.clock;
      const timer = clock.setTimeout(done, ms);
      function done(): void {
        clock.clearTimeout(timer);
        resolvePromise();
      }
      this.wake = done;
    });
  }

  private selectors(query: URLSearchParams): URLSearchParams {
    if (this.spec.fieldSelector) query.set('fieldSelector', this.spec.fieldSelector);
    if (this.spec.labelSelector) query.set('labelSelector', this.spec.labelSelector);
    return query;
  }

  /** Lists page by page, each page's objects handed over and dropped before the next is read. */
  private async pagedList(): Promise<void> {
    let limit = this.pageSize;
    let listVersion: string | undefined;
    let bytes = 0;
    this.counts.lists++;
    // A list without a resourceVersion is read from etcd: the state as of when it began.
    const began = this.clock.monotonic();
    this.sink.listing();
    // No resuming past an expired snapshot: the watch starts from the list's own, so a 410 relists.
    const pages = pagedList(this.kubeConfig, this.spec.path, {
      limit: () => limit,
      fieldSelector: this.spec.fieldSelector,
      labelSelector: this.spec.labelSelector,
      fetchPage: (query) =>
        this.guarded(async (signal, heard) => {
          bytes = 0;
          const response = await apiGet(this.kubeConfig, this.spec.path, query, signal);
          heard();
          response.on('data', (chunk: Buffer) => {
            bytes += chunk.length;
            heard();
          });
          return readJson(response);
        }),
    });
    for await (const page of pages) {
      listVersion ??= page.resourceVersion;
      for (const item of page.items) this.sink.put(item);
      if (bytes > PAGE_BYTES_SOFT_LIMIT) limit = Math.max(MIN_PAGE_SIZE, Math.floor(limit / 2));
      if (this.stopped) break;
    }
    if (this.stopped) return;
    this.sink.listed('pages');
    this.resourceVersion = listVersion ?? '';
    this.markSynced();
    this.options.onCurrent?.(this.spec.kind, began);
  }

  /**
   * Runs one request under a watchdog: `heard()` marks the API server heard from; when it has not
   * been for SILENCE_BOUND_MS (from the start, for an answer that never begins), the request is
   * aborted and a SilenceError thrown. One timer per request, re-armed for what is left of the
   * bound when it fires: hearing costs an assignment, not a timer.
   */
  private async guarded<T>(request: (signal: AbortSignal, heard: () => void) => Promise<T>): Promise<T> {
    const abort = new AbortController();
    const onStop = (): void => {
      abort.abort();
    };
    this.abort.signal.addEventListener('abort', onStop);
    let last = this.clock.monotonic();
    let silence: SilenceError | undefined;
    const heard = (): void => {
      last = this.clock.monotonic();
      this.lastHeard = last;
    };
    let timer: unknown;
    const arm = (ms: number): void => {
      timer = this.clock.setTimeout(check, ms, true);
    };
    const check = (): void => {
      const quiet = this.clock.monotonic() - last;
      if (quiet < SILENCE_BOUND_MS) {
        arm(SILENCE_BOUND_MS - quiet);
        return;
      }
      silence = new SilenceError(quiet);
      abort.abort();
    };
    if (watchLiveness) arm(SILENCE_BOUND_MS);
    try {
      return await request(abort.signal, heard);
    } catch (error) {
      // A refusal (a 404 for a CRD not installed, a 410) is the API server heard from too.
      if (error instanceof ApiStatusError) heard();
      throw silence ?? error;
    } finally {
      this.clock.clearTimeout(timer);
      this.abort.signal.removeEventListener('abort', onStop);
    }
  }

  /** Follows one watch until the server ends it (its timeoutSeconds), it fails or it goes silent. */
  private async watch(initialEvents: boolean): Promise<void> {
    const query = this.selectors(
      new URLSearchParams(
        watchLiveness
          ? { watch: '1', allowWatchBookmarks: 'true', timeoutSeconds: String(watchSeconds()) }
          : { watch: '1' },
      ),
    );
    if (initialEvents) {
      this.counts.lists++;
      this.listAskedAt = this.clock.monotonic();
      query.set('sendInitialEvents', 'true');
      query.set('resourceVersionMatch', 'NotOlderThan');
    } else {
      this.counts.resumes++;
      query.set('resourceVersion', this.resourceVersion ?? '');
    }
    const started = this.clock.monotonic();
    let events = 0;
    await this.guarded(async (signal, heard) => {
      const response = await apiGet(this.kubeConfig, this.spec.path, query, signal);
      heard();
      if (initialEvents) {
        this.initialEventsPending = true;
        this.sink.listing();
      }
      let failure: Error | undefined;
      await forEachLine(response, (line) => {
        heard();
        events++;
        if (failure !== undefined) return;
        failure = this.handleEvent(line);
        if (failure !== undefined) abort(failure);
      }).catch((error: unknown) => {
        if (failure === undefined) throw error;
      });
      if (failure !== undefined) throw failure;
      function abort(error: Error): void {
        response.destroy(error);
      }
    });
    if (this.initialEventsPending) throw new Error('the streaming list ended before its last object');
    // Something between us and the API server (a proxy, a balancer) closing every watch at once
    // would otherwise make this a busy loop.
    if (events === 0 && this.clock.monotonic() - started < SHORTEST_WATCH_MS)
      throw new Error('the watch ended at once');
    this.backoffMs = INITIAL_BACKOFF_MS;
  }

  /** Applies one watch event; returns what ends the watch (an ERROR event), if anything. */
  private handleEvent(line: string): Error | undefined {
    let event: WatchEvent;
    try {
      event = JSON.parse(line) as WatchEvent;
    } catch {
      return new Error(`${this.spec.path}: a watch event is not JSON`);
    }
    const object = event.object;
    if (!isObject(object)) return new Error(`${this.spec.path}: a watch event carries no object`);
    switch (event.type) {
      case 'ADDED':
      case 'MODIFIED':
        this.sink.put(object);
        break;
      case 'DELETED':
        this.sink.remove(object);
        break;
      case 'BOOKMARK': {
        const metadata = isObject(object.metadata) ? object.metadata : {};
        const annotations = isObject(metadata.annotations) ? metadata.annotations : {};
        if (this.initialEventsPending && annotations[INITIAL_EVENTS_END] === 'true') {
          this.initialEventsPending = false;
          this.resourceVersion = resourceVersionOf(object) ?? '';
          this.sink.listed('stream');
          this.markSynced();
          // The list is the state as of its request; what happened since follows this bookmark.
          this.options.onCurrent?.(this.spec.kind, this.listAskedAt);
        } else if (!this.initialEventsPending) {
          // Sent after every event before it, with the watch cache's latest version: current now.
          this.options.onCurrent?.(this.spec.kind, this.clock.monotonic());
        }
        break;
      }
      case 'ERROR': {
        const code = typeof object.code === 'number' ? object.code : 0;
        const message = typeof object.message === 'string' ? object.message : 'watch error';
        return new ApiStatusError(code, message, typeof object.reason === 'string' ? object.reason : '');
      }
      default:
        return new Error(`${this.spec.path}: unknown watch event type ${String(event.type).slice(0, 64)}`);
    }
    // Until the streaming list has ended, versions are those of single objects, not of a snapshot
    // a watch could resume from: a failure then lists again.
    const version = this.initialEventsPending ? undefined : resourceVersionOf(object);
    if (version !== undefined) this.resourceVersion = version;
    return undefined;
  }
}
