/**
 * What each quota's pods use: the sum of the requests of its live pods, as the pod watch sees
 * them, plus a ledger of pods admitted but not yet seen by the watch. Without the ledger, two
 * pods admitted in the same instant could both squeeze into the last free capacity.
 *
 * The ledger is per replica: two replicas admitting at once each see only their own pending
 * pods until the watch catches up (milliseconds), so across replicas the bound can be exceeded
 * by the pods admitted within that window.
 */
import type { Amounts } from '../../webhook/rules/koordinator/quota/pod-requests.js';
import { systemClock, type Clock } from '../kube/clock.js';
import { amountsOf, type PodRecord, type PodRequests } from './pod-record.js';

export interface PodUsage {
  quota: string;
  requests: Amounts;
}

interface Pending extends PodUsage {
  expiresAt: number;
}

/** How long an admitted pod counts without the watch seeing it (a later admission step may refuse it). */
export const LEDGER_TTL_MS = 30_000;

function add(into: Amounts, { resources, amounts }: PodRequests, sign: 1n | -1n): void {
  for (const [i, key] of resources.entries()) {
    const next = (into.get(key) ?? 0n) + sign * (amounts[i] ?? 0n);
    if (next === 0n) into.delete(key);
    else into.set(key, next);
  }
}

function addAmounts(into: Amounts, from: Amounts): void {
  add(into, { resources: [...from.keys()], amounts: [...from.values()] }, 1n);
}

export class QuotaUsage {
  private readonly pods = new Map<string, PodRecord>();
  private readonly observed = new Map<string, Amounts>();
  private readonly ledger = new Map<string, Pending>();
  private readonly podsByQuota = new Map<string, Set<string>>();

  constructor(private readonly clock: Clock = systemClock) {}

  /** How many live pods are counted. */
  get size(): number {
    return this.pods.size;
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
    this.ledger.delete(key);
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

  /** Counts an admitted pod until the watch sees it or LEDGER_TTL_MS passes. */
  reserve(key: string, usage: PodUsage): void {
    if (this.pods.has(key)) return;
    this.ledger.set(key, { ...usage, expiresAt: this.clock.monotonic() + LEDGER_TTL_MS });
  }

  used(quota: string): Amounts {
    const total: Amounts = new Map(this.observed.get(quota) ?? []);
    const now = this.clock.monotonic();
    for (const [key, pending] of this.ledger) {
      if (pending.expiresAt <= now) this.ledger.delete(key);
      else if (pending.quota === quota) addAmounts(total, pending.requests);
    }
    return total;
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
