/**
 * The reservations this replica made, most recent last, for followers to hold on the leader's
 * behalf: each batch answer carries the entries a follower has not seen yet (forward-batch.ts).
 *
 * Why: a follower that must decide alone (the leader killed mid-burst) sees the leader's
 * admissions only once their pods reach its watch, and in a burst the API server takes seconds
 * to write a pod it has admitted. Measured with two replicas, the leader killed with half of
 * 1,000 creates decided: 733 to 764 admitted into room for 500, the survivor missing about 250
 * of the leader's admissions. Holding the leader's reservations, it misses only those made
 * since its last batch answer.
 *
 * Bounded: MAX_JOURNAL_ENTRIES kept (a follower further behind gets the oldest kept onwards:
 * the entries it missed were for pods its watch has delivered long since, or whose creates failed),
 * MAX_ENTRIES_PER_ANSWER handed out at once. A follower's first batch answer opens its copy.
 */
import { randomUUID } from 'node:crypto';
import type { Decision } from '../admission/types.js';

export type Reservation = NonNullable<Decision['reserve']>;

/** About 65 s of a steady 250 admissions a second; a few MiB at most. */
export const MAX_JOURNAL_ENTRIES = 16_384;
/** About 0.6 MiB of JSON an answer, well under the forward's answer bound. */
export const MAX_ENTRIES_PER_ANSWER = 4096;

export interface JournalPage {
  /** This journal's identity: a follower that remembers another one's position starts over. */
  id: string;
  /** The position after the last entry handed out. */
  next: number;
  reservations: Reservation[];
}

export class ReservationJournal {
  readonly id = randomUUID();
  private readonly ring: (Reservation | undefined)[] = [];
  /** The position of the next entry appended; entries [next - ring's size, next) are kept. */
  private next = 0;

  append(reservation: Reservation): void {
    this.ring[this.next % MAX_JOURNAL_ENTRIES] = reservation;
    this.next += 1;
  }

  /**
   * The entries from `position` on, of this journal's `id`. A follower new to this journal starts
   * from now: what came before reached its pod watch's list, or is for pods long gone, which it
   * would hold to no purpose until they settle (65 s).
   */
  since(id: string | undefined, position: number): JournalPage {
    const oldest = Math.max(0, this.next - MAX_JOURNAL_ENTRIES);
    const from = id === this.id && Number.isSafeInteger(position) ? Math.max(oldest, position) : this.next;
    const until = Math.min(this.next, from + MAX_ENTRIES_PER_ANSWER);
    const reservations: Reservation[] = [];
    for (let at = from; at < until; at++) {
      const entry = this.ring[at % MAX_JOURNAL_ENTRIES];
      if (entry) reservations.push(entry);
    }
    return { id: this.id, next: until, reservations };
  }
}

/** A page as the batch answer carries it: amounts as decimal strings (JSON has no bigint). */
export function pageJson(page: JournalPage): string {
  return JSON.stringify({
    id: page.id,
    next: page.next,
    reservations: page.reservations.map(({ key, quota, requests }) => ({
      key,
      quota,
      requests: Object.fromEntries([...requests].map(([resource, amount]) => [resource, amount.toString()])),
    })),
  });
}

const MAX_NAME_CHARS = 1024;

/** The page in a batch answer, or undefined when it is not one (the answers still count). */
export function readPage(value: unknown): JournalPage | undefined {
  const page = value as { id?: unknown; next?: unknown; reservations?: unknown } | null;
  if (
    typeof page?.id !== 'string' ||
    typeof page.next !== 'number' ||
    !Number.isSafeInteger(page.next) ||
    !Array.isArray(page.reservations) ||
    page.reservations.length > MAX_ENTRIES_PER_ANSWER
  ) {
    return undefined;
  }
  const reservations: Reservation[] = [];
  for (const item of page.reservations as unknown[]) {
    const entry = item as { key?: unknown; quota?: unknown; requests?: unknown } | null;
    if (
      typeof entry?.key !== 'string' ||
      typeof entry.quota !== 'string' ||
      entry.key.length > MAX_NAME_CHARS ||
      entry.quota.length > MAX_NAME_CHARS ||
      typeof entry.requests !== 'object' ||
      entry.requests === null
    ) {
      return undefined;
    }
    const requests = new Map<string, bigint>();
    for (const [resource, amount] of Object.entries(entry.requests as Record<string, unknown>)) {
      if (typeof amount !== 'string' || !/^\d{1,40}$/.test(amount) || resource.length > MAX_NAME_CHARS)
        return undefined;
      requests.set(resource, BigInt(amount));
    }
    reservations.push({ key: entry.key, quota: entry.quota, requests });
  }
  return { id: page.id, next: page.next, reservations };
}
