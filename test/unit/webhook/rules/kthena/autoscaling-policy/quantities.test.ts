import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readGoQuantityJson } from '../../../../../../webhook/util/quantity.js';
import {
  compareQuantities,
  quantityFloat,
  quantityText,
} from '../../../../../../webhook/rules/kthena/autoscaling-policy/quantities.js';

const q = (text: string) => {
  const read = readGoQuantityJson(text);
  assert.ok(read.ok, text);
  return read.value;
};

describe('Kthena quantities (apimachinery v0.34 String, Cmp, AsFloat64Slow)', () => {
  it('writes quantities past int64 as Go does (printed by Go for each text)', () => {
    const cases: [string, string][] = [
      ['1e400', '10e399'],
      ['-1e400', '-10e399'],
      ['1e21', '1e21'],
      // DecimalSI has no suffix past E: Go writes the digits alone.
      ['1000E', '1'],
      ['99999999999999999999', '99999999999999999999'],
      ['16Ei', '9223372036854775807'],
      ['12345678901234567890123m', '12345678901234567890123m'],
      ['1.5e20', '150e18'],
      ['0.1e22', '1e21'],
      ['0.5', '500m'],
      ['-0.1', '-100m'],
    ];
    for (const [text, go] of cases) assert.equal(quantityText(q(text)), go, text);
  });

  it('compares exactly, past int64 too', () => {
    assert.equal(compareQuantities(q('1e400'), q('1e401')), -1);
    assert.equal(compareQuantities(q('2'), q('2000m')), 0);
    assert.equal(compareQuantities(q('-1e400'), q('0')), -1);
    assert.equal(compareQuantities(q('0.25'), q('1')), -1);
  });

  it('reads floats as Go does, infinite ones as ±Inf', () => {
    assert.equal(quantityFloat(q('0.25')), 0.25);
    assert.equal(quantityFloat(q('1e400')), Infinity);
    assert.equal(quantityFloat(q('1e21')), 1e21);
  });
});
