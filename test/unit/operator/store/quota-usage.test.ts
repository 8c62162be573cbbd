import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { systemClock } from '../../../../operator/kube/clock.js';
import type { PodRecord } from '../../../../operator/store/pod-record.js';
import {
  LEDGER_MAX_ENTRIES,
  LEDGER_SWEEP_SLACK_MS,
  LEDGER_TTL_MS,
  QuotaUsage,
} from '../../../../operator/store/quota-usage.js';
import { FakeClock } from '../../../harness/fake-clock.js';

const cpu = (n: bigint): Map<string, bigint> => new Map([['cpu', n]]);

function pod(key: string, quota: string, millis: bigint, listEpoch = 0): [string, PodRecord] {
  const namespace = key.slice(0, key.indexOf('/'));
  return [
    key,
    {
      namespace,
      quotaLabel: undefined,
      quota,
      requests: { resources: ['cpu'], amounts: [millis] },
      listEpoch,
    },
  ];
}

describe('QuotaUsage', () => {
  it('sums live pods per quota and forgets deleted ones', () => {
    const usage = new QuotaUsage();
    usage.set(...pod('ns/a', 'q', 2n));
    usage.set(...pod('ns/b', 'q', 3n));
    usage.set(...pod('ns/a', 'q', 1n));
    assert.deepEqual(usage.used('q'), cpu(4n));
    usage.delete('ns/b');
    assert.deepEqual(usage.used('q'), cpu(1n));
    assert.deepEqual(usage.podsOf('q'), ['ns/a']);
    assert.deepEqual(usage.usageOf('ns/a'), { quota: 'q', requests: cpu(1n) });
  });

  it('counts reserved pods until the watch sees them or the ledger entry expires', () => {
    let now = 0;
    const usage = new QuotaUsage({ ...systemClock, monotonic: () => now });
    usage.reserve('ns/new', { quota: 'q', requests: cpu(5n) });
    assert.deepEqual(usage.used('q'), cpu(5n));
    usage.set(...pod('ns/new', 'q', 5n));
    assert.deepEqual(usage.used('q'), cpu(5n), 'seen by the watch: counted once');
    usage.reserve('ns/refused-later', { quota: 'q', requests: cpu(1n) });
    now = LEDGER_TTL_MS + 1;
    assert.deepEqual(usage.used('q'), cpu(5n), 'an admitted pod never seen stops counting');
  });

  it('counts what a resized live pod grows by until the watch sees it again, and nothing for a shrink', () => {
    let now = 0;
    const usage = new QuotaUsage({ ...systemClock, monotonic: () => now });
    usage.set(...pod('ns/a', 'q', 500n));
    usage.reserve('ns/a', { quota: 'q', requests: cpu(1500n) });
    assert.deepEqual(usage.used('q'), cpu(1500n), 'the growth counts before the watch sees the resize');
    usage.set(...pod('ns/a', 'q', 1500n));
    assert.deepEqual(usage.used('q'), cpu(1500n), 'seen by the watch: counted once');
    usage.reserve('ns/a', { quota: 'q', requests: cpu(200n) });
    assert.equal(usage.ledgerSize, 0, 'a shrink reserves nothing');
    usage.reserve('ns/a', { quota: 'q', requests: cpu(2000n) });
    now = LEDGER_TTL_MS + 1;
    assert.deepEqual(usage.used('q'), cpu(1500n), 'a growth never seen stops counting');
  });

  it('moves pods when their quota changes', () => {
    const usage = new QuotaUsage();
    usage.set(...pod('ns/a', 'default', 2n));
    usage.reassign(() => 'bound');
    assert.deepEqual(usage.used('bound'), cpu(2n));
    assert.deepEqual(usage.used('default'), new Map());
    assert.deepEqual(usage.podsOf('bound'), ['ns/a']);
    assert.deepEqual(usage.podsOf('default'), []);
  });

  it('drops on a relist the pods the list did not see', () => {
    const usage = new QuotaUsage();
    usage.set(...pod('ns/kept', 'q', 2n, 1));
    usage.set(...pod('ns/gone', 'q', 3n, 1));
    usage.set(...pod('ns/kept', 'q', 2n, 2));
    usage.sweep(2);
    assert.deepEqual(usage.used('q'), cpu(2n));
    assert.deepEqual(usage.podsOf('q'), ['ns/kept']);
    assert.equal(usage.size, 1);
  });

  describe('its ledger', () => {
    /** A ledger on a fake clock, with what it reported about itself. */
    function ledger(maxLedgerEntries?: number): {
      clock: FakeClock;
      usage: QuotaUsage;
      events: { evicted: number; expired: number };
    } {
      const clock = new FakeClock();
      const events = { evicted: 0, expired: 0 };
      const usage = new QuotaUsage(clock, {
        ...(maxLedgerEntries === undefined ? {} : { maxLedgerEntries }),
        evicted: () => {
          events.evicted++;
        },
        expired: (count) => {
          events.expired += count;
        },
      });
      return { clock, usage, events };
    }

    it('forgets an expired entry within a second of its expiry, with nobody reading', async () => {
      const { clock, usage, events } = ledger();
      usage.reserve('ns/never-created', { quota: 'q', requests: cpu(5n) });
      await clock.advance(LEDGER_TTL_MS - 1);
      assert.equal(usage.ledgerSize, 1, 'still counted just before it expires');
      await clock.advance(1000);
      assert.equal(usage.ledgerSize, 0);
      assert.equal(events.expired, 1);
      assert.equal(clock.pendingTimers, 0, 'an empty ledger keeps no timer');
      assert.deepEqual(usage.used('q'), new Map());
    });

    it('sweeps each entry in its turn: the oldest first, the younger kept until their own expiry', async () => {
      const { clock, usage, events } = ledger();
      usage.reserve('ns/a', { quota: 'q', requests: cpu(1n) });
      await clock.advance(10_000);
      usage.reserve('ns/b', { quota: 'q', requests: cpu(2n) });
      usage.reserve('ns/c', { quota: 'other', requests: cpu(4n) });
      await clock.advance(LEDGER_TTL_MS - 10_000 + LEDGER_SWEEP_SLACK_MS);
      assert.equal(usage.ledgerSize, 2, 'ns/a left, swept without a read');
      assert.equal(events.expired, 1);
      assert.equal(clock.pendingTimers, 1, 'one timer, for the next oldest');
      assert.deepEqual(usage.used('q'), cpu(2n));
      await clock.advance(10_000);
      assert.equal(usage.ledgerSize, 0);
      assert.equal(events.expired, 3);
      assert.deepEqual(usage.used('other'), new Map());
    });

    it('stops counting an entry at its expiry even before the sweep, as reads always did', async () => {
      const { clock, usage } = ledger();
      usage.reserve('ns/a', { quota: 'q', requests: cpu(3n) });
      await clock.advance(LEDGER_TTL_MS - 1);
      assert.deepEqual(usage.used('q'), cpu(3n));
      await clock.advance(1);
      assert.deepEqual(usage.used('q'), new Map());
    });

    it('counts a pod admitted twice once, from its latest admission', async () => {
      const { clock, usage } = ledger();
      usage.reserve('ns/retried', { quota: 'q', requests: cpu(2n) });
      await clock.advance(20_000);
      usage.reserve('ns/retried', { quota: 'q', requests: cpu(2n) });
      assert.deepEqual(usage.used('q'), cpu(2n));
      assert.equal(usage.ledgerSize, 1);
      await clock.advance(LEDGER_TTL_MS - 20_000 + LEDGER_SWEEP_SLACK_MS);
      assert.deepEqual(usage.used('q'), cpu(2n), 'its first expiry no longer applies');
      await clock.advance(20_000);
      assert.equal(usage.ledgerSize, 0);
    });

    it('drops an entry, and what it added to its quota, when the watch sees the pod', () => {
      const { usage } = ledger();
      usage.reserve('ns/a', { quota: 'q', requests: cpu(2n) });
      usage.reserve('ns/b', { quota: 'q', requests: cpu(3n) });
      usage.set(...pod('ns/a', 'q', 2n));
      assert.equal(usage.ledgerSize, 1);
      assert.deepEqual(usage.used('q'), cpu(5n));
      usage.delete('ns/a');
      assert.deepEqual(
        usage.used('q'),
        cpu(3n),
        'a deleted pod no longer counts, the pending one still does',
      );
    });

    it('past its bound drops the oldest entry to keep the newest, and counts it', async () => {
      const { clock, usage, events } = ledger(3);
      for (const [i, name] of ['a', 'b', 'c', 'd'].entries()) {
        usage.reserve(`ns/${name}`, { quota: 'q', requests: cpu(BigInt(10 ** i)) });
        await clock.advance(1000);
      }
      assert.equal(usage.ledgerSize, 3);
      assert.equal(events.evicted, 1);
      assert.deepEqual(usage.used('q'), cpu(1110n), 'ns/a (1) left; b, c and d count');
      await clock.advance(LEDGER_TTL_MS);
      assert.equal(usage.ledgerSize, 0);
      assert.equal(events.expired, 3, 'the evicted entry is not counted as expired too');
    });

    it('expires before it evicts: a ledger full of expired entries makes room without evicting', async () => {
      const { clock, usage, events } = ledger(2);
      usage.reserve('ns/a', { quota: 'q', requests: cpu(1n) });
      usage.reserve('ns/b', { quota: 'q', requests: cpu(1n) });
      // The sweep is due LEDGER_SWEEP_SLACK_MS after the expiry: reserve in between.
      await clock.advance(LEDGER_TTL_MS);
      usage.reserve('ns/c', { quota: 'q', requests: cpu(1n) });
      assert.equal(events.evicted, 0);
      assert.equal(events.expired, 2);
      assert.deepEqual(usage.used('q'), cpu(1n));
    });

    it('holds LEDGER_MAX_ENTRIES by default', () => {
      const { usage, events } = ledger();
      for (let i = 0; i <= LEDGER_MAX_ENTRIES; i++)
        usage.reserve(`ns/p-${i}`, { quota: 'q', requests: cpu(1n) });
      assert.equal(usage.ledgerSize, LEDGER_MAX_ENTRIES);
      assert.equal(events.evicted, 1);
      assert.deepEqual(usage.used('q'), cpu(BigInt(LEDGER_MAX_ENTRIES)));
    });
  });
});
