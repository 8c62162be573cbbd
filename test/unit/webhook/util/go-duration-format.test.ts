import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatGoDuration, parseGoDuration } from '../../../../webhook/util/go-duration.js';

describe('formatGoDuration', () => {
  // Expected texts are what Go's time.Duration.String() prints for the same nanoseconds.
  const cases: [number, string][] = [
    [0, '0s'],
    [-0, '0s'],
    [30_000, '30s'],
    [60_000, '1m0s'],
    [300_000, '5m0s'],
    [3_600_000, '1h0m0s'],
    [-1000, '-1s'],
    [-60_000, '-1m0s'],
    [1500, '1.5s'],
    [0.000001, '1ns'],
    [0.0003, '300ns'],
    [0.000999, '999ns'],
    [0.001, '1µs'],
    [0.0015, '1.5µs'],
    [0.999999, '999.999µs'],
    [1, '1ms'],
    [1.5, '1.5ms'],
    [100, '100ms'],
    [999.999999, '999.999999ms'],
    [1000, '1s'],
    [59_999.999999, '59.999999999s'],
    [61_000, '1m1s'],
    [1_800_000, '30m0s'],
    [1_860_000, '31m0s'],
    [2_100_000, '35m0s'],
    [3_723_004.005006, '1h2m3.004005006s'],
    [-3_723_004.005006, '-1h2m3.004005006s'],
    [31_536_000_000, '8760h0m0s'],
    [-0.0000005, '0s'],
  ];
  for (const [ms, text] of cases) {
    it(`prints ${String(ms)} ms as ${text}`, () => {
      assert.equal(formatGoDuration(ms), text);
    });
  }

  it("prints parsed durations in Go's canonical form", () => {
    const canonical: [string, string][] = [
      ['30m0.000000001s', '30m0.000000001s'],
      ['1800.000000001s', '30m0.000000001s'],
      ['90s', '1m30s'],
      ['1.5h', '1h30m0s'],
      ['2h45m', '2h45m0s'],
      ['5m', '5m0s'],
      ['-1m', '-1m0s'],
      ['-5s', '-5s'],
      ['300ms', '300ms'],
      ['1us', '1µs'],
      ['1500ns', '1.5µs'],
      ['0.5s', '500ms'],
      ['+0', '0s'],
    ];
    for (const [text, expected] of canonical)
      assert.equal(formatGoDuration(parseGoDuration(text)), expected, text);
  });

  it('refuses what is not a finite number', () => {
    assert.throws(() => formatGoDuration(Number.NaN), RangeError);
    assert.throws(() => formatGoDuration(Number.POSITIVE_INFINITY), RangeError);
  });
});
