/**
 * What each quota's pods use: the sum of the requests of its live pods, as the pod watch sees
 * them, plus a ledger of pods admitted but not yet seen by the watch. Without the ledger, two
 * pods admitted in the same instant could both squeeze into the last free capacity.
 *
 * The ledger is per replica: two replicas admitting at once each see only their own pending
 * pods until the watch catches up (milliseconds), so across replicas the bound can be exceeded
 * by the pods admitted within that window.
 */
import type { Amounts } from '../../webhook/rules/quota/pod-requests.js';
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

  constructor(private readonly clock: () => number = Date.now) {}

  /** How many live pods are counted. */
  get size(): number {
    return this.pods.size;
  }

  /** A live pod as the watch sees it. */
  set(record: PodRecord): void {
    this.delete(record.key);
    this.pods.set(record.key, record);
    this.count(record, 1n);
    this.ledger.delete(record.key);
  }

  delete(key: string): void {
    const previous = this.pods.get(key);
    if (!previous) return;
    this.pods.delete(key);
    this.count(previous, -1n);
  }

  private count(record: PodRecord, sign: 1n | -1n): void {
    let sum = this.observed.get(record.quota);
    if (!sum) this.observed.set(record.quota, (sum = new Map<string, bigint>()));
    add(sum, record.requests, sign);
    let keys = this.podsByQuota.get(record.quota);
    if (!keys) this.podsByQuota.set(record.quota, (keys = new Set()));
    if (sign > 0n) keys.add(record.key);
    else {
      keys.delete(record.key);
      if (keys.size === 0) this.podsByQuota.delete(record.quota);
      if (sum.size === 0) this.observed.delete(record.quota);
    }
  }

  /** Re-resolves every pod's quota (after quotas or their namespace bindings change). */
  reassign(quotaOf: (record: PodRecord) => string): void {
    for (const record of this.pods.values()) {
      const quota = quotaOf(record);
      if (quota === record.quota) continue;
      this.count(record, -1n);
      record.quota = quota;
      this.count(record, 1n);
    }
  }

  /** Drops the pods that the list of `epoch` did not see: they were deleted meanwhile. */
  sweep(epoch: number): void {
    for (const record of this.pods.values()) if (record.listEpoch !== epoch) this.delete(record.key);
  }

  /** Counts an admitted pod until the watch sees it or LEDGER_TTL_MS passes. */
  reserve(key: string, usage: PodUsage): void {
    if (this.pods.has(key)) return;
    this.ledger.set(key, { ...usage, expiresAt: this.clock() + LEDGER_TTL_MS });
  }

  used(quota: string): Amounts {
    const total: Amounts = new Map(this.observed.get(quota) ?? []);
    const now = this.clock();
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

  /** The live pods counted against `quota` (for the delete check). */
  podsOf(quota: string): string[] {
    return [...(this.podsByQuota.get(quota) ?? [])].sort();
  }
}
