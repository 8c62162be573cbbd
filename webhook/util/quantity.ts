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
import { own } from './own.js';
import { failure, success, type Result } from './result.js';

const NANO = 1_000_000_000n;

/** The largest magnitude, in whole units, a quantity may have: Go's int64 maximum. */
const MAX_QUANTITY_UNITS = 2n ** 63n - 1n;
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
export const BINARY_POWER: Readonly<Record<string, number>> = {
  Ki: 10,
  Mi: 20,
  Gi: 30,
  Ti: 40,
  Pi: 50,
  Ei: 60,
};

export type QuantityProblemKind = 'invalid' | 'too-large';

/** Why a text is no quantity, or one larger than anything a cluster can hold. */
export interface QuantityProblem {
  readonly kind: QuantityProblemKind;
  readonly message: string;
}

function problem(kind: QuantityProblemKind, text: string): QuantityProblem {
  return {
    kind,
    message:
      kind === 'invalid'
        ? `${showValue(text)} is not a quantity (e.g. 500m, 2, 1.5Gi, 1e3)`
        : `${showValue(text)} is too large: quantities are bounded by 2^63-1 (${MAX_QUANTITY_UNITS.toString()}) units`,
  };
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
 * A quantity's text split by the grammar of the Kubernetes OpenAPI schema's Quantity pattern:
 * `[+-]? (digits[.digits?] | .digits) (binary suffix | decimal suffix | [eE][+-]?digits)?`.
 * Offsets index the text; the exponent is kept as written (sign apart, leading zeros dropped).
 */
interface QuantityParts {
  negative: boolean;
  integerStart: number;
  integerEnd: number;
  fractionStart: number;
  fractionEnd: number;
  decimalExponent: number;
  binaryPower: number;
  exponentSign: 1 | -1;
  exponentDigits: string;
  /** Written with an exponent (`1e3`), as opposed to a suffix or nothing. */
  scientific: boolean;
  binarySuffix: boolean;
}

/** The one grammar of quantities: its parts, or undefined for a text that is no quantity. */
function lexQuantity(text: string): QuantityParts | undefined {
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
  if (integerEnd === integerStart && fractionEnd === fractionStart) return undefined;

  // What follows the number: nothing, a suffix, or an exponent ([eE][+-]?digits).
  const rest = text.slice(position);
  const parts: QuantityParts = {
    negative,
    integerStart,
    integerEnd,
    fractionStart,
    fractionEnd,
    decimalExponent: 0,
    binaryPower: 0,
    exponentSign: 1,
    exponentDigits: '',
    scientific: false,
    binarySuffix: false,
  };
  if (rest === '') return parts;
  // The suffix is the user's text: `1constructor` names no suffix, not Object.prototype's member.
  const power = own(BINARY_POWER, rest);
  if (power !== undefined) return { ...parts, binaryPower: power, binarySuffix: true };
  const decimal = own(DECIMAL_EXPONENT, rest);
  if (decimal !== undefined) return { ...parts, decimalExponent: decimal };
  if (rest[0] !== 'e' && rest[0] !== 'E') return undefined;
  let start = 1;
  let exponentSign: 1 | -1 = 1;
  if (rest[1] === '+' || rest[1] === '-') {
    exponentSign = rest[1] === '-' ? -1 : 1;
    start = 2;
  }
  const end = digitsEnd(rest, start);
  if (end === start || end !== rest.length) return undefined;
  return {
    ...parts,
    exponentSign,
    exponentDigits: rest.slice(firstNonZero(rest, start, end), end),
    scientific: true,
  };
}

/**
 * Quantities repeat: a pod's containers, and the pods of a cluster, ask for the same few amounts
 * ("100m", "128Mi"), so a review with thousands of containers parses a handful of distinct texts.
 * Short texts only, and the cache is cleared when full: its memory is bounded by both.
 */
const PARSED = new Map<string, Result<bigint, QuantityProblem>>();
const MAX_CACHED_TEXT = 32;
const MAX_CACHED = 4096;

/**
 * A quantity in nano-units, or why it is none: kind 'invalid' for anything that is not a
 * Kubernetes quantity (spaces around it are trimmed, as Quantity's UnmarshalJSON does), kind
 * 'too-large' for one whose magnitude exceeds 2^63-1 whole units.
 */
export function readQuantity(input: string): Result<bigint, QuantityProblem> {
  const cached = PARSED.get(input);
  if (cached !== undefined) return cached;
  const text = input.trim();
  const parts = lexQuantity(text);
  const read = parts ? toNanos(text, parts, input) : failure(problem('invalid', input));
  if (input.length <= MAX_CACHED_TEXT) {
    if (PARSED.size >= MAX_CACHED) PARSED.clear();
    PARSED.set(input, read);
  }
  return read;
}

/** readQuantity for callers to whom an unreadable quantity is a programming error: it throws. */
export function parseQuantity(input: string): bigint {
  const read = readQuantity(input);
  if (!read.ok) throw new Error(read.error.message);
  return read.value;
}

function toNanos(text: string, parts: QuantityParts, input: string): Result<bigint, QuantityProblem> {
  const { negative, integerStart, integerEnd, fractionStart, fractionEnd, binaryPower } = parts;
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
    if (fractionFirst === fractionEnd) return success(0n); // Zero, whatever the exponent.
    point = fractionStart - fractionFirst;
    significant = text.slice(fractionFirst, fractionEnd);
  }
  // An exponent of more than 15 digits moves the point past anything that fits: far enough.
  const exponent =
    parts.exponentDigits === ''
      ? parts.decimalExponent
      : parts.exponentSign * (parts.exponentDigits.length > 15 ? 1e300 : Number(parts.exponentDigits));

  // The value in nanos is 0.<significant> × 10^nanoDigits × 2^binaryPower.
  const nanoDigits = point + exponent + 9;
  if (nanoDigits > MAX_NANO_DIGITS) return failure(problem('too-large', input));
  // Below one nano: Kubernetes rounds any non-zero amount up to its smallest unit.
  if (nanoDigits + binaryPower <= 0) return success(negative ? -1n : 1n);
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
  if (nanos > MAX_NANOS) return failure(problem('too-large', input));
  return success(negative ? -nanos : nanos);
}

