import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { systemClock } from '../../../../operator/kube/clock.js';
import type { PodRecord } from '../../../../operator/store/pod-record.js';
import {
  LEDGER_MAX_ENTRIES,
  QuotaUsage,
  RESERVATION_SETTLE_MS,
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

  it('counts reserved pods until the watch delivers them or is current past them without them', () => {
    let now = 0;
    const usage = new QuotaUsage({ ...systemClock, monotonic: () => now });
    usage.reserve('ns/new', { quota: 'q', requests: cpu(5n) });
    assert.deepEqual(usage.used('q'), cpu(5n));
    usage.set(...pod('ns/new', 'q', 5n));
    assert.deepEqual(usage.used('q'), cpu(5n), 'seen by the watch: counted once');
    usage.reserve('ns/refused-later', { quota: 'q', requests: cpu(1n) });
    now = RESERVATION_SETTLE_MS;
    usage.current(now);
    assert.deepEqual(
      usage.used('q'),
      cpu(5n),
      'an admitted pod the current watch never delivered stops counting',
    );
  });

  it('counts what a resized live pod grows by until the watch delivers it again, and nothing for a shrink', () => {
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
    assert.deepEqual(usage.used('q'), cpu(2000n), 'a growth the watch has not delivered counts');
    now = RESERVATION_SETTLE_MS;
    usage.current(now);
    assert.deepEqual(
      usage.used('q'),
      cpu(1500n),
      'a growth the current watch never delivered stops counting',
    );
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

    it('keeps every reservation, for as long as it takes, while the pod watch is silent', async () => {
      const { clock, usage, events } = ledger();
      for (let i = 0; i < 16; i++) {
        usage.reserve(`ns/p-${i}`, { quota: 'q', requests: cpu(500n) });
        await clock.advance(5_000);
      }
      // Ten minutes of a stalled watch: no bookmark, no event, so no evidence either way.
      await clock.advance(600_000);
      assert.equal(usage.ledgerSize, 16);
      assert.deepEqual(usage.used('q'), cpu(8000n));
      assert.equal(events.expired, 0);
      assert.equal(clock.pendingTimers, 0, 'the ledger keeps no timer');
    });

    it('releases on a current watch only what was admitted the settle time before it', async () => {
      const { clock, usage, events } = ledger();
      const start = clock.monotonic();
      usage.reserve('ns/a', { quota: 'q', requests: cpu(1n) });
      await clock.advance(10_000);
      usage.reserve('ns/b', { quota: 'q', requests: cpu(2n) });
      usage.reserve('ns/c', { quota: 'other', requests: cpu(4n) });
      usage.current(start + RESERVATION_SETTLE_MS - 1);
      assert.equal(usage.ledgerSize, 3, 'a current watch just short of the settle time releases nothing');
      usage.current(start + RESERVATION_SETTLE_MS);
      assert.equal(usage.ledgerSize, 2, 'ns/a never came');
      assert.equal(events.expired, 1);
      assert.deepEqual(usage.used('q'), cpu(2n));
      usage.current(start + 10_000 + RESERVATION_SETTLE_MS);
      assert.equal(usage.ledgerSize, 0);
      assert.equal(events.expired, 3);
      assert.deepEqual(usage.used('other'), new Map());
    });

    it('counts a pod admitted twice once, from its latest admission', async () => {
      const { clock, usage } = ledger();
      const start = clock.monotonic();
      usage.reserve('ns/retried', { quota: 'q', requests: cpu(2n) });
      await clock.advance(20_000);
      usage.reserve('ns/retried', { quota: 'q', requests: cpu(2n) });
      assert.deepEqual(usage.used('q'), cpu(2n));
      assert.equal(usage.ledgerSize, 1);
      usage.current(start + RESERVATION_SETTLE_MS);
      assert.deepEqual(usage.used('q'), cpu(2n), 'its first admission no longer applies');
      usage.current(start + 20_000 + RESERVATION_SETTLE_MS);
      assert.equal(usage.ledgerSize, 0);
    });

    it('drops an entry, and what it added to its quota, when the watch delivers the pod', () => {
      const { usage } = ledger();
      usage.reserve('ns/a', { quota: 'q', requests: cpu(2n) });
      usage.reserve('ns/b', { quota: 'q', requests: cpu(3n) });
      usage.reserve('ns/finished', { quota: 'q', requests: cpu(7n) });
      usage.set(...pod('ns/a', 'q', 2n));
      assert.equal(usage.ledgerSize, 2);
      assert.deepEqual(usage.used('q'), cpu(12n));
      usage.delete('ns/a');
      // Delivered in a form that counts against nothing (it finished), or deleted: delivered all the same.
      usage.delete('ns/finished');
      assert.deepEqual(
        usage.used('q'),
        cpu(3n),
        'a deleted pod no longer counts, the pending one still does',
      );
    });

    it('past its bound folds the oldest entry into its quota, still counted, released on the same evidence', async () => {
      const { clock, usage, events } = ledger(3);
      const start = clock.monotonic();
      for (const [i, name] of ['a', 'b', 'c', 'd', 'e'].entries()) {
        usage.reserve(`ns/${name}`, { quota: 'q', requests: cpu(BigInt(10 ** i)) });
        await clock.advance(1000);
      }
      assert.equal(usage.ledgerSize, 3);
      assert.equal(usage.overflowQuotas, 1);
      assert.equal(events.evicted, 2);
      assert.deepEqual(usage.used('q'), cpu(11111n), 'nothing admitted stops counting');
      usage.set(...pod('ns/a', 'q', 1n));
      assert.deepEqual(
        usage.used('q'),
        cpu(11112n),
        'a folded pod delivered counts twice: tighter, never looser',
      );
      usage.current(start + RESERVATION_SETTLE_MS);
      assert.equal(usage.overflowQuotas, 1, 'the overflow waits for its latest admission (ns/b)');
      usage.current(start + 1000 + RESERVATION_SETTLE_MS);
      assert.equal(usage.overflowQuotas, 0);
      assert.deepEqual(usage.used('q'), cpu(11101n), 'ns/a counted by the watch, c, d and e pending');
      usage.current(start + 10_000 + RESERVATION_SETTLE_MS);
      assert.equal(usage.ledgerSize, 0);
      assert.equal(events.expired, 3, 'the folded entries are not counted as expired');
      assert.deepEqual(usage.used('q'), cpu(1n));
    });

    it('holds LEDGER_MAX_ENTRIES by default', () => {
      const { usage, events } = ledger();
      for (let i = 0; i <= LEDGER_MAX_ENTRIES; i++)
        usage.reserve(`ns/p-${i}`, { quota: 'q', requests: cpu(1n) });
      assert.equal(usage.ledgerSize, LEDGER_MAX_ENTRIES);
      assert.equal(events.evicted, 1);
      assert.deepEqual(usage.used('q'), cpu(BigInt(LEDGER_MAX_ENTRIES) + 1n));
    });
  });
});
