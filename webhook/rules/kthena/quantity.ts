/**
 * A Kubernetes `resource.Quantity` as Go's `ParseQuantity` reads it, reduced to what admission
 * needs: is it well formed, what is its sign, and does `AsFloat64Slow()` overflow to infinity.
 *
 * client-node's `quantityToScalar` is not used: it accepts what Go refuses ("0x10", "Infinity",
 * " 5 "), throws on what Go accepts (a fractional mantissa with k…E or Ki…Ei: "1.5Gi"), and
 * cannot tell a value Go caps at 2^63-1 from one it lets overflow to +Inf. The grammar below is
 * the Quantity pattern of the Kubernetes OpenAPI schema, with the exponent narrowed to the int32
 * Go parses it as.
 */
import { DECIMAL_EXPONENT } from '../../util/quantity.js';

const QUANTITY =
  /^([+-]?)((?:[0-9]+(?:\.[0-9]*)?)|(?:\.[0-9]+))(?:([KMGTPE]i)|([numkMGTPE])|[eE]([+-]?[0-9]+))?$/;

const INT32_MAX = 2 ** 31 - 1;
// Go's ErrFormatWrong, word for word (its regular expression is looser than the grammar it enforces).
const FORMAT_WRONG =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
/** Go keeps at most this many mantissa digits in its exact int64 form (`maxInt64Factors`). */
const MAX_EXACT_DIGITS = 18;

export interface Quantity {
  /** The text as written (a JSON number is turned into its shortest decimal text). */
  text: string;
  /** -1, 0 or 1. Go rounds any non-zero magnitude up to 1n, so no non-zero value reads as 0. */
  sign: -1 | 0 | 1;
  /** True when Go's `AsFloat64Slow()` gives ±Inf. */
  infinite: boolean;
}

export type QuantityResult = { ok: true; quantity: Quantity } | { ok: false; problem: string };

export function parseQuantity(text: string): QuantityResult {
  const match = QUANTITY.exec(text);
  if (!match) return { ok: false, problem: FORMAT_WRONG };
  const [, signText = '', mantissa = '', binarySuffix, decimalSuffix, exponentText] = match;
  let exponent = 0;
  if (exponentText !== undefined) {
    exponent = Number(exponentText);
    if (!Number.isInteger(exponent) || Math.abs(exponent) > INT32_MAX) {
      return { ok: false, problem: "unable to parse quantity's suffix" };
    }
  } else if (decimalSuffix !== undefined) {
    exponent = DECIMAL_EXPONENT[decimalSuffix] ?? 0;
  }
  const zero = !/[1-9]/.test(mantissa);
  const sign = zero ? 0 : signText === '-' ? -1 : 1;
  // Go keeps a decimal quantity with few enough digits exact and uncapped (so 1e400 is +Inf when
  // read as a float); a binary-suffixed or longer one goes through inf.Dec and is capped at 2^63-1.
  const [integerDigits = '', fractionDigits = ''] = mantissa.split('.');
  const digits = integerDigits.replace(/^0+/, '').length + fractionDigits.length;
  const exact = binarySuffix === undefined && digits <= MAX_EXACT_DIGITS;
  const infinite = exact && !zero && !Number.isFinite(Number(`${mantissa}e${exponent.toString()}`));
  return { ok: true, quantity: { text, sign, infinite } };
}

/** A quantity in a JSON document: a string, or a bare number as `Quantity.UnmarshalJSON` also takes. */
export function parseQuantityJson(value: string | number): QuantityResult {
  if (typeof value === 'number') {
    // JSON.parse turns 1e400 into Infinity; Go reads the same one-digit text and overflows too.
    return Number.isFinite(value)
      ? parseQuantity(String(value))
      : { ok: true, quantity: { text: String(value), sign: value > 0 ? 1 : -1, infinite: true } };
  }
  return parseQuantity(value);
}
