import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseGoDuration } from '../../../../webhook/util/go-duration.js';

describe('parseGoDuration', () => {
  const valid: [string, number][] = [
    ['0', 0],
    ['30s', 30_000],
    ['1m0s', 60_000],
    ['-1m0s', -60_000],
    ['+5s', 5000],
    ['1.5h', 5_400_000],
    ['2h45m', 9_900_000],
    ['300ms', 300],
    ['1us', 0.001],
    ['1µs', 0.001],
    ['.5s', 500],
    ['1.s', 1000],
    ['8760h', 31_536_000_000],
  ];
  for (const [text, ms] of valid) {
    it(`parses ${text}`, () => {
      assert.equal(parseGoDuration(text), ms);
    });
  }
  const invalid: [string, RegExp][] = [
    ['', /invalid duration ""/],
    ['-', /invalid duration "-"/],
    ['1', /missing unit in duration "1"/],
    ['1d', /unknown unit "d" in duration "1d"/],
    ['x1s', /invalid duration "x1s"/],
    ['.s', /invalid duration ".s"/],
    // Units named like Object.prototype members are unknown units, as in Go.
    ['1constructor', /unknown unit "constructor" in duration "1constructor"/],
    ['30s1toString', /unknown unit "toString" in duration "30s1toString"/],
    ['1__proto__', /unknown unit "__proto__" in duration "1__proto__"/],
  ];
  for (const [text, message] of invalid) {
    it(`refuses ${JSON.stringify(text)}`, () => {
      assert.throws(() => parseGoDuration(text), message);
    });
  }
});
