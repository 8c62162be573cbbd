/**
 * What each quota's pods use: the sum of the requests of its live pods, as the pod watch sees
 * them, plus a ledger of pods admitted but not yet seen by the watch. Without the ledger, two
 * pods admitted in the same instant could both squeeze into the last free capacity.
 *
 * The ledger is per replica: two replicas admitting at once each see only their own pending
 * pods until the watch catches up (milliseconds), so across replicas the bound can be exceeded
 * by the pods admitted within that window.
 *
 * A reservation ends on evidence, never on the clock alone (docs/design.md, "State store"):
 * - the pod watch delivers the pod (added, modified or deleted): from then on the watch counts it;
 * - or the pod watch is known current (a bookmark, a consistent list: `current(at)`) as of a time
 *   RESERVATION_SETTLE_MS past the admission, and the pod has not come: its create failed for
 *   certain (a later webhook or the API server refused it), since the API server gives up on a
 *   request by then and a bookmark follows every event before it.
 * A silent pod watch therefore keeps every reservation: the quota can only get tighter while the
 * watch is stale, never looser. Nothing runs on a timer.
 *
 * The ledger holds LEDGER_MAX_ENTRIES at most. Past it the oldest entry is folded into its quota's
 * overflow: one sum per quota, with the latest admission folded in, released on the same evidence
 * as a whole. A pod of the overflow that the watch delivers then counts twice until the overflow is
 * released (tighter, never looser), and the memory stays one sum per quota.
 */
import type { Amounts } from '../../webhook/rules/koordinator/quota/pod-requests.js';
import { systemClock, type Clock } from '../kube/clock.js';
import { amountsOf, sharedRequests, type PodRecord, type PodRequests } from './pod-record.js';
import { StringInterner } from './interner.js';

export interface PodUsage {
  quota: string;
  requests: Amounts;
}

/** An admitted pod the watch has not delivered yet: what it takes, since when. */
interface Pending {
  readonly quota: string;
  readonly requests: PodRequests;
  readonly admittedAt: number;
}

/** The entries folded out of a full ledger, for one quota: their sum, and the latest admission. */
interface Overflow {
  readonly amounts: Amounts;
  latestAt: number;
}

/**
 * How long after its admission a pod that exists must have reached the pod watch: the API server
 * abandons a request after its --request-timeout (60 s by default; the webhooks after ours run
 * inside it), and its watch cache hears of a write within milliseconds (5 s allowed). A current
 * watch without the pod this long after its admission means the create failed.
 */
export const RESERVATION_SETTLE_MS = 65_000;

/**
 * The most admitted-but-undelivered pods the ledger keeps one by one: about 21 MiB of heap with
 * 253-character pod names (432 bytes an entry, measured). A healthy watch delivers a created pod
 * within milliseconds, so the entries that stay are the refused pods of the last one to two
 * minutes, or everything admitted while the pod watch is stale. Past it, entries are folded into
 * their quota's overflow (see above), so the bound costs exactness of release, not of admission.
 */
export const LEDGER_MAX_ENTRIES = 50_000;

/** What the ledger reports about itself (the operator counts them into its metrics). */
export interface LedgerEvents {
  /** An entry was folded into its quota's overflow to make room (the ledger was full). */
  evicted?: () => void;
  /** `count` entries were released without their pods ever delivered: their creates failed. */
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
   * Oldest admission first (a renewed entry moves to the end), so releasing on evidence or making
   * room takes the entries at the front: O(entries that leave), never a walk of the ledger.
   */
  private readonly ledger = new Map<string, Pending>();
  /** What the ledger's entries add up to, per quota, so a read never walks the ledger either. */
  private readonly pending = new Map<string, Amounts>();
  private readonly overflow = new Map<string, Overflow>();
  private readonly podsByQuota = new Map<string, Set<string>>();
  private readonly maxLedgerEntries: number;

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

  /** How many admitted pods the ledger counts one by one until the watch delivers them. */
  get ledgerSize(): number {
    return this.ledger.size;
  }

  /** How many quotas hold an overflow (entries folded out of a full ledger). */
  get overflowQuotas(): number {
    return this.overflow.size;
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

  /** The pod was deleted, or delivered in a form that counts against no quota (it finished). */
  delete(key: string): void {
    this.forget(key);
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
   * Counts an admitted pod until the watch delivers it, or its create has failed for certain (see
   * `current`). A pod admitted again (a retried create) counts once, from its latest admission. A
   * live pod admitted again (a resize) counts what it grows by, until the watch delivers it again.
   * A full ledger folds its oldest entry into that entry's quota's overflow.
   */
  reserve(key: string, usage: PodUsage): void {
    const live = this.pods.get(key);
    const requests = live ? growth(live, usage) : usage.requests;
    if (requests.size === 0) return;
    const now = this.clock.monotonic();
    this.forget(key);
    if (this.ledger.size >= this.maxLedgerEntries) {
      const oldest = this.ledger.entries().next();
      if (!oldest.done) {
        this.fold(oldest.value[0], oldest.value[1]);
        this.options.evicted?.();
      }
    }
    const quota = quotaNames.intern(usage.quota);
    const shared = sharedRequests(requests);
    this.ledger.set(key, { quota, requests: shared, admittedAt: now });
    this.sumPending(quota, shared, 1n);
  }

  /**
   * The pod watch is known current as of `at` (monotonic ms): every pod created before then has
   * been delivered. Releases the reservations admitted RESERVATION_SETTLE_MS or more before `at`:
   * their pods never came. A stale watch never calls this, so its reservations all stay.
   */
  current(at: number): void {
    const cutoff = at - RESERVATION_SETTLE_MS;
    let count = 0;
    for (const [key, entry] of this.ledger) {
      if (entry.admittedAt > cutoff) break;
      this.forget(key);
      count++;
    }
    for (const [quota, folded] of this.overflow) if (folded.latestAt <= cutoff) this.overflow.delete(quota);
    if (count > 0) this.options.expired?.(count);
  }

  used(quota: string): Amounts {
    const total: Amounts = new Map(this.observed.get(quota) ?? []);
    for (const sum of [this.pending.get(quota), this.overflow.get(quota)?.amounts]) {
      for (const [key, amount] of sum ?? []) {
        const next = (total.get(key) ?? 0n) + amount;
        if (next === 0n) total.delete(key);
        else total.set(key, next);
      }
    }
    return total;
  }

  /** Drops a ledger entry (the watch delivered its pod, its create failed, it is folded), if there is one. */
  private forget(key: string): void {
    const entry = this.ledger.get(key);
    if (!entry) return;
    this.ledger.delete(key);
    this.sumPending(entry.quota, entry.requests, -1n);
  }

  /** Moves an entry into its quota's overflow: still counted, no longer kept by name. */
  private fold(key: string, entry: Pending): void {
    this.forget(key);
    let folded = this.overflow.get(entry.quota);
    if (!folded)
      this.overflow.set(entry.quota, (folded = { amounts: new Map(), latestAt: entry.admittedAt }));
    add(folded.amounts, entry.requests, 1n);
    folded.latestAt = Math.max(folded.latestAt, entry.admittedAt);
  }

  private sumPending(quota: string, requests: PodRequests, sign: 1n | -1n): void {
    let sum = this.pending.get(quota);
    if (!sum) this.pending.set(quota, (sum = new Map<string, bigint>()));
    add(sum, requests, sign);
    if (sum.size === 0) this.pending.delete(quota);
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