/**
 * What Go's `resource.ParseQuantity` makes of a text, reduced to what Kthena's admission needs:
 * its sign, and whether `AsFloat64Slow()` overflows to infinity. Go caps an inexact quantity at
 * 2^63-1 instead of refusing it, so nothing here is too large; the refusals are Go's words.
 */
export interface GoQuantity {
  /** The text as written (a JSON number is turned into its shortest decimal text). */
  text: string;
  /** -1, 0 or 1. Go rounds any non-zero magnitude up to 1n, so no non-zero value reads as 0. */
  sign: -1 | 0 | 1;
  /** True when Go's `AsFloat64Slow()` gives ±Inf. */
  infinite: boolean;
}

const INT32_MAX = 2 ** 31 - 1;
// Go's ErrFormatWrong, word for word (its regular expression is looser than the grammar it enforces).
const FORMAT_WRONG =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
/** Go keeps at most this many mantissa digits in its exact int64 form (`maxInt64Factors`). */
const MAX_EXACT_DIGITS = 18;

/** Go's ParseQuantity, which (unlike UnmarshalJSON) trims nothing. */
function readGoQuantity(text: string): Result<GoQuantity> {
  const parts = lexQuantity(text);
  if (!parts) return failure(FORMAT_WRONG);
  let exponent = parts.decimalExponent;
  if (parts.scientific) {
    exponent = parts.exponentSign * Number(parts.exponentDigits || '0');
    if (!Number.isInteger(exponent) || Math.abs(exponent) > INT32_MAX) {
      return failure("unable to parse quantity's suffix");
    }
  }
  const integerDigits = text.slice(parts.integerStart, parts.integerEnd);
  const fractionDigits = text.slice(parts.fractionStart, parts.fractionEnd);
  const zero =
    !anyNonZero(integerDigits, 0, integerDigits.length) &&
    !anyNonZero(fractionDigits, 0, fractionDigits.length);
  const sign = zero ? 0 : parts.negative ? -1 : 1;
  // Go keeps a decimal quantity with few enough digits exact and uncapped (so 1e400 is +Inf when
  // read as a float); a binary-suffixed or longer one goes through inf.Dec and is capped at 2^63-1.
  const digits = integerDigits.replace(/^0+/, '').length + fractionDigits.length;
  const exact = !parts.binarySuffix && digits <= MAX_EXACT_DIGITS;
  const mantissa = text.slice(parts.integerStart, parts.fractionEnd);
  const infinite = exact && !zero && !Number.isFinite(Number(`${mantissa}e${exponent.toString()}`));
  return success({ text, sign, infinite });
}

