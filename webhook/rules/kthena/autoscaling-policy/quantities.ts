/**
 * What Kthena's AutoscalingPolicy validator asks of a `resource.Quantity`: its canonical text
 * (`String()`, and what json.Marshal writes), its `AsFloat64Slow()`, and `Cmp`. A quantity that
 * fits Go's int64 amount goes through webhook/util/quantity.ts; a larger one is held as Go holds
 * it (an inf.Dec: a coefficient and a power of ten, rounded up to nano-units, a binary one capped
 * at 2^63-1) and written as apimachinery's CanonicalizeBytes writes it.
 */
import type { GoQuantity } from '../../../util/quantity.js';
import { BINARY_POWER, canonicalQuantity, DECIMAL_EXPONENT, readQuantity } from '../../../util/quantity.js';

/** Go's zero Quantity, which an absent field decodes to. */
export const ZERO_QUANTITY: GoQuantity = { text: '0', sign: 0, infinite: false };

/** sign × coefficient × 10^exponent. */
interface Decimal {
  negative: boolean;
  coefficient: bigint;
  exponent: number;
}

const CAPPED_UNITS = 2n ** 63n - 1n;
/** Past this many significant digits a coefficient is not built (its text is shown as written). */
const MAX_DIGITS = 200;
const SI_SUFFIX: Readonly<Record<number, string>> = Object.fromEntries(
  Object.entries(DECIMAL_EXPONENT).map(([suffix, exponent]) => [exponent, suffix]),
);
const BINARY_SUFFIXES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
const QUANTITY = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei)|([numkMGTPE]))?$/;

type Format = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

/** The value Go holds for a quantity past its int64 amount, with the format it was written in. */
function bigDecimal(text: string): { value: Decimal; format: Format } | undefined {
  const match = QUANTITY.exec(text.trim());
  if (!match) return undefined;
  const [, sign = '', whole = '', fraction = '', exponentText, binary, si] = match;
  const digits = `${whole}${fraction}`.replace(/^0+/, '');
  const significant = digits.replace(/0+$/, '');
  if (significant.length > MAX_DIGITS) return undefined;
  let coefficient = BigInt(significant || '0');
  let exponent = digits.length - significant.length - fraction.length;
  if (exponentText !== undefined) exponent += Number(exponentText);
  else if (si !== undefined) exponent += DECIMAL_EXPONENT[si] ?? 0;
  if (binary !== undefined) coefficient *= 2n ** BigInt(BINARY_POWER[binary] ?? 0);
  // Go rounds any non-zero amount up to nano-units.
  if (exponent < -9 && coefficient !== 0n) {
    const divisor = 10n ** BigInt(-9 - exponent);
    coefficient = (coefficient + divisor - 1n) / divisor;
    exponent = -9;
  }
  const format: Format =
    binary !== undefined ? 'BinarySI' : exponentText !== undefined ? 'DecimalExponent' : 'DecimalSI';
  const value = { negative: sign === '-' && coefficient !== 0n, coefficient, exponent };
  if (
    format === 'BinarySI' &&
    compareMagnitudes(value, { negative: false, coefficient: CAPPED_UNITS, exponent: 0 }) > 0
  ) {
    return { value: { ...value, coefficient: CAPPED_UNITS, exponent: 0 }, format };
  }
  return { value, format };
}

/** |a| against |b|. */
function compareMagnitudes(a: Decimal, b: Decimal): number {
  if (a.coefficient === 0n || b.coefficient === 0n) {
    return a.coefficient === b.coefficient ? 0 : a.coefficient === 0n ? -1 : 1;
  }
  const orderA = a.coefficient.toString().length + a.exponent;
  const orderB = b.coefficient.toString().length + b.exponent;
  if (orderA !== orderB) return orderA < orderB ? -1 : 1;
  const low = Math.min(a.exponent, b.exponent);
  const x = a.coefficient * 10n ** BigInt(a.exponent - low);
  const y = b.coefficient * 10n ** BigInt(b.exponent - low);
  return x === y ? 0 : x < y ? -1 : 1;
}

/** apimachinery's CanonicalizeBytes of an inf.Dec amount. */
function canonicalBig(value: Decimal, format: Format): string {
  const sign = value.negative ? '-' : '';
  if (value.coefficient === 0n) return '0';
  if (format === 'BinarySI' && value.exponent >= 0) {
    let amount = value.coefficient * 10n ** BigInt(value.exponent);
    let power = 0;
    while (amount % 1024n === 0n) {
      amount /= 1024n;
      power += 1;
    }
    return `${sign}${amount.toString()}${BINARY_SUFFIXES[power] ?? ''}`;
  }
  let { coefficient, exponent } = value;
  while (coefficient % 10n === 0n) {
    coefficient /= 10n;
    exponent += 1;
  }
  while (exponent % 3 !== 0) {
    coefficient *= 10n;
    exponent -= 1;
  }
  // DecimalSI has no suffix past E (10^18): Go then writes the digits alone.
  const suffix =
    format === 'DecimalExponent' ? (exponent === 0 ? '' : `e${exponent}`) : (SI_SUFFIX[exponent] ?? '');
  return `${sign}${coefficient.toString()}${suffix}`;
}

export function quantityText(quantity: GoQuantity): string {
  if (readQuantity(quantity.text).ok) return canonicalQuantity(quantity.text.trim());
  const big = bigDecimal(quantity.text);
  return big ? canonicalBig(big.value, big.format) : quantity.text;
}

function decimalOf(quantity: GoQuantity): Decimal {
  const read = readQuantity(quantity.text);
  if (read.ok)
    return {
      negative: read.value < 0n,
      coefficient: read.value < 0n ? -read.value : read.value,
      exponent: -9,
    };
  return (
    bigDecimal(quantity.text)?.value ?? {
      negative: quantity.sign < 0,
      coefficient: CAPPED_UNITS,
      exponent: 0,
    }
  );
}

export function quantityFloat(quantity: GoQuantity): number {
  if (quantity.infinite) return quantity.sign * Infinity;
  const { negative, coefficient, exponent } = decimalOf(quantity);
  return (negative ? -1 : 1) * Number(`${coefficient.toString()}e${exponent}`);
}

/** `a.Cmp(b)`: -1, 0 or 1. */
export function compareQuantities(a: GoQuantity, b: GoQuantity): number {
  const x = decimalOf(a);
  const y = decimalOf(b);
  const signX = x.coefficient === 0n ? 0 : x.negative ? -1 : 1;
  const signY = y.coefficient === 0n ? 0 : y.negative ? -1 : 1;
  if (signX !== signY) return signX < signY ? -1 : 1;
  const magnitude = compareMagnitudes(x, y);
  return signX < 0 ? -magnitude : magnitude;
}
