import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseQuantity, parseQuantityJson } from '../../../../../webhook/rules/kthena/quantity.js';

function quantityOf(text: string): { sign: number; infinite: boolean } {
  const result = parseQuantity(text);
  assert.ok(result.ok, `${text} should parse`);
  return { sign: result.quantity.sign, infinite: result.quantity.infinite };
}

describe('parseQuantity', () => {
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
      const result = parseQuantity(text);
      assert.ok(!result.ok);
      assert.match(result.problem, problem);
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
    const result = parseQuantity('1.50Gi');
    assert.ok(result.ok);
    assert.equal(result.quantity.text, '1.50Gi');
  });
});

describe('parseQuantityJson', () => {
  it('reads a bare JSON number as Go reads its digits', () => {
    const five = parseQuantityJson(5);
    assert.ok(five.ok);
    assert.deepEqual(five.quantity, { text: '5', sign: 1, infinite: false });
    const negative = parseQuantityJson(-0.5);
    assert.ok(negative.ok);
    assert.equal(negative.quantity.sign, -1);
    const tiny = parseQuantityJson(1e-7);
    assert.ok(tiny.ok);
    assert.equal(tiny.quantity.text, '1e-7');
    assert.equal(tiny.quantity.sign, 1);
    const big = parseQuantityJson(1e21);
    assert.ok(big.ok);
    assert.equal(big.quantity.text, '1e+21');
  });

  it('treats a number JSON.parse overflowed (1e400) as infinite', () => {
    const result = parseQuantityJson(Number.POSITIVE_INFINITY);
    assert.ok(result.ok);
    assert.equal(result.quantity.infinite, true);
    assert.equal(result.quantity.sign, 1);
  });

  it('reads a string as text', () => {
    assert.ok(parseQuantityJson('250m').ok);
    assert.ok(!parseQuantityJson('lots').ok);
  });
});
