/**
 * What each quota's pods use: the sum of the requests of its live pods, as the pod watch sees
 * them, plus a ledger of pods admitted but not yet seen by the watch. Without the ledger, two
 * pods admitted in the same instant could both squeeze into the last free capacity.
 *
 * The ledger is per replica: two replicas admitting at once each see only their own pending
 * pods until the watch catches up (milliseconds), so across replicas the bound can be exceeded
 * by the pods admitted within that window.
 *
 * The ledger forgets on time, whether or not anything reads it: a timer sweeps its expired
 * entries, and it holds LEDGER_MAX_ENTRIES at most. Before, an entry left only when a review read
 * its quota's use, and each read walked the whole ledger.
 */
import type { Amounts } from '../../webhook/rules/koordinator/quota/pod-requests.js';
import { systemClock, type Clock } from '../kube/clock.js';
import { amountsOf, sharedRequests, type PodRecord, type PodRequests } from './pod-record.js';
import { StringInterner } from './interner.js';

export interface PodUsage {
  quota: string;
  requests: Amounts;
}

/** An admitted pod the watch has not seen yet: what it takes, until when. */
interface Pending {
  readonly quota: string;
  readonly requests: PodRequests;
  readonly expiresAt: number;
}

/** How long an admitted pod counts without the watch seeing it (a later admission step may refuse it). */
export const LEDGER_TTL_MS = 30_000;

/**
 * The most admitted-but-unseen pods the ledger holds: 30 s of admissions at 1,666 pods a second,
 * about 21 MiB of heap with 253-character pod names (432 bytes an entry, measured). Past it the
 * oldest entry goes, and is counted: availability first, so a replica keeps deciding, with a sum
 * that may miss the pods dropped, rather than grow without bound or refuse.
 */
export const LEDGER_MAX_ENTRIES = 50_000;

/** Expired entries are swept together, at most this long after they expired. */
export const LEDGER_SWEEP_SLACK_MS = 500;

/** What the ledger reports about itself (the operator counts them into its metrics). */
export interface LedgerEvents {
  /** An entry left to make room for a new one (the ledger was full). */
  evicted?: () => void;
  /** `count` entries expired without the watch seeing their pods. */
  expired?: (count: number) => void;
}

export interface QuotaUsageOptions extends LedgerEvents {
  /** LEDGER_MAX_ENTRIES unless a test says otherwise. */
  maxLedgerEntries?: number;
}

/** Quota names repeat in every entry: one copy each. */
const quotaNames = new StringInterner();

function add(into: Amounts, { resources, amounts }: PodRequests, sign: 1n | -1n): void {
  for (const [i, key] of resources.entries()) {
    const next = (into.get(key) ?? 0n) + sign * (amounts[i] ?? 0n);
    if (next === 0n) into.delete(key);
    else into.set(key, next);
  }
}

/** What `usage` asks beyond what the watch counts for the live pod: only the resources that grow. */
function growth(live: PodRecord, usage: PodUsage): Amounts {
  if (live.quota !== usage.quota) return new Map();
  const counted = amountsOf(live.requests);
  const grown: Amounts = new Map();
  for (const [key, amount] of usage.requests) {
    const more = amount - (counted.get(key) ?? 0n);
    if (more > 0n) grown.set(key, more);
  }
  return grown;
}

export class QuotaUsage {
  private readonly pods = new Map<string, PodRecord>();
  private readonly observed = new Map<string, Amounts>();
  /**
   * Oldest first: every entry lives LEDGER_TTL_MS on the monotonic clock and a renewed one is
   * moved to the end, so insertion order is expiry order, and expiring or evicting takes the
   * entries at the front: O(entries that leave), never a walk of the ledger.
   */
  private readonly ledger = new Map<string, Pending>();
  /** What the ledger's entries add up to, per quota, so a read never walks the ledger either. */
  private readonly pending = new Map<string, Amounts>();
  private readonly podsByQuota = new Map<string, Set<string>>();
  private readonly maxLedgerEntries: number;
  private sweepTimer: unknown;

  constructor(
    private readonly clock: Clock = systemClock,
    private readonly options: QuotaUsageOptions = {},
  ) {
    this.maxLedgerEntries = options.maxLedgerEntries ?? LEDGER_MAX_ENTRIES;
  }

  /** How many live pods are counted. */
  get size(): number {
    return this.pods.size;
  }

  /** How many admitted pods the ledger counts until the watch sees them. */
  get ledgerSize(): number {
    return this.ledger.size;
  }

  /**
   * A live pod as the watch sees it (key: namespace/name). A pod seen again keeps its slot, so a
   * relist, which sees every pod again, leaves no holes behind in the maps.
   */
  set(key: string, record: PodRecord): void {
    const previous = this.pods.get(key);
    this.pods.set(key, record);
    if (previous) this.sum(previous, -1n);
    this.sum(record, 1n);
    if (previous?.quota !== record.quota) {
      if (previous) this.unfile(key, previous.quota);
      this.file(key, record.quota);
    }
    this.forget(key);
  }

  delete(key: string): void {
    const previous = this.pods.get(key);
    if (!previous) return;
    this.pods.delete(key);
    this.sum(previous, -1n);
    this.unfile(key, previous.quota);
  }