/** readGoQuantity of a JSON value: a string, or a bare number as `Quantity.UnmarshalJSON` also takes. */
export function readGoQuantityJson(value: string | number): Result<GoQuantity> {
  if (typeof value === 'number') {
    // JSON.parse turns 1e400 into Infinity; Go reads the same one-digit text and overflows too.
    return Number.isFinite(value)
      ? readGoQuantity(String(value))
      : success({ text: String(value), sign: value > 0 ? 1 : -1, infinite: true });
  }
  return readGoQuantity(value);
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

/**
 * How Go's resource.Quantity writes a value, chosen by the suffix it was parsed with: none or a
 * decimal SI suffix (`1`, `500m`, `2k`), a binary one (`1Gi`), or an exponent (`1e3`).
 */
export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

/** The format Go's ParseQuantity gives a text; DecimalSI for a text that is no quantity. */
export function formatOf(text: string): QuantityFormat {
  const parts = lexQuantity(text.trim());
  if (parts?.binarySuffix) return 'BinarySI';
  return parts?.scientific ? 'DecimalExponent' : 'DecimalSI';
}

const SI_SUFFIX_OF_EXPONENT: Readonly<Record<number, string>> = {
  [-9]: 'n',
  [-6]: 'u',
  [-3]: 'm',
  0: '',
  3: 'k',
  6: 'M',
  9: 'G',
  12: 'T',
  15: 'P',
  18: 'E',
};
const BINARY_SUFFIXES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'] as const;

/**
 * A quantity as Go writes it (`Quantity.String()`, and JSON): the canonical form of `nanos` in
 * `format` (k8s.io/apimachinery's CanonicalizeBytes). Binary when asked for, whole and at least
 * 1024 (`1536Mi`); otherwise the digits without trailing zeros and an exponent that is a multiple
 * of 3, written as an SI suffix (`1500m`, `1k`) or, for DecimalExponent, as `e<n>` (`1e3`).
 */
export function goQuantityString(nanos: bigint, format: QuantityFormat): string {
  if (nanos === 0n) return '0';
  const sign = nanos < 0n ? '-' : '';
  const value = nanos < 0n ? -nanos : nanos;
  if (format === 'BinarySI' && value >= 1024n * NANO && value % NANO === 0n) {
    let amount = value / NANO;
    let power = 0;
    while (power < BINARY_SUFFIXES.length - 1 && amount % 1024n === 0n) {
      amount /= 1024n;
      power += 1;
    }
    return `${sign}${amount.toString()}${BINARY_SUFFIXES[power] ?? ''}`;
  }
  let mantissa = value;
  let exponent = -9;
  while (mantissa % 10n === 0n) {
    mantissa /= 10n;
    exponent += 1;
  }
  const shift = ((exponent % 3) + 3) % 3;
  mantissa *= 10n ** BigInt(shift);
  exponent -= shift;
  if (format === 'DecimalExponent')
    return `${sign}${mantissa.toString()}${exponent === 0 ? '' : `e${exponent}`}`;
  return `${sign}${mantissa.toString()}${SI_SUFFIX_OF_EXPONENT[exponent] ?? ''}`;
}

/**
 * Whether Go's ParseQuantity keeps a decimal text as the quantity's string instead of computing
 * the canonical one: at most 18 digits, a scale that is a multiple of 3, no trailing "000" and no
 * leading zero once the integer part's are stripped. Then `1E3`, `1e03` and `007` are printed as
 * written.
 */
function goKeepsText(text: string, parts: QuantityParts): boolean {
  if (parts.binarySuffix) return false;
  // Go strips the integer part's leading zeros, keeping one when nothing else is left.
  const integer =
    text.slice(firstNonZero(text, parts.integerStart, parts.integerEnd), parts.integerEnd) || '0';
  const digits = integer + text.slice(parts.fractionStart, parts.fractionEnd);
  if (digits.length > MAX_EXACT_DIGITS || digits.startsWith('0') || digits.endsWith('000')) return false;
  const exponent = parts.scientific
    ? parts.exponentSign * Number(parts.exponentDigits || '0')
    : parts.decimalExponent;
  const scale = exponent - (parts.fractionEnd - parts.fractionStart);
  return scale >= -9 && scale % 3 === 0 && BigInt(digits) <= MAX_QUANTITY_UNITS;
}

/** Go's spelling of a quantity's text (what Koordinator writes back or prints); the text itself when it is none. */
export function canonicalQuantity(text: string): string {
  const read = readQuantity(text);
  if (!read.ok) return text;
  const trimmed = text.trim();
  const parts = lexQuantity(trimmed);
  if (parts && goKeepsText(trimmed, parts)) return trimmed;
  return goQuantityString(read.value, formatOf(trimmed));
}

/** An amount with the format Go would print it in: what a sum of quantities keeps. */
export interface FormattedAmount {
  readonly nanos: bigint;
  readonly format: QuantityFormat;
}

/** Go's `Quantity.Add`: the sum keeps the first operand's format, unless that one is zero. */
export function addFormatted(a: FormattedAmount | undefined, b: FormattedAmount): FormattedAmount {
  if (a === undefined) return b;
  return { nanos: a.nanos + b.nanos, format: a.nanos === 0n ? b.format : a.format };
}

/** How a message names the JSON type of a value that should have been something else. */
function jsonTypeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a JSON array';
  if (typeof value === 'object') return 'a JSON object';
  if (typeof value === 'boolean') return 'a boolean';
  return typeof value;
}

/**
 * The quantity in a JSON value: a string, or a bare number as `Quantity.UnmarshalJSON` also
 * takes; else why it cannot be read (anything else, text that is no quantity, a quantity larger
 * than 2^63-1 units), as the detail that follows the field's path in a message.
 */
export function quantityOf(value: unknown): Result<bigint> {
  if (typeof value !== 'string' && typeof value !== 'number') {
    return failure(`must be a quantity string, got ${jsonTypeName(value)}`);
  }
  const read = readQuantity(String(value));
  return read.ok ? read : failure(read.error.message);
}

/** A quantity's text as written (a JSON number as its digits); '' for what is no quantity. */
export function writtenAs(value: unknown): string {
  if (typeof value === 'string') return value;
  return typeof value === 'number' ? String(value) : '';
}
