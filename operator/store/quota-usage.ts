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

export interface PodUsage {
  quota: string;
  requests: Amounts;
}

interface Pending extends PodUsage {
  expiresAt: number;
}

/** How long an admitted pod counts without the watch seeing it (a later admission step may refuse it). */
export const LEDGER_TTL_MS = 30_000;

function add(into: Amounts, from: Amounts, sign: 1n | -1n): void {
  for (const [key, value] of from) {
    const next = (into.get(key) ?? 0n) + sign * value;
    if (next === 0n) into.delete(key);
    else into.set(key, next);
  }
}

export class QuotaUsage {
  private readonly pods = new Map<string, PodUsage>();
  private readonly observed = new Map<string, Amounts>();
  private readonly ledger = new Map<string, Pending>();
  private readonly podsByQuota = new Map<string, Set<string>>();

  constructor(private readonly clock: () => number = Date.now) {}

  /** A live pod as the watch sees it (key: namespace/name). */
  set(key: string, usage: PodUsage): void {
    this.delete(key);
    this.pods.set(key, usage);
    let sum = this.observed.get(usage.quota);
    if (!sum) this.observed.set(usage.quota, (sum = new Map<string, bigint>()));
    add(sum, usage.requests, 1n);
    let keys = this.podsByQuota.get(usage.quota);
    if (!keys) this.podsByQuota.set(usage.quota, (keys = new Set()));
    keys.add(key);
    this.ledger.delete(key);
  }

  delete(key: string): void {
    const previous = this.pods.get(key);
    if (!previous) return;
    this.pods.delete(key);
    const sum = this.observed.get(previous.quota);
    if (sum) add(sum, previous.requests, -1n);
    this.podsByQuota.get(previous.quota)?.delete(key);
  }

  /** Re-resolves every pod's quota (after quotas or their namespace bindings change). */
  reassign(quotaOf: (key: string, current: string) => string): void {
    for (const [key, usage] of [...this.pods]) {
      const quota = quotaOf(key, usage.quota);
      if (quota !== usage.quota) this.set(key, { ...usage, quota });
    }
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
      else if (pending.quota === quota) add(total, pending.requests, 1n);
    }
    return total;
  }

  /** What the watch counts for one live pod (key: namespace/name), if anything. */
  usageOf(key: string): PodUsage | undefined {
    return this.pods.get(key);
  }

  /** The live pods counted against `quota` (for the delete check). */
  podsOf(quota: string): string[] {
    return [...(this.podsByQuota.get(quota) ?? [])].sort();
  }
}
