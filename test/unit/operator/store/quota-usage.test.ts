import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LEDGER_TTL_MS, QuotaUsage } from '../../../../operator/store/quota-usage.js';

const cpu = (n: bigint): Map<string, bigint> => new Map([['cpu', n]]);

describe('QuotaUsage', () => {
  it('sums live pods per quota and forgets deleted ones', () => {
    const usage = new QuotaUsage();
    usage.set('ns/a', { quota: 'q', requests: cpu(2n) });
    usage.set('ns/b', { quota: 'q', requests: cpu(3n) });
    usage.set('ns/a', { quota: 'q', requests: cpu(1n) });
    assert.deepEqual(usage.used('q'), cpu(4n));
    usage.delete('ns/b');
    assert.deepEqual(usage.used('q'), cpu(1n));
    assert.deepEqual(usage.podsOf('q'), ['ns/a']);
  });

  it('counts reserved pods until the watch sees them or the ledger entry expires', () => {
    let now = 0;
    const usage = new QuotaUsage(() => now);
    usage.reserve('ns/new', { quota: 'q', requests: cpu(5n) });
    assert.deepEqual(usage.used('q'), cpu(5n));
    usage.set('ns/new', { quota: 'q', requests: cpu(5n) });
    assert.deepEqual(usage.used('q'), cpu(5n), 'seen by the watch: counted once');
    usage.reserve('ns/refused-later', { quota: 'q', requests: cpu(1n) });
    now = LEDGER_TTL_MS + 1;
    assert.deepEqual(usage.used('q'), cpu(5n), 'an admitted pod never seen stops counting');
  });

  it('moves pods when their quota changes', () => {
    const usage = new QuotaUsage();
    usage.set('ns/a', { quota: 'default', requests: cpu(2n) });
    usage.reassign(() => 'bound');
    assert.deepEqual(usage.used('bound'), cpu(2n));
    assert.deepEqual(usage.used('default'), new Map());
  });
});
