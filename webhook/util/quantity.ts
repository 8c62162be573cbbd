/**
 * Exact Kubernetes quantity arithmetic for the quota rules: sums and comparisons must not
 * drift the way floats do ("0.1" + "0.2" CPUs). A quantity becomes a bigint count of
 * nano-units, the finest unit Kubernetes has; anything finer rounds up, as Kubernetes does.
 * client-node's quantityToScalar returns a float or a bigint depending on the suffix, which
 * is fine for "is it positive" but not for sums, hence this module.
 *
 * Anyone who can create a pod chooses the text, so parsing costs time linear in its length
 * whatever the digits or exponent: the magnitude is decided from digit counts before any
 * bigint is built, and no bigint ever holds more than a hundred digits. Go's `Value()`
 * saturates at int64, so nothing in a cluster holds more than 2^63-1 whole units of anything;
 * a larger quantity is refused as too large instead of being computed.
 */
import { showValue } from './bounded-text.js';

const NANO = 1_000_000_000n;

/** The largest magnitude, in whole units, a quantity may have: Go's int64 maximum. */
export const MAX_QUANTITY_UNITS = 2n ** 63n - 1n;
const MAX_NANOS = MAX_QUANTITY_UNITS * NANO;
/** MAX_NANOS has 28 digits: a value whose integer part in nanos has more is too large. */
const MAX_NANO_DIGITS = MAX_NANOS.toString().length;

