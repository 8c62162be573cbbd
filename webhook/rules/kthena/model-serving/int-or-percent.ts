/**
 * The IntOrString checks of Kthena v1.0.0's ModelServing validator: its validateIntOrPercent, and
 * apimachinery v0.34's `intstr.GetScaledValueFromIntOrPercent` (round down), with their messages.
 */
import type { IntOrString } from '../../../util/go-decode/scalars.js';
import { type FieldError, type FieldPath, GoStringer, invalid } from '../../shared/field-errors.js';
import { goJsonString } from '../go-values.js';
import { goQuote } from '../../../util/go-quote.js';
import type { Result } from '../../../util/result.js';
import { failure, success } from '../../../util/result.js';

const PERCENT = /^[0-9]+%$/;
const PERCENT_PROBLEM =
  "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";
const INT64_MAX = 2n ** 63n - 1n;

/** json.Marshal of an *IntOrString: the number, or the quoted string. */
export const shownIntOrString = (value: IntOrString): GoStringer =>
  new GoStringer(value.type === 'int' ? value.value.toString() : goJsonString(value.value));

/** Go's strconv.Atoi on a 64-bit machine, as a bigint; the error as Go words it. */
function atoi(text: string): Result<bigint> {
  const quoted = goQuote(text);
  if (!/^[+-]?[0-9]+$/.test(text)) return failure(`strconv.Atoi: parsing ${quoted}: invalid syntax`);
  const value = BigInt(text);
  if (value > INT64_MAX || value < -INT64_MAX - 1n) {
    return failure(`strconv.Atoi: parsing ${quoted}: value out of range`);
  }
  return success(value);
}

export function intOrPercentErrors(value: IntOrString | undefined, path: FieldPath): FieldError[] {
  if (value === undefined) return [];
  if (value.type === 'int') {
    return value.value < 0n ? [invalid(path, value.value, 'must be a non-negative integer')] : [];
  }
  if (!PERCENT.test(value.value)) return [invalid(path, shownIntOrString(value), PERCENT_PROBLEM)];
  const percent = atoi(value.value.slice(0, -1));
  if (!percent.ok || percent.value < 0n || percent.value > 100n) {
    return [invalid(path, shownIntOrString(value), 'must be a valid percent value (0-100)')];
  }
  return [];
}

/** GetScaledValueFromIntOrPercent(value, total, false), or its error's text. */
export function scaledValue(value: IntOrString, total: number): Result<number> {
  if (value.type === 'int') return success(Number(value.value));
  if (!value.value.endsWith('%')) {
    return failure('invalid value for IntOrString: invalid type: string is not a percentage');
  }
  const percent = atoi(value.value.slice(0, -1));
  if (!percent.ok) {
    return failure(`invalid value for IntOrString: invalid value ${goQuote(value.value)}: ${percent.error}`);
  }
  return success(Math.floor((Number(percent.value) * total) / 100));
}
