import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readGoQuantityJson } from '../../../../webhook/util/quantity.js';

function quantityOf(text: string): { sign: number; infinite: boolean } {
  const result = readGoQuantityJson(text);
  assert.ok(result.ok, `${text} should parse`);
  return { sign: result.value.sign, infinite: result.value.infinite };
}

describe('readGoQuantityJson of a string', () => {
  const valid: [string, number][] = [
    ['1', 1],
    ['100m', 1],
    ['-100m', -1],
    ['+5', 1],
    ['0', 0],
    ['-0', 0],
    ['0.000', 0],
    ['.5', 1],
    ['5.', 1],
    ['1.5Gi', 1],
    ['2Ki', 1],
    ['1Ei', 1],
    ['3n', 1],
    ['3u', 1],
    ['1k', 1],
    ['1E', 1],
    ['1e3', 1],
    ['1E-3', 1],
    ['1e+3', 1],
    ['-2.5e2', -1],
    // Go rounds any non-zero magnitude up to a nano, so a tiny value is still positive.
    ['1e-20', 1],
    ['0.0000000000001', 1],
  ];
  for (const [text, sign] of valid) {
    it(`accepts ${text} (sign ${sign})`, () => {
      assert.equal(quantityOf(text).sign, sign);
    });
  }

  const invalid: [string, RegExp][] = [
    ['', /quantities must match the regular expression/],
    ['abc', /quantities must match the regular expression/],
    ['1.5.5', /quantities must match/],
    ['0x10', /quantities must match/],
    [' 5', /quantities must match/],
    ['5 ', /quantities must match/],
    ['Infinity', /quantities must match/],
    ['1Ki5', /quantities must match/],
    ['1KI', /quantities must match/],
    ['1e1.5', /quantities must match/],
    ['1e', /quantities must match/],
    ['1e3000000000', /unable to parse quantity's suffix/],
  ];
  for (const [text, problem] of invalid) {
    it(`refuses ${JSON.stringify(text)}`, () => {
      const result = readGoQuantityJson(text);
      assert.ok(!result.ok);
      assert.match(result.error, problem);
    });
  }

  it("knows which values Go's AsFloat64Slow reads as infinite", () => {
    // Few digits, decimal: kept exact and uncapped, so the float overflows.
    assert.equal(quantityOf('1e400').infinite, true);
    assert.equal(quantityOf('2e308').infinite, true);
    assert.equal(quantityOf('-1e400').infinite, true);
    assert.equal(quantityOf('1e308').infinite, false);
    // Many digits or a binary suffix: Go goes through inf.Dec and caps at 2^63-1.
    assert.equal(quantityOf('1000000000000000000000e400').infinite, false);
    assert.equal(quantityOf('8Ei').infinite, false);
    assert.equal(quantityOf('0e400').infinite, false);
  });

  it('keeps the text as written', () => {
    const result = readGoQuantityJson('1.50Gi');
    assert.ok(result.ok);
    assert.equal(result.value.text, '1.50Gi');
  });
});

describe('readGoQuantityJson', () => {
  it('reads a bare JSON number as Go reads its digits', () => {
    const five = readGoQuantityJson(5);
    assert.ok(five.ok);
    assert.deepEqual(five.value, { text: '5', sign: 1, infinite: false });
    const negative = readGoQuantityJson(-0.5);
    assert.ok(negative.ok);
    assert.equal(negative.value.sign, -1);
    const tiny = readGoQuantityJson(1e-7);
    assert.ok(tiny.ok);
    assert.equal(tiny.value.text, '1e-7');
    assert.equal(tiny.value.sign, 1);
    const big = readGoQuantityJson(1e21);
    assert.ok(big.ok);
    assert.equal(big.value.text, '1e+21');
  });

  it('treats a number JSON.parse overflowed (1e400) as infinite', () => {
    const result = readGoQuantityJson(Number.POSITIVE_INFINITY);
    assert.ok(result.ok);
    assert.equal(result.value.infinite, true);
    assert.equal(result.value.sign, 1);
  });

  it('reads a string as text', () => {
    assert.ok(readGoQuantityJson('250m').ok);
    assert.ok(!readGoQuantityJson('lots').ok);
  });
});
