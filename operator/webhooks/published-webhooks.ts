/**
 * The webhook entries the leader writes into the configurations: the served table narrowed to what
 * its webhooks could act on in the current state (webhook/narrowing/), so a pod no rule could
 * affect is never sent and never waits on us. Until every watch of the store has listed, the table
 * is published as it is: a state still being read could leave out what a rule governs.
 */
import type { ReachState } from '../../webhook/state.js';
import { narrowWebhooks } from '../../webhook/narrowing/narrow-webhooks.js';
import type { WebhookEntry } from '../../webhook/table.js';

/** What narrowing reads of the store: the state, whether it is read in full, and when it moved. */
export interface NarrowingSource extends ReachState {
  unsynced(): readonly string[];
  readonly reachVersion: number;
}

export class PublishedWebhooks {
  private narrowed: readonly WebhookEntry[] = [];
  private narrowedFrom: { table: readonly WebhookEntry[]; version: number } | undefined;

  constructor(
    private readonly served: () => readonly WebhookEntry[],
    private readonly state: NarrowingSource,
  ) {}

  /** The entries to publish now; narrowed again only when the table or the state's reach moved. */
  readonly entries = (): readonly WebhookEntry[] => {
    const table = this.served();
    if (this.state.unsynced().length > 0) return table;
    const version = this.state.reachVersion;
    if (this.narrowedFrom?.table !== table || this.narrowedFrom.version !== version) {
      this.narrowed = narrowWebhooks(table, this.state);
      this.narrowedFrom = { table, version };
    }
    return this.narrowed;
  };
}
