import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatQuantity, parseQuantity } from '../../../../webhook/util/quantity.js';

describe('quantity', () => {
  const cases: [string, bigint, string][] = [
    ['1', 1_000_000_000n, '1'],
    ['100m', 100_000_000n, '100m'],
    ['0.1', 100_000_000n, '100m'],
    ['.5', 500_000_000n, '500m'],
    ['1.5Gi', 1_610_612_736_000_000_000n, '1536Mi'],
    ['8Gi', 8_589_934_592_000_000_000n, '8Gi'],
    ['1e3', 1_000_000_000_000n, '1k'],
    ['1e-3', 1_000_000n, '1m'],
    ['1000', 1_000_000_000_000n, '1k'],
    ['-2', -2_000_000_000n, '-2'],
    ['1n', 1n, '1n'],
  ];
  for (const [text, nanos, canonical] of cases) {
    it(`reads ${text} exactly and prints it as ${canonical}`, () => {
      assert.equal(parseQuantity(text), nanos);
      assert.equal(formatQuantity(nanos, text), canonical);
    });
  }

  it('sums without float drift', () => {
    assert.equal(formatQuantity(parseQuantity('0.1') + parseQuantity('0.2')), '300m');
    assert.equal(formatQuantity(parseQuantity('4Gi') + parseQuantity('4Gi'), 'Gi'), '8Gi');
  });

  it('rounds below a nano-unit up, as Kubernetes does', () => {
    assert.equal(parseQuantity('1e-12'), 1n);
  });

  it('refuses what is not a quantity', () => {
    for (const text of ['', 'abc', '1x', '1.2.3', 'Gi']) {
      assert.throws(() => parseQuantity(text), /is not a quantity/, text);
    }
  });
});
