/**
 * Which replica decides this replica's quota admissions: one ledger at a time, through changes of
 * leadership that the replicas do not all see at once.
 *
 * Why: a replica whose API server stops answering it while the API server still calls its
 * webhook (a saturated or partitioned control plane) used to fall out of the one-ledger scheme
 * both ways. As a follower, its view of the lease aged out and it decided alone beside a live
 * leader; as the leader, its renewals stalled, the follower took the lease over, and both decided
 * alone, the old holder not knowing of the new one (it cannot read the lease) and the new one not
 * holding the old one's admissions since its last journal page. Measured in replicas.test.ts.
 *
 * So:
 * - a follower hands its admissions to the holder its last read of the lease names, however old
 *   that read (LeaderElector.leaderAddress): a leader that answers is a leader;
 * - a replica that held the lease keeps deciding, as the ledger, until it sees another holder or is
 *   asked to hand over, even past its own renew deadline (it no longer writes cluster state then);
 * - a new leader that took the lease from a replica that may still be deciding first sends it its
 *   admissions with HANDOVER_HEADER: that replica decides that batch, stops deciding, and answers
 *   with its journal since the new leader's position (so the new leader holds every admission the
 *   old one made), then hands its own admissions to the new leader. If the old holder does not
 *   answer, the new leader decides alone: overshoot bounded by what the old holder admitted since
 *   the new leader's last journal page, as after a kill -9.
 */

/**
 * How long a review waits for a fresh read of the lease before a holder in doubt decides it alone:
 * with the forward's 4 s after it, within the webhooks' 10 s.
 */
export const LEASE_IN_DOUBT_WAIT_MS = 2000;

/** Announces, on a forwarded batch, that the sender leads now and takes the ledger over. */
export const HANDOVER_HEADER = 'x-admission-handover';

/** Where a replica sends its quota admissions, and whether that batch asks for a handover. */
export interface ForwardTarget {
  address: string;
  /** This replica's own address, when the batch asks the old holder to hand over to it. */
  handoverTo?: string;
}

export interface QuotaAuthoritySources {
  /** This replica holds the lease and renewed it within the renew deadline. */
  leads: () => boolean;
  /** The holder the last read of the lease names, when it is another replica. */
  leaderAddress: () => string | undefined;
  /** While this replica leads: the replica it took the lease from, and which term that is. */
  takenOverFrom: () => { address: string; term: number } | undefined;
  /** This replica's own admission address; without one, no successor could be told where it is. */
  advertise?: string;
  /**
   * While this replica is the ledger only by a read of the lease nearly a lease duration old: a
   * promise that settles once a fresh read has ended (bounded), after which target() names the
   * holder that read shows (LeaderElector.leaseInDoubt).
   */
  leaseInDoubt?: () => Promise<void> | undefined;
}

export class QuotaAuthority {
  /** The replica that took the ledger over from this one, until this replica leads again. */
  private successor: string | undefined;
  /** The last term whose handover ended (answered or not): it is asked once. */
  private settledTerm: number | undefined;
  /**
   * The successor a holder this replica forwarded to named (its batch answered undecided): where
   * this replica's admissions go while its own read of the lease still names that holder.
   */
  private redirect: { from: string; to: string } | undefined;

  constructor(private readonly sources: QuotaAuthoritySources) {}

  /** Where this replica's quota admissions go; undefined: it decides them itself, as the ledger. */
  target(): ForwardTarget | undefined {
    if (this.sources.leads()) {
      this.successor = undefined;
      this.redirect = undefined;
      const from = this.sources.takenOverFrom();
      if (from && from.term !== this.settledTerm && this.sources.advertise) {
        return { address: from.address, handoverTo: this.sources.advertise };
      }
      return undefined;
    }
    const leader = this.sources.leaderAddress();
    if (leader) return { address: this.redirect?.from === leader ? this.redirect.to : leader };
    return this.successor ? { address: this.successor } : undefined;
  }

  /**
   * Before this replica decides an admission itself as the ledger without leading: a wait for a
   * fresh read of the lease when its own is nearly a lease duration old (it may have been stopped
   * past a takeover), so that a successor it has not seen yet is asked instead. Undefined: decide.
   */
  beforeDecidingAlone(): Promise<void> | undefined {
    if (this.sources.leads() || this.target() !== undefined) return undefined;
    return this.sources.leaseInDoubt?.();
  }

  /** The new leader's side: the old holder answered the handover, or could not be reached. */
  handoverEnded(): void {
    const from = this.sources.takenOverFrom();
    if (from) this.settledTerm = from.term;
  }

  /**
   * The old holder's side: `address` took the lease over. Called in the same pass that decides
   * the successor's batch and cuts the journal page it gets, so nothing decided here is missing from it.
   */
  handOverTo(address: string): void {
    if (address !== this.sources.advertise) this.successor = address;
  }

  /** The old holder's side: the replica it handed the ledger to, which a batch's sender is told of. */
  successorAddress(): string | undefined {
    return this.successor;
  }

  /**
   * A follower's side: `from`, which its last read of the lease names, answered that `to` took the
   * ledger over. With three or more replicas the others read the new holder a retry period later
   * than the new holder took it; until then their admissions go to `to` instead of being decided here.
   * Whether this is news.
   */
  redirected(from: string, to: string): boolean {
    if (to === this.sources.advertise || (this.redirect?.from === from && this.redirect.to === to))
      return false;
    this.redirect = { from, to };
    return true;
  }

  /**
   * Whether this replica decides admissions other replicas forward: while it leads or is the ledger
   * as far as it knows, not once it knows of a successor (the sender, answered null, decides itself).
   */
  decidesForwarded(): boolean {
    return this.sources.leads() || this.target() === undefined;
  }
}
