/**
 * The skeleton every reconciler of the operator runs on (the webhook configurations, the
 * certificate Secret, the periodic audit): one reconcile at a time, requests that arrive while
 * one runs (watch events, timers) collapse into exactly one more run, a requeue timer for work
 * due later, exponential backoff after failures, and the watches that trigger it.
 *
 * A failure retries after `baseMs`, doubling with every further failure up to `maxMs`, and a
 * success starts again from `baseMs` (client-go's per-item exponential rate limiter), so an API
 * server that refuses us is asked less and less often instead of once a second forever.
 */
import { systemClock, type Clock } from './clock.js';

export interface Backoff {
  /** The delay after the first failure. */
  baseMs: number;
  /** The longest delay, however many failures follow. */
  maxMs: number;
}

export const DEFAULT_BACKOFF: Backoff = { baseMs: 200, maxMs: 30_000 };

/** What the loop watches: any change to it requests a reconcile. */
export interface WatchedSource {
  start(): Promise<void>;
  stop(): Promise<void>;
  readonly synced: boolean;
  on(event: 'add' | 'update' | 'delete', listener: () => void): unknown;
}

export interface ReconcileLoopOptions {
  /** One pass; it may call `requeueAfter` for work due later. Throwing retries with backoff. */
  reconcile: () => Promise<void>;
  /** Told of each failure and how long until the retry (log it, count it). */
  onError: (error: unknown, retryInMs: number) => void;
  /** Watches whose events request a reconcile; started by `start`, stopped by `stop`. */
  watches?: readonly WatchedSource[];
  clock?: Clock;
  backoff?: Backoff;
  /** Its timers alone do not keep the process alive. */
  background?: boolean;
}

/** The delay before retry number `failures` (1 for the first failure). */
function backoffDelay({ baseMs, maxMs }: Backoff, failures: number): number {
  // Capped before exponentiation, so many failures never overflow to Infinity.
  return Math.min(baseMs * 2 ** Math.min(failures - 1, 52), maxMs);
}

export class ReconcileLoop {
  private readonly clock: Clock;
  private readonly backoff: Backoff;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private failures = 0;
  private timer: unknown;
  private timerDueAt = Infinity;

  constructor(private readonly options: ReconcileLoopOptions) {
    this.clock = options.clock ?? systemClock;
    this.backoff = options.backoff ?? DEFAULT_BACKOFF;
    for (const source of options.watches ?? []) {
      for (const event of ['add', 'update', 'delete'] as const) {
        source.on(event, () => {
          this.request();
        });
      }
    }
  }

  /** Starts the watches, waits for them to list, and reconciles once. */
  async start(): Promise<void> {
    await Promise.all((this.options.watches ?? []).map((source) => source.start()));
    this.request();
  }

  /** True when every watch has listed. */
  get synced(): boolean {
    return (this.options.watches ?? []).every((source) => source.synced);
  }

  /** Consecutive failures so far (0 after a success). */
  get failureCount(): number {
    return this.failures;
  }

  /** Reconciles now, or once more right after the reconcile in progress. */
  request(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.loop().finally(() => {
      this.running = undefined;
    });
  }

  /**
   * Requests a reconcile in `delayMs`. The earliest pending one wins; any reconcile that starts
   * meanwhile cancels it, since that reconcile decides again what is due when.
   */
  requeueAfter(delayMs: number): void {
    if (this.stopped) return;
    const dueAt = this.clock.monotonic() + Math.max(0, delayMs);
    if (this.timer !== undefined && this.timerDueAt <= dueAt) return;
    this.cancelRequeue();
    this.timerDueAt = dueAt;
    this.timer = this.clock.setTimeout(
      () => {
        this.timer = undefined;
        this.timerDueAt = Infinity;
        this.request();
      },
      Math.max(0, delayMs),
      this.options.background ?? false,
    );
  }

  /** Stops accepting requests, cancels the requeue, stops the watches, waits for the run in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelRequeue();
    await Promise.all((this.options.watches ?? []).map((source) => source.stop()));
    await this.running;
  }

  private cancelRequeue(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerDueAt = Infinity;
  }

  private async loop(): Promise<void> {
    do {
      this.again = false;
      this.cancelRequeue();
      try {
        await this.options.reconcile();
        this.failures = 0;
      } catch (error) {
        this.failures += 1;
        const delay = backoffDelay(this.backoff, this.failures);
        this.options.onError(error, delay);
        this.requeueAfter(delay);
      }
    } while (this.shouldRunAgain());
  }

  /** Read through a method: requests change these fields while the reconcile awaits. */
  private shouldRunAgain(): boolean {
    return this.again && !this.stopped;
  }
}
