/**
 * What every parser and reader of the rules returns: the value, or why there is none. A refusal
 * is a value the caller decides about (refuse, warn, skip), never an exception: whatever a rule
 * throws is a programming error and gets the server's 500.
 */
export type Result<T, E = string> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: E };

export const success = <T>(value: T): Result<T, never> => ({ ok: true, value });

export const failure = <E>(error: E): Result<never, E> => ({ ok: false, error });
