import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_SHOWN_VALUE_CHARS, showValue, truncate } from '../../../../webhook/util/bounded-text.js';

describe('truncate', () => {
  it('keeps text within the bound as it is', () => {
    assert.equal(truncate('abc', 3), 'abc');
  });

  it('cuts longer text to the bound and says how much it dropped', () => {
    const cut = truncate('x'.repeat(1000), 100);
    assert.equal(cut.length <= 100, true);
    assert.match(cut, /^x+…\(\d+ more chars\)$/);
    const kept = cut.indexOf('…');
    assert.equal(kept > 70, true);
    assert.equal(cut.endsWith(`(${1000 - kept} more chars)`), true);
  });

  it('never leaves half a surrogate pair at the cut', () => {
    const cut = truncate('😀'.repeat(100), 40);
    const before = cut.slice(0, cut.indexOf('…'));
    assert.equal(before.length % 2, 0);
    assert.equal(/[\ud800-\udbff]$/.test(before), false);
  });
});

describe('showValue', () => {
  it('quotes short values whole', () => {
    assert.equal(showValue('1e50'), '"1e50"');
  });

  it('shows at most a bounded prefix of a huge value', () => {
    const shown = showValue(`1${'0'.repeat(10_000_000)}`);
    assert.equal(shown.length <= MAX_SHOWN_VALUE_CHARS + 2, true);
    assert.match(shown, /more chars\)"$/);
  });
});
