/**
 * How Kthena v1.0.0's field errors show a value (apimachinery v0.34's `ErrorBody`): int32, int64,
 * bool and plain `string` values print plainly or `%q`-quoted, anything else (a pointer, a named
 * string type such as a worker type, an IntOrString, a Quantity, a Duration) as `json.Marshal`
 * writes it. These build that second form.
 */
import { GoStringer } from '../shared/field-errors.js';
import { MAX_SHOWN_VALUE_CHARS, truncate } from '../../util/bounded-text.js';
import { formatGoDuration } from '../../util/go-duration.js';

/** Go's `json.Marshal` of a string: JSON with `<`, `>`, `&`, U+2028 and U+2029 escaped as well. */
export function goJsonString(text: string): string {
  return JSON.stringify(text).replace(
    /[<>&\u2028\u2029]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** A string of a named Go type (or behind a pointer), as the message shows it. */
export const marshalledString = (text: string): GoStringer =>
  new GoStringer(goJsonString(truncate(text, MAX_SHOWN_VALUE_CHARS)));

/** A pointer to a number (`*int32`), or nil: `3`, `null`. */
export const marshalledNumber = (value: number | bigint | undefined): GoStringer =>
  new GoStringer(value === undefined ? 'null' : String(value));

/** A `metav1.Duration` (or a pointer to one), as json.Marshal writes it: `"31m0s"`. */
export const marshalledDuration = (ms: number): GoStringer =>
  new GoStringer(goJsonString(formatGoDuration(ms)));
