/**
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection package
 * does it: every write is guarded by the resourceVersion read just before, a candidate takes a
 * lease only when it is free or its holder has not renewed it for a whole lease duration
 * (measured on this process's own clock from when it last saw the lease change, so clock skew
 * between replicas does not matter), and a leader that cannot renew within the renew deadline
 * steps down before anyone else may take over.
 *
 * Only the leader writes cluster-wide state (the Secret, the webhook configurations); every
 * replica serves. `isLeader()` is checked right before each write, and is false as soon as the
 * renew deadline has passed since the last successful renewal, even if this process was
 * suspended and no timer has fired yet.
 */
import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import {
  CoordinationV1Api,
  V1MicroTime,
  type ConfigurationOptions,
  type KubeConfig,
  type V1Lease,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { isConflict, isNotFound } from './errors.js';
import { abortAfter } from './request-timeout.js';
import { systemClock, type Clock } from './clock.js';

export const LEASE_NAME = 'admission-operator';
/**
 * Where the leader's admission server can be reached (host:port), so that other replicas can
 * forward it the reviews that must be decided in one place (quota reservations).
 */
const SERVING_ADDRESS_ANNOTATION = 'admission-operator/serving-address';
/** Every write carries one field manager, whichever replica makes it. */
export const FIELD_MANAGER = 'admission-operator';
/**
 * Reads of the lease that reviews in doubt may start, at most one a second: in a burst against an
 * API server that refuses, every review would otherwise start its own.
 */
const DOUBT_READ_SPACING_MS = 1000;

export interface LeaseTimings {
  /** How long a lease is valid after its last renewal, as candidates see it. */
  leaseDurationMs: number;
  /** How long a leader keeps trying to renew before it steps down; shorter than the lease. */
  renewDeadlineMs: number;
  /** How often candidates try to acquire and the leader renews. */
  retryPeriodMs: number;
}

/** What the elector reads from and writes into the Lease. */
export interface LeaseRecord {
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime: Date;
  renewTime: Date;
  leaseTransitions: number;
  /** The holder's admission server address (SERVING_ADDRESS_ANNOTATION), when it advertises one. */
  servingAddress?: string;
}

export interface StoredLease {
  record: Partial<LeaseRecord>;
  resourceVersion: string;
}

/** The Lease API; a conflict (409) or any other failure rejects. */
export interface LeaseApi {
  get(): Promise<StoredLease | undefined>;
  create(record: LeaseRecord): Promise<void>;
  update(record: LeaseRecord, resourceVersion: string): Promise<void>;
}

/** Pod name plus a random suffix, so a restarted pod of the same name is a new candidate. */
export function leaderIdentity(env: NodeJS.ProcessEnv, random = randomBytes(4).toString('hex')): string {
  const pod = env.POD_NAME || env.HOSTNAME || 'admission-operator';
  return `${pod}_${random}`;
}

export interface LeaderElectorOptions {
  identity: string;
  api: LeaseApi;
  timings: LeaseTimings;
  logger: Logger;
  clock?: Clock;
  /** This replica's admission server address, published on the Lease while it leads. */
  advertise?: string;
  /** Called on every transition, before the event is emitted (e.g. the admission_leader gauge). */
  onTransition?: (leading: boolean) => void;
}

function validTimings({ leaseDurationMs, renewDeadlineMs, retryPeriodMs }: LeaseTimings): string | undefined {
  if (renewDeadlineMs >= leaseDurationMs) return 'the renew deadline must be shorter than the lease duration';
  if (retryPeriodMs >= renewDeadlineMs) return 'the retry period must be shorter than the renew deadline';
  if (leaseDurationMs < 1000) return 'the lease duration must be at least 1s';
  return undefined;
}

export class LeaderElector extends EventEmitter<{ started: []; stopped: [] }> {
  private readonly clock: Clock;
  private leading = false;
  /** Monotonic time of the last successful acquire or renew. */
  private lastRenewedAt = 0;
  /**
   * When that attempt began: no other replica can have seen the lease unrenewed for a whole lease
   * duration before this plus the duration (the write it made is later than this).
   */
  private renewStartedAt = 0;
  /** When the last acquire-or-renew attempt began (monotonic). */
  private attemptStartedAt = 0;
  /** The Lease as last seen, and when (monotonic) it was seen to change. */
  private observed: StoredLease | undefined;
  private observedAt = 0;
  /** The holder this replica took the lease from, while it leads: who must hand quota decisions over. */
  private predecessor: { address: string; term: number } | undefined;
  /** Counts this replica's acquisitions, so each term's handover is told from the last one's. */
  private terms = 0;
  private timer: unknown;
  private deadlineTimer: unknown;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly options: LeaderElectorOptions) {
    super();
    const problem = validTimings(options.timings);
    if (problem) throw new Error(`leader election: ${problem}`);
    this.clock = options.clock ?? systemClock;
  }

  get identity(): string {
    return this.options.identity;
  }

  /** True while this replica holds the lease and renewed it within the renew deadline. */
  isLeader(): boolean {
    return (
      this.leading &&
      !this.stopped &&
      this.clock.monotonic() - this.lastRenewedAt < this.options.timings.renewDeadlineMs
    );
  }

  /**
   * Another replica's admission server address, when the last read of the lease names it as the
   * holder (or the last to release it) and this replica does not lead; however long ago that read was. A leader that answers
   * is a leader: a follower whose own reads of the lease fail or lag (its API server saturated)
   * keeps handing quota admissions to the holder it knows, and one that is gone or stuck simply
   * fails to answer (bounded, quota-forwarder.ts). Judging the holder dead by the age of the read
   * made such a follower decide alone beside a live leader. A holder whose renewals stall is
   * replaced through the lease (tryAcquireOrRenew), and then the new leader is read here.
   */
  leaderAddress(): string | undefined {
    const seen = this.observed;
    if (!seen || this.isLeader()) return undefined;
    const { holderIdentity, servingAddress } = seen.record;
    // An empty holder with an address: released by a replica still serving its drain, the ledger
    // until a successor takes over and asks it to hand over.
    if (holderIdentity === this.options.identity || !servingAddress) return undefined;
    return servingAddress === this.options.advertise ? undefined : servingAddress;
  }

  /**
   * While this replica leads: the admission server address of the replica it took the lease from
   * (one that did not release it, or released it while still serving its drain), and which term
   * of this replica's that is. That replica may still be deciding quota alone until it reads the
   * lease, which it may not manage (its API server is why it lost): the new leader asks it to
   * hand over first (quota-authority.ts).
   */
  takenOverFrom(): { address: string; term: number } | undefined {
    return this.isLeader() ? this.predecessor : undefined;
  }

  /**
   * While this replica is the ledger only by its own last read of the lease (it held the lease and
   * could not renew it, and has seen no other holder), once nearly a lease duration has passed
   * since its last renewal began: another replica may hold the lease now, unseen. That is the case
   * of a holder that was stopped (SIGSTOP, a paused VM) past the takeover and resumed, whose
   * successor's handover found it stopped. Then this reads the lease at once (or joins the read in
   * flight) and returns a promise that settles when that read has ended, or after `boundMs`: what
   * the caller decides next reads the holder it names. Undefined when there is no doubt.
   */
  leaseInDoubt(boundMs: number): Promise<void> | undefined {
    if (this.stopped || this.isLeader() || this.lastRenewedAt === 0) return undefined;
    if (this.observed?.record.holderIdentity !== this.options.identity) return undefined;
    const { leaseDurationMs, retryPeriodMs } = this.options.timings;
    if (this.clock.monotonic() - this.renewStartedAt < leaseDurationMs - retryPeriodMs) return undefined;
    if (!this.running) {
      // Read a moment ago and still in doubt (refused, or naming nobody else): decide.
      if (this.clock.monotonic() - this.attemptStartedAt < DOUBT_READ_SPACING_MS) return undefined;
      if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
      this.tick();
    }
    const read = this.running ?? Promise.resolve();
    return new Promise((resolvePromise) => {
      const timer = this.clock.setTimeout(resolvePromise, boundMs);
      void read.finally(() => {
        this.clock.clearTimeout(timer);
        resolvePromise();
      });
    });
  }

  /** Starts trying at once, then every retry period. */
  start(): void {
    this.tick();
  }

  /** One acquire-or-renew attempt, then the next one scheduled. */
  private tick(): void {
    if (this.stopped) return;
    this.running = this.attempt().finally(() => {
      this.running = undefined;
      if (this.stopped) return;
      this.timer = this.clock.setTimeout(() => {
        this.tick();
      }, this.options.timings.retryPeriodMs);
    });
  }

  private async attempt(): Promise<void> {
    const started = this.clock.monotonic();
    this.attemptStartedAt = started;
    let renewed = false;
    try {
      renewed = await this.tryAcquireOrRenew();
    } catch (error) {
      this.options.logger.debug({ err: error }, 'leader election: acquiring or renewing the lease failed');
    }
    if (this.stopped) return;
    if (renewed) {
      this.lastRenewedAt = this.clock.monotonic();
      this.renewStartedAt = started;
      this.armDeadline();
      if (!this.leading) this.transition(true, 'acquired the lease');
    } else if (this.leading && !this.isLeader()) {
      this.transition(false, 'could not renew the lease within the renew deadline');
    } else if (this.leading && this.observed?.record.holderIdentity !== this.options.identity) {
      this.transition(false, `the lease is held by ${String(this.observed?.record.holderIdentity)}`);
    }
  }

  /** Steps down when the deadline passes without a renewal, even if an API call hangs. */
  private armDeadline(): void {
    if (this.deadlineTimer !== undefined) this.clock.clearTimeout(this.deadlineTimer);
    this.deadlineTimer = this.clock.setTimeout(() => {
      this.deadlineTimer = undefined;
      if (this.leading && !this.isLeader())
        this.transition(false, 'could not renew the lease within the renew deadline');
    }, this.options.timings.renewDeadlineMs);
  }

  private transition(leading: boolean, reason: string): void {
    this.leading = leading;
    this.options.onTransition?.(leading);
    this.options.logger.info(
      { identity: this.options.identity, leader: leading, reason },
      leading ? 'became the leader' : 'stopped being the leader',
    );
    this.emit(leading ? 'started' : 'stopped');
  }

  /** True when this replica holds the lease after the call. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const { api, identity, timings } = this.options;
    const now = this.clock.now();
    const record: LeaseRecord = {
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(timings.leaseDurationMs / 1000),
      acquireTime: now,
      renewTime: now,
      leaseTransitions: 0,
      ...(this.options.advertise ? { servingAddress: this.options.advertise } : {}),
    };
    const current = await api.get();
    if (!current) {
      try {
        await api.create(record);
      } catch (error) {
        if (isConflict(error)) return false;
        throw error;
      }
      this.terms += 1;
      this.predecessor = undefined;
      this.observe({ record, resourceVersion: '' });
      return true;
    }
    this.observe(current);
    const held = current.record;
    const holder = held.holderIdentity ?? '';
    const mine = holder === identity;
    if (holder !== '' && !mine) {
      const durationMs = (held.leaseDurationSeconds ?? timings.leaseDurationMs / 1000) * 1000;
      if (this.clock.monotonic() - this.observedAt < durationMs) return false;
    }
    const next: LeaseRecord = mine
      ? {
          ...record,
          acquireTime: held.acquireTime ?? now,
          leaseTransitions: held.leaseTransitions ?? 0,
        }
      : { ...record, leaseTransitions: (held.leaseTransitions ?? 0) + 1 };
    try {
      await api.update(next, current.resourceVersion);
    } catch (error) {
      if (isConflict(error) || isNotFound(error)) return false;
      throw error;
    }
    if (!mine) {
      this.terms += 1;
      const from = held.servingAddress;
      // A restarted pod may come back on the address it had: it has nobody to ask but itself.
      this.predecessor =
        from && from !== this.options.advertise ? { address: from, term: this.terms } : undefined;
    }
    this.observe({ record: next, resourceVersion: '' });
    return true;
  }

  private observe(lease: StoredLease): void {
    const seen = this.observed;
    const changed =
      seen === undefined || lease.resourceVersion === '' || seen.resourceVersion !== lease.resourceVersion;
    this.observed = lease;
    if (changed) this.observedAt = this.clock.monotonic();
  }

  /**
   * Stops electing; a leader steps down at once and then releases the lease (an empty holder),
   * so another replica takes over on its next try instead of waiting for the lease to expire.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    if (this.deadlineTimer !== undefined) this.clock.clearTimeout(this.deadlineTimer);
    await this.running;
    if (!this.leading) return;
    this.transition(false, 'shutting down: releasing the lease');
    try {
      const current = await this.options.api.get();
      if (current?.record.holderIdentity !== this.options.identity) return;
      const now = this.clock.now();
      await this.options.api.update(
        {
          holderIdentity: '',
          leaseDurationSeconds: 1,
          acquireTime: now,
          renewTime: now,
          leaseTransitions: current.record.leaseTransitions ?? 0,
          // Still serving through its drain: the successor asks it to hand quota decisions over.
          ...(this.options.advertise ? { servingAddress: this.options.advertise } : {}),
        },
        current.resourceVersion,
      );
      this.options.logger.info({ identity: this.options.identity }, 'released the lease');
    } catch (error) {
      this.options.logger.warn({ err: error }, 'could not release the lease; it expires by itself');
    }
  }
}

/** The Lease API on the real API server. */
export class KubeLeaseApi implements LeaseApi {
  private readonly api: CoordinationV1Api;

  constructor(
    kubeConfig: KubeConfig,
    private readonly namespace: string,
    private readonly name: string = LEASE_NAME,
    /** Bounds every call, so a hung request cannot hold up the renew loop. */
    private readonly timeoutMs = 5000,
  ) {
    this.api = kubeConfig.makeApiClient(CoordinationV1Api);
  }

  /** The call, aborted (and its connection closed) when it takes longer than timeoutMs. */
  private async bounded<T>(call: (options: ConfigurationOptions) => Promise<T>): Promise<T> {
    try {
      return await call(abortAfter(this.timeoutMs));
    } catch (error) {
      if ((error as { name?: unknown }).name === 'TimeoutError')
        throw new Error(`Lease call timed out after ${this.timeoutMs} ms`, { cause: error });
      throw error;
    }
  }

  async get(): Promise<StoredLease | undefined> {
    let lease: V1Lease;
    try {
      lease = await this.bounded((options) =>
        this.api.readNamespacedLease({ name: this.name, namespace: this.namespace }, options),
      );
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
    const spec = lease.spec ?? {};
    const time = (value: unknown): Date | undefined => {
      if (value instanceof Date) return value;
      const ms = typeof value === 'string' ? Date.parse(value) : NaN;
      return Number.isNaN(ms) ? undefined : new Date(ms);
    };
    const record: Partial<LeaseRecord> = {};
    if (spec.holderIdentity !== undefined) record.holderIdentity = spec.holderIdentity;
    if (spec.leaseDurationSeconds !== undefined) record.leaseDurationSeconds = spec.leaseDurationSeconds;
    if (spec.leaseTransitions !== undefined) record.leaseTransitions = spec.leaseTransitions;
    const acquireTime = time(spec.acquireTime);
    if (acquireTime) record.acquireTime = acquireTime;
    const renewTime = time(spec.renewTime);
    if (renewTime) record.renewTime = renewTime;
    const servingAddress = lease.metadata?.annotations?.[SERVING_ADDRESS_ANNOTATION];
    if (servingAddress) record.servingAddress = servingAddress;
    return { record, resourceVersion: lease.metadata?.resourceVersion ?? '' };
  }

  private body(record: LeaseRecord, resourceVersion?: string): V1Lease {
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: this.name,
        namespace: this.namespace,
        ...(resourceVersion ? { resourceVersion } : {}),
        // Replaced with the rest on every write: a holder that advertises nothing clears it.
        ...(record.servingAddress
          ? { annotations: { [SERVING_ADDRESS_ANNOTATION]: record.servingAddress } }
          : {}),
      },
      spec: {
        holderIdentity: record.holderIdentity,
        leaseDurationSeconds: record.leaseDurationSeconds,
        leaseTransitions: record.leaseTransitions,
        // The API server wants six fractional digits, which V1MicroTime writes.
        acquireTime: new V1MicroTime(record.acquireTime.getTime()),
        renewTime: new V1MicroTime(record.renewTime.getTime()),
      },
    };
  }

  async create(record: LeaseRecord): Promise<void> {
    await this.bounded((options) =>
      this.api.createNamespacedLease(
        { namespace: this.namespace, body: this.body(record), fieldManager: FIELD_MANAGER },
        options,
      ),
    );
  }

  async update(record: LeaseRecord, resourceVersion: string): Promise<void> {
    await this.bounded((options) =>
      this.api.replaceNamespacedLease(
        {
          name: this.name,
          namespace: this.namespace,
          body: this.body(record, resourceVersion),
          fieldManager: FIELD_MANAGER,
        },
        options,
      ),
    );
  }
}
