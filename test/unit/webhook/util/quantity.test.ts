import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  addFormatted,
  canonicalQuantity,
  formatOf,
  formatQuantity,
  goQuantityString,
  parseQuantity,
  readQuantity,
  type QuantityProblem,
} from '../../../../webhook/util/quantity.js';

const NANO = 1_000_000_000n;
const MAX_UNITS = 2n ** 63n - 1n;

function failure(text: string): QuantityProblem {
  const read = readQuantity(text);
  if (read.ok) assert.fail(`${text.slice(0, 40)} should not parse`);
  return read.error;
}

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
    // Suffixes named like Object.prototype members too: no suffix, whatever a plain object answers.
    for (const text of [
      '',
      'abc',
      '1x',
      '1.2.3',
      'Gi',
      '1constructor',
      '5toString',
      '1__proto__',
      '1valueOf',
    ]) {
      assert.throws(() => parseQuantity(text), /is not a quantity/, text);
    }
  });

  it('refuses what is not a quantity with kind invalid', () => {
    for (const text of ['1e', '1e+', 'e3', '+', '-.', '1Ki5', '1KI', '0x10', '1e1.5', '1 Gi']) {
      assert.equal(failure(text).kind, 'invalid', text);
    }
  });

  it('reads the largest magnitude a cluster holds, 2^63-1 units, exactly', () => {
    assert.equal(parseQuantity('9223372036854775807'), MAX_UNITS * NANO);
    assert.equal(parseQuantity('-9223372036854775807'), -MAX_UNITS * NANO);
    assert.equal(parseQuantity('7Ei'), 7n * 2n ** 60n * NANO);
    assert.equal(parseQuantity('9223372036854775806.999999999'), (MAX_UNITS - 1n) * NANO + 999_999_999n);
    // Below the bound by less than a nano still rounds up to the bound, not past it.
    assert.equal(parseQuantity('9223372036854775806.9999999991'), MAX_UNITS * NANO);
  });

  it('refuses as too large anything past 2^63-1 units, positive or negative', () => {
    for (const text of [
      '9223372036854775808',
      '-9223372036854775808',
      '9223372036854775807.000000001',
      '8Ei',
      '-8Ei',
      '9223372036854775808n'.replace('n', 'k'),
      '1e19',
      '10E',
      '1e50000000',
      '1e1000000000',
      '-1e1000000000',
      '1e99999999999999999999',
      '1'.repeat(100_000),
    ]) {
      assert.equal(failure(text).kind, 'too-large', text.slice(0, 40));
    }
  });

  it('quotes at most 64 characters of the value in its message', () => {
    assert.equal(
      failure('1e50000000').message,
      '"1e50000000" is too large: quantities are bounded by 2^63-1 (9223372036854775807) units',
    );
    const long = failure('1'.repeat(100_000)).message;
    assert.ok(long.length < 160, long);
    assert.match(long, /^"1+…\(\d+ more chars\)" is too large/);
    const bad = failure(`${'1'.repeat(100_000)}x`).message;
    assert.ok(bad.length < 160, bad);
    assert.match(bad, /is not a quantity/);
  });

  it('rounds long and tiny fractions up to a nano without reading every digit into a number', () => {
    assert.equal(parseQuantity('1e-99999999999'), 1n);
    assert.equal(parseQuantity('-1e-99999999999'), -1n);
    assert.equal(parseQuantity('0e99999999'), 0n);
    assert.equal(parseQuantity('0e-99999999999'), 0n);
    assert.equal(parseQuantity(`0.${'0'.repeat(100_000)}`), 0n);
    assert.equal(parseQuantity(`0.${'0'.repeat(100_000)}1`), 1n);
    assert.equal(parseQuantity(`0.${'1'.repeat(100_000)}`), 111_111_112n);
    assert.equal(parseQuantity(`1.${'0'.repeat(100_000)}`), NANO);
    assert.equal(parseQuantity(`1.${'0'.repeat(100_000)}1`), NANO + 1n);
    assert.equal(parseQuantity(`${'0'.repeat(100_000)}5`), 5n * NANO);
    // A long mantissa brought back into range by its exponent.
    assert.equal(parseQuantity(`${'1'.repeat(100_000)}e-99990`), 1_111_111_111_111_111_112n);
  });

  it('rounds a binary fraction up exactly, however many digits it has', () => {
    // 0.5Ki = 512 exactly; one more digit anywhere makes it the next nano.
    assert.equal(parseQuantity('0.5Ki'), 512n * NANO);
    assert.equal(parseQuantity(`0.5${'0'.repeat(100_000)}1Ki`), 512n * NANO + 1n);
    // 2^-60 Ei is exactly 1: the 60 decimals of 2^-60 must all count.
    assert.equal(parseQuantity('0.000000000000000000867361737988403547205962240695953369140625Ei'), NANO);
    assert.equal(
      parseQuantity('0.0000000000000000008673617379884035472059622406959533691406251Ei'),
      NANO + 1n,
    );
  });
});

describe('Go’s spelling of quantities', () => {
  // Each pair was checked against Go's resource.Quantity (k8s.io/apimachinery v0.28.7, through the
  // differential oracle's `canonical`): a decimal text Go keeps as written, else its canonical form.
  const spelled: [string, string][] = [
    ['1e3', '1e3'],
    ['1E3', '1E3'],
    ['1e03', '1e03'],
    ['1e2', '100'],
    ['10e3', '10e3'],
    ['1.5e3', '1500'],
    ['1.5', '1500m'],
    ['0.5', '500m'],
    ['0.500', '500m'],
    ['1000', '1k'],
    ['1000m', '1'],
    ['3000m', '3'],
    ['1024Mi', '1Gi'],
    ['1.5Gi', '1536Mi'],
    ['0.1Ki', '102400m'],
    ['1023Ki', '1023Ki'],
    ['2048', '2048'],
    ['007', '007'],
    ['+1', '+1'],
    ['-1500m', '-1500m'],
    ['0', '0'],
    ['00', '0'],
    ['1e-9', '1e-9'],
    ['5e-10', '1e-9'],
  ];
  for (const [text, go] of spelled) {
    it(`writes ${text} as ${go}`, () => {
      assert.equal(canonicalQuantity(text), go);
    });
  }

  it('prints a sum in the format of its first non-zero term, as Go’s Quantity.Add keeps it', () => {
    const gi = { nanos: parseQuantity('8Gi'), format: formatOf('8Gi') };
    const sum = addFormatted(addFormatted(undefined, gi), gi);
    assert.equal(goQuantityString(sum.nanos, sum.format), '16Gi');
    const zero = { nanos: 0n, format: formatOf('0') };
    const fromZero = addFormatted(zero, gi);
    assert.equal(goQuantityString(fromZero.nanos, fromZero.format), '8Gi');
    assert.equal(goQuantityString(sum.nanos + NANO / 2n, 'BinarySI'), '17179869184500m');
    assert.equal(goQuantityString(1000n * NANO, 'DecimalExponent'), '1e3');
  });
});