const DECIMAL_SUFFIX: Record<string, bigint> = {
  n: 1n,
  u: 1_000n,
  m: 1_000_000n,
  '': NANO,
  k: 1_000n * NANO,
  M: 1_000_000n * NANO,
  G: 1_000_000_000n * NANO,
  T: 1_000_000_000_000n * NANO,
  P: 1_000_000_000_000_000n * NANO,
  E: 1_000_000_000_000_000_000n * NANO,
};
/** The decimal SI suffixes and the power of ten each stands for. */
export const DECIMAL_EXPONENT: Readonly<Record<string, number>> = {
  n: -9,
  u: -6,
  m: -3,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
const BINARY_SUFFIX: Record<string, bigint> = {
  Ki: 1024n * NANO,
  Mi: 1024n ** 2n * NANO,
  Gi: 1024n ** 3n * NANO,
  Ti: 1024n ** 4n * NANO,
  Pi: 1024n ** 5n * NANO,
  Ei: 1024n ** 6n * NANO,
};
/** Powers of two of the binary suffixes: Ki is 2^10, Ei 2^60. */
const BINARY_POWER: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

export type QuantityErrorKind = 'invalid' | 'too-large';

/** A quantity that is not one, or is larger than anything a cluster can hold. */
export class QuantityError extends Error {
  constructor(
    readonly kind: QuantityErrorKind,
    /** The text as given (possibly huge: quote it only through showValue). */
    readonly text: string,
  ) {
    super(
      kind === 'invalid'
        ? `${showValue(text)} is not a quantity (e.g. 500m, 2, 1.5Gi, 1e3)`
        : `${showValue(text)} is too large: quantities are bounded by 2^63-1 (${MAX_QUANTITY_UNITS.toString()}) units`,
    );
    this.name = 'QuantityError';
  }
}

const isDigit = (code: number): boolean => code >= 48 && code <= 57;

/** The index of the first character at or after `from` that is not an ASCII digit. */
function digitsEnd(text: string, from: number): number {
  let end = from;
  while (end < text.length && isDigit(text.charCodeAt(end))) end += 1;
  return end;
}

/** The index of the first character in [from, to) that is not '0' (to when there is none). */
function firstNonZero(text: string, from: number, to: number): number {
  let index = from;
  while (index < to && text.charCodeAt(index) === 48) index += 1;
  return index;
}

/** True when a digit in [from, to) is not '0'. */
const anyNonZero = (text: string, from: number, to: number): boolean => firstNonZero(text, from, to) < to;

/**
 * Quantities repeat: a pod's containers, and the pods of a cluster, ask for the same few amounts
 * ("100m", "128Mi"), so a review with thousands of containers parses a handful of distinct texts.
 * Short texts only, and the cache is cleared when full: its memory is bounded by both.
 */
const PARSED = new Map<string, bigint>();
const MAX_CACHED_TEXT = 32;
const MAX_CACHED = 4096;

/**
 * Parses a quantity into nano-units. Throws a QuantityError (kind 'invalid') on anything that
 * is not a Kubernetes quantity, and (kind 'too-large') on one whose magnitude exceeds 2^63-1
 * whole units.
 */
export function parseQuantity(input: string): bigint {
  const cached = PARSED.get(input);
  if (cached !== undefined) return cached;
  const value = parseUncached(input);
  if (input.length <= MAX_CACHED_TEXT) {
    if (PARSED.size >= MAX_CACHED) PARSED.clear();
    PARSED.set(input, value);
  }
  return value;
}

function parseUncached(input: string): bigint {
  const text = input.trim();
  const invalid = (): QuantityError => new QuantityError('invalid', input);
  let position = 0;
  const signCode = text.charCodeAt(0);
  const negative = signCode === 45; // '-'
  if (negative || signCode === 43) position = 1; // '+'
  const integerStart = position;
  const integerEnd = digitsEnd(text, integerStart);
  let fractionStart = integerEnd;
  let fractionEnd = integerEnd;
  position = integerEnd;
  if (text.charCodeAt(position) === 46) {
    // '.'
    fractionStart = position + 1;
    fractionEnd = digitsEnd(text, fractionStart);
    position = fractionEnd;
  }
  if (integerEnd === integerStart && fractionEnd === fractionStart) throw invalid();

  // What follows the number: nothing, a suffix, or an exponent ([eE][+-]?digits).
  const rest = text.slice(position);
  let decimalExponent = 0;
  let binaryPower = 0;
  let exponentSign = 1;
  let exponentDigits = '';
  if (rest === '') {
    // A plain number.
  } else if (BINARY_POWER[rest] !== undefined) {
    binaryPower = BINARY_POWER[rest];
  } else if (DECIMAL_EXPONENT[rest] !== undefined) {
    decimalExponent = DECIMAL_EXPONENT[rest];
  } else if (rest[0] === 'e' || rest[0] === 'E') {
    let start = 1;
    if (rest[1] === '+' || rest[1] === '-') {
      exponentSign = rest[1] === '-' ? -1 : 1;
      start = 2;
    }
    const end = digitsEnd(rest, start);
    if (end === start || end !== rest.length) throw invalid();
    exponentDigits = rest.slice(firstNonZero(rest, start, end), end);
  } else {
    throw invalid();
  }

  // The significant digits run from the first non-zero digit of the integer part (else of the
  // fraction) to the end of the fraction; `point` is where the decimal point falls among them.
  const integerFirst = firstNonZero(text, integerStart, integerEnd);
  let point: number;
  let significant: string;
  if (integerFirst < integerEnd) {
    point = integerEnd - integerFirst;
    significant = text.slice(integerFirst, integerEnd) + text.slice(fractionStart, fractionEnd);
  } else {
    const fractionFirst = firstNonZero(text, fractionStart, fractionEnd);
    if (fractionFirst === fractionEnd) return 0n; // Zero, whatever the exponent.
    point = fractionStart - fractionFirst;
    significant = text.slice(fractionFirst, fractionEnd);
  }
  // An exponent of more than 15 digits moves the point past anything that fits: far enough.
  const exponent =
    exponentDigits === ''
      ? decimalExponent
      : exponentSign * (exponentDigits.length > 15 ? 1e300 : Number(exponentDigits));

  // The value in nanos is 0.<significant> × 10^nanoDigits × 2^binaryPower.
  const nanoDigits = point + exponent + 9;
  if (nanoDigits > MAX_NANO_DIGITS) throw new QuantityError('too-large', input);
  // Below one nano: Kubernetes rounds any non-zero amount up to its smallest unit.
  if (nanoDigits + binaryPower <= 0) return negative ? -1n : 1n;
  // Digits past `kept` only decide the rounding: from there on 10^(kept - nanoDigits) is a
  // multiple of 2^binaryPower, so no whole nano lies strictly between the value cut at `kept` and
  // the value itself, and a non-zero digit beyond makes it the next nano up.
  const kept = Math.min(significant.length, nanoDigits + binaryPower);
  const scaled = BigInt(significant.slice(0, kept)) << BigInt(binaryPower);
  const tail = anyNonZero(significant, kept, significant.length);
  let nanos: bigint;
  if (kept <= nanoDigits) {
    nanos = scaled * 10n ** BigInt(nanoDigits - kept) + (tail ? 1n : 0n);
  } else {
    const divisor = 10n ** BigInt(kept - nanoDigits);
    const whole = scaled / divisor;
    nanos = tail || whole * divisor !== scaled ? whole + 1n : whole;
  }
  if (nanos > MAX_NANOS) throw new QuantityError('too-large', input);
  return negative ? -nanos : nanos;
}

/** Formats nano-units the way Kubernetes would print them in a canonical form close to `like`. */
export function formatQuantity(nanos: bigint, like = ''): string {
  const negative = nanos < 0n;
  const value = negative ? -nanos : nanos;
  const sign = negative ? '-' : '';
  if (value === 0n) return '0';
  if (like.endsWith('i') && value % NANO === 0n) {
    const whole = value / NANO;
    for (const suffix of ['Ei', 'Pi', 'Ti', 'Gi', 'Mi', 'Ki'] as const) {
      const unit = (BINARY_SUFFIX[suffix] ?? NANO) / NANO;
      if (whole % unit === 0n) return `${sign}${whole / unit}${suffix}`;
    }
    return `${sign}${whole}`;
  }
  for (const suffix of ['E', 'P', 'T', 'G', 'M', 'k', '', 'm', 'u', 'n'] as const) {
    const unit = DECIMAL_SUFFIX[suffix] ?? NANO;
    if (value % unit === 0n) return `${sign}${value / unit}${suffix}`;
  }
  return `${sign}${value}n`;
}

/** How a message names the JSON type of a value that should have been something else. */
export function jsonTypeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a JSON array';
  if (typeof value === 'object') return 'a JSON object';
  if (typeof value === 'boolean') return 'a boolean';
  return typeof value;
}

