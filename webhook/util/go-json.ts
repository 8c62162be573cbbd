/**
 * Typed decoding of a JSON object the way Go's `encoding/json` fills a typed struct, so a rule can
 * refuse what the Go controller would have failed to decode (a string where an int32 goes, an
 * int32 out of range, an invalid duration or quantity), naming the field, instead of throwing.
 *
 * As in Go: unknown fields are ignored, and `null` is the same as absent (the API server prunes
 * nulls from custom resources before admission anyway). A decoder returns `undefined` for
 * absent, null or invalid values and appends one error per invalid value; it never stops at the
 * first, so one denial lists every malformed field.
 */
import type { JsonValue } from '../admission/types.js';
import { parseGoDuration } from './go-duration.js';
import { type FieldError, type FieldPath, invalid } from '../rules/shared/field-errors.js';
import { type GoQuantity, readGoQuantityJson } from './quantity.js';
import { failure, success, type Result } from './result.js';

export type Decoder<T> = (
  value: JsonValue | undefined,
  path: FieldPath,
  errors: FieldError[],
) => T | undefined;

/** What to show as the offending value: scalars as they are, a list or object by its JSON type. */
function shown(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return 'array';
  return typeof value === 'object' && value !== null ? 'object' : value;
}

function scalar<T>(expected: string, accept: (value: JsonValue) => T | undefined): Decoder<T> {
  return (value, path, errors) => {
    if (value === undefined || value === null) return undefined;
    const accepted = accept(value);
    if (accepted === undefined) errors.push(invalid(path, shown(value), `must be ${expected}`));
    return accepted;
  };
}

export const goString: Decoder<string> = scalar('a string', (value) =>
  typeof value === 'string' ? value : undefined,
);

export const goBool: Decoder<boolean> = scalar('a boolean', (value) =>
  typeof value === 'boolean' ? value : undefined,
);

function integer(described: string, min: bigint, max: bigint): Decoder<number> {
  return scalar(`${described} (a whole number from ${min.toString()} to ${max.toString()})`, (value) =>
    typeof value === 'number' && Number.isInteger(value) && BigInt(value) >= min && BigInt(value) <= max
      ? value
      : undefined,
  );
}

export const int32 = integer('an int32', -(2n ** 31n), 2n ** 31n - 1n);
export const uint32 = integer('a uint32', 0n, 2n ** 32n - 1n);
export const int64 = integer('an int64', -(2n ** 63n), 2n ** 63n - 1n);

/** A `metav1.Duration`: Go duration text, kept with its value in milliseconds. */
export interface GoDuration {
  text: string;
  ms: number;
}

/** A time.Duration is an int64 count of nanoseconds; Go refuses longer texts as invalid. */
const MAX_DURATION_MS = Number(2n ** 63n) / 1e6;

export const goDuration: Decoder<GoDuration> = (value, path, errors) => {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') {
    errors.push(invalid(path, shown(value), 'must be a duration string such as "30s" or "1m30s"'));
    return undefined;
  }
  try {
    const ms = parseGoDuration(value);
    if (Math.abs(ms) > MAX_DURATION_MS) throw new Error(`invalid duration ${JSON.stringify(value)}`);
    return { text: value, ms };
  } catch (error) {
    errors.push(
      invalid(path, value, `must be a duration such as "30s" or "1m30s": ${(error as Error).message}`),
    );
    return undefined;
  }
};

/** A `resource.Quantity`: a string, or a bare JSON number. */
export const quantity: Decoder<GoQuantity> = (value, path, errors) => {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' && typeof value !== 'number') {
    errors.push(invalid(path, shown(value), 'must be a quantity such as "500m", "2Gi" or 3'));
    return undefined;
  }
  const parsed = readGoQuantityJson(value);
  if (parsed.ok) return parsed.value;
  errors.push(invalid(path, value, `must be a quantity such as "500m", "2Gi" or 3: ${parsed.error}`));
  return undefined;
};

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:Z|[+-](\d{2}):(\d{2}))$/;

function isRfc3339(text: string): boolean {
  const match = RFC3339.exec(text);
  if (!match) return false;
  const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, offsetHours = 0, offsetMinutes = 0] =
    match.slice(1).map((group: string | undefined) => Number(group ?? '0'));
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth &&
    hour < 24 &&
    minute < 60 &&
    second < 60 &&
    offsetHours < 24 &&
    offsetMinutes < 60
  );
}

/** A `metav1.Time`: an RFC 3339 timestamp. */
export const goTime: Decoder<string> = scalar('an RFC 3339 time such as "2025-01-02T15:04:05Z"', (value) =>
  typeof value === 'string' && isRfc3339(value) ? value : undefined,
);

/** Free-form JSON (`apiextensionsv1.JSON`): anything goes. */
export const anyJson: Decoder<JsonValue> = (value) => (value === null ? undefined : value);

export type Fields = Readonly<Record<string, Decoder<unknown>>>;

/** The decoded form of a struct: every field optional, since absent and null both decode to nothing. */
export type Struct<F extends Fields> = { [K in keyof F]?: F[K] extends Decoder<infer T> ? T : never };

/** A Go struct: an object whose known fields are decoded; other fields are ignored. */
export function struct<F extends Fields>(fields: F): Decoder<Struct<F>> {
  return (value, path, errors) => {
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'object' || Array.isArray(value)) {
      errors.push(invalid(path, shown(value), 'must be an object'));
      return undefined;
    }
    const decoded: Record<string, unknown> = {};
    for (const [name, decode] of Object.entries(fields)) {
      const field = decode(Object.hasOwn(value, name) ? value[name] : undefined, path.child(name), errors);
      if (field !== undefined) decoded[name] = field;
    }
    return decoded as Struct<F>;
  };
}

/**
 * A Go slice. A null element decodes to `zero` (Go's zero value for the element type), so
 * indexes, and the field paths built from them, stay those of the JSON list.
 */
export function list<T>(item: Decoder<T>, zero: T): Decoder<T[]> {
  return (value, path, errors) => {
    if (value === undefined || value === null) return undefined;
    if (!Array.isArray(value)) {
      errors.push(invalid(path, shown(value), 'must be a list'));
      return undefined;
    }
    return value.map((element, index) => item(element, path.index(index), errors) ?? zero);
  };
}

/** A Go map with string keys. */
export function map<T>(entry: Decoder<T>): Decoder<ReadonlyMap<string, T>> {
  return (value, path, errors) => {
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'object' || Array.isArray(value)) {
      errors.push(invalid(path, shown(value), 'must be an object'));
      return undefined;
    }
    const decoded = new Map<string, T>();
    for (const [key, element] of Object.entries(value)) {
      const field = entry(element, path.key(key), errors);
      if (field !== undefined) decoded.set(key, field);
    }
    return decoded;
  };
}

/** Decodes a whole object; `value` is only given when nothing was malformed. */
export function decodeWith<T>(
  decoder: Decoder<T>,
  value: JsonValue,
  root: FieldPath,
): Result<T, FieldError[]> {
  const errors: FieldError[] = [];
  const decoded = decoder(value, root, errors);
  if (errors.length > 0) return failure(errors);
  if (decoded === undefined) return failure([invalid(root, shown(value), 'must be an object')]);
  return success(decoded);
}