  private sum(record: PodRecord, sign: 1n | -1n): void {
    let sum = this.observed.get(record.quota);
    if (!sum) this.observed.set(record.quota, (sum = new Map<string, bigint>()));
    add(sum, record.requests, sign);
    if (sum.size === 0) this.observed.delete(record.quota);
  }

  private file(key: string, quota: string): void {
    let keys = this.podsByQuota.get(quota);
    if (!keys) this.podsByQuota.set(quota, (keys = new Set()));
    keys.add(key);
  }

  private unfile(key: string, quota: string): void {
    const keys = this.podsByQuota.get(quota);
    keys?.delete(key);
    if (keys?.size === 0) this.podsByQuota.delete(quota);
  }

  /** Re-resolves every pod's quota (after quotas or their namespace bindings change). */
  reassign(quotaOf: (record: PodRecord) => string): void {
    for (const [key, record] of this.pods) {
      const quota = quotaOf(record);
      if (quota === record.quota) continue;
      this.sum(record, -1n);
      this.unfile(key, record.quota);
      record.quota = quota;
      this.sum(record, 1n);
      this.file(key, quota);
    }
  }

  /** Drops the pods that the list of `epoch` did not see: they were deleted meanwhile. */
  sweep(epoch: number): void {
    for (const [key, record] of this.pods) if (record.listEpoch !== epoch) this.delete(key);
  }

  /**
   * Counts an admitted pod until the watch sees it or LEDGER_TTL_MS passes. A pod admitted again
   * (a retried create) counts once, from its latest admission. A live pod admitted again (a
   * resize) counts what it grows by, until the watch sees it again. A full ledger makes room by
   * dropping its oldest entry, the one closest to expiring anyway.
   */
  reserve(key: string, usage: PodUsage): void {
    const live = this.pods.get(key);
    const requests = live ? growth(live, usage) : usage.requests;
    if (requests.size === 0) return;
    const now = this.clock.monotonic();
    this.expire(now);
    this.forget(key);
    if (this.ledger.size >= this.maxLedgerEntries) {
      const oldest = this.ledger.keys().next();
      if (!oldest.done) {
        this.forget(oldest.value);
        this.options.evicted?.();
      }
    }
    const quota = quotaNames.intern(usage.quota);
    const shared = sharedRequests(requests);
    this.ledger.set(key, { quota, requests: shared, expiresAt: now + LEDGER_TTL_MS });
    this.sumPending(quota, shared, 1n);
    this.scheduleSweep(now);
  }

  used(quota: string): Amounts {
    this.expire(this.clock.monotonic());
    const total: Amounts = new Map(this.observed.get(quota) ?? []);
    for (const [key, amount] of this.pending.get(quota) ?? []) {
      const next = (total.get(key) ?? 0n) + amount;
      if (next === 0n) total.delete(key);
      else total.set(key, next);
    }
    return total;
  }

  /** Drops a ledger entry (the watch saw its pod, it expired, or it makes room), if there is one. */
  private forget(key: string): void {
    const entry = this.ledger.get(key);
    if (!entry) return;
    this.ledger.delete(key);
    this.sumPending(entry.quota, entry.requests, -1n);
  }

  private sumPending(quota: string, requests: PodRequests, sign: 1n | -1n): void {
    let sum = this.pending.get(quota);
    if (!sum) this.pending.set(quota, (sum = new Map<string, bigint>()));
    add(sum, requests, sign);
    if (sum.size === 0) this.pending.delete(quota);
  }

  /** Drops the entries expired at `now`: the ones at the front. */
  private expire(now: number): void {
    let count = 0;
    for (const [key, entry] of this.ledger) {
      if (entry.expiresAt > now) break;
      this.forget(key);
      count++;
    }
    if (count > 0) this.options.expired?.(count);
  }

  /**
   * One timer at a time, for the oldest entry (plus a little slack, so that entries expiring
   * close together go in one sweep): expired entries leave without waiting for a read, and an
   * idle replica ends with an empty ledger. It never keeps the process alive by itself.
   */
  private scheduleSweep(now: number): void {
    if (this.sweepTimer !== undefined) return;
    const oldest = this.ledger.values().next();
    if (oldest.done) return;
    const delay = Math.max(0, oldest.value.expiresAt - now) + LEDGER_SWEEP_SLACK_MS;
    this.sweepTimer = this.clock.setTimeout(
      () => {
        this.sweepTimer = undefined;
        const at = this.clock.monotonic();
        this.expire(at);
        this.scheduleSweep(at);
      },
      delay,
      true,
    );
  }

  /** What the watch counts for one live pod (key: namespace/name), if anything. */
  usageOf(key: string): PodUsage | undefined {
    const record = this.pods.get(key);
    return record ? { quota: record.quota, requests: amountsOf(record.requests) } : undefined;
  }

  /** The live pods counted against `quota` (for the is-parent check). */
  podsOf(quota: string): string[] {
    return [...(this.podsByQuota.get(quota) ?? [])].sort();
  }

  /** The live pods labelled for `quota`, a subset of podsOf (a label decides a pod's quota first). */
  labelledPodsOf(quota: string): string[] {
    return this.podsOf(quota).filter((key) => this.pods.get(key)?.quotaLabel === quota);
  }
}