/** A quantity that could not be read at a field of the object under review. */
export class QuantityFieldError extends Error {
  constructor(
    /** Where: `spec.containers[0].resources.requests[cpu]`. */
    readonly path: string,
    readonly kind: QuantityErrorKind,
    detail: string,
  ) {
    super(`${path}: ${detail}`);
    this.name = 'QuantityFieldError';
  }
}

/**
 * Reads the quantity at `path` of a JSON document: a string, or a bare number as
 * `Quantity.UnmarshalJSON` also takes. Throws a QuantityFieldError naming the path on anything
 * else, on text that is no quantity, and on a quantity larger than 2^63-1 units.
 */
export function quantityAt(value: unknown, path: string): bigint {
  if (typeof value !== 'string' && typeof value !== 'number') {
    throw new QuantityFieldError(path, 'invalid', `must be a quantity string, got ${jsonTypeName(value)}`);
  }
  try {
    return parseQuantity(String(value));
  } catch (error) {
    if (!(error instanceof QuantityError)) throw error;
    throw new QuantityFieldError(path, error.kind, error.message);
  }
}

/** A quantity's text as written (a JSON number as its digits); '' for what is no quantity. */
export function writtenAs(value: unknown): string {
  if (typeof value === 'string') return value;
  return typeof value === 'number' ? String(value) : '';
}
