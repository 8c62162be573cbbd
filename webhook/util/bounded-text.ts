/**
 * Bounds on what a review can make us write: anyone who can create a pod chooses the values we
 * echo, so every message, warning and log field that quotes user input goes through here.
 */

/** The longest message or warning the server returns (a full field-error list fits easily). */
export const MAX_MESSAGE_CHARS = 4096;
/** Warnings a response carries at most, each at most MAX_WARNING_CHARS long. */
export const MAX_WARNINGS = 20;
export const MAX_WARNING_CHARS = 1024;
/** The longest single value a message quotes (a quantity, a name, an annotation). */
export const MAX_SHOWN_VALUE_CHARS = 64;
/** The longest name or message in a log line. */
export const MAX_LOG_FIELD_CHARS = 256;

/**
 * `text` cut to at most `max` characters, ending with a marker that says how much was dropped,
 * so a reader never mistakes a cut value for the whole one.
 */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  // The marker's length depends on the count it shows; the widest count is the whole length.
  const markerChars = `…(${text.length} more chars)`.length;
  let end = Math.max(0, max - markerChars);
  // Never split a surrogate pair: a lone half is invalid UTF-16 and JSON-encodes as an escape.
  const last = text.charCodeAt(end - 1);
  if (end > 0 && last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…(${text.length - end} more chars)`;
}

/** A user-supplied value as a message quotes it: JSON-quoted, at most MAX_SHOWN_VALUE_CHARS of it. */
export function showValue(value: string): string {
  return JSON.stringify(truncate(value, MAX_SHOWN_VALUE_CHARS));
}
