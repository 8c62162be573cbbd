import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { systemClock } from '../../../../operator/kube/clock.js';
import type { PodRecord } from '../../../../operator/store/pod-record.js';
import { LEDGER_TTL_MS, QuotaUsage } from '../../../../operator/store/quota-usage.js';

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
});
