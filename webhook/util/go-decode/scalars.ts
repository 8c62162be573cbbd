/**
 * Decoders of Go's scalar types: what Go's decoder refuses (a string where an `*int64` goes, `1.5`
 * or `1e2` for an integer, an integer out of range, an unparsable duration or quantity) is one type
 * error each, worded in the entry point's dialect. Null and absent decode to nothing, as Go leaves
 * a nil pointer.
 */
import { parseGoDuration } from '../go-duration.js';
import { type GoQuantity, readGoQuantityJson, readQuantity } from '../quantity.js';
import { type Decoder, type Dialect, type IntegerType, typeMismatch } from './decoding.js';
import type { JsonNode } from './json-text.js';

/** What a scalar reader returns for a value Go would refuse: what it expected instead. */
class Expected {
  constructor(readonly description: string) {}
}

/** A decoder of one JSON scalar; null and absent decode to nothing. */
function scalar<T>(read: (node: JsonNode, dialect: Dialect) => T | Expected): Decoder<T> {
  return (node, path, out) => {
    if (node === undefined || node.kind === 'null') return undefined;
    const value = read(node, out.dialect);
    if (!(value instanceof Expected)) return value;
    typeMismatch(node, path, out, value.description);
    return undefined;
  };
}

export const goString: Decoder<string> = scalar((node) =>
  node.kind === 'string' ? node.value : new Expected('a string'),
);

export const goBool: Decoder<boolean> = scalar((node) =>
  node.kind === 'boolean' ? node.value : new Expected('a boolean'),
);

const INTEGER_LITERAL = /^-?\d+$/;

const RANGES: Readonly<Record<IntegerType, readonly [bigint, bigint]>> = {
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
};

/**
 * An integer literal (no fraction or exponent) within the type's range, read exactly. (A parsed
 * number prints as its digits below 1e21, so it is read as its JSON text would be.)
 */
function readInteger(node: JsonNode, type: IntegerType, dialect: Dialect): bigint | Expected {
  const [min, max] = RANGES[type];
  if (node.kind !== 'number' || !INTEGER_LITERAL.test(node.text)) {
    return new Expected(dialect.integer(type, min, max, false));
  }
  const value = BigInt(node.text);
  return value < min || value > max ? new Expected(dialect.integer(type, min, max, true)) : value;
}

/** Go `int64`, exactly. */
export const goInt64: Decoder<bigint> = scalar((node, dialect) => readInteger(node, 'int64', dialect));

/** Go `int32`, which a JS number holds exactly. */
export const goInt32: Decoder<number> = scalar((node, dialect) => {
  const value = readInteger(node, 'int32', dialect);
  return value instanceof Expected ? value : Number(value);
});

/** Go `uint32`, which a JS number holds exactly. */
export const goUint32: Decoder<number> = scalar((node, dialect) => {
  const value = readInteger(node, 'uint32', dialect);
  return value instanceof Expected ? value : Number(value);
});

/** Go `float64`: any JSON number within float64's range. */
export const goFloat64: Decoder<number> = scalar((node) => {
  if (node.kind !== 'number') return new Expected('a number');
  const value = Number(node.text);
  return Number.isFinite(value) ? value : new Expected('a number within float64 range');
});

/** A `metav1.Duration`: Go duration text, kept with its value in milliseconds. */
export interface GoDuration {
  text: string;
  ms: number;
}

/** A time.Duration is an int64 count of nanoseconds; Go refuses longer texts as invalid. */
const MAX_DURATION_MS = Number(2n ** 63n) / 1e6;

/** `metav1.Duration`: a Go duration string such as "5m". */
export const goDuration: Decoder<GoDuration> = scalar((node, dialect) => {
  if (node.kind !== 'string') return new Expected(dialect.durationString);
  try {
    const ms = parseGoDuration(node.value);
    if (Math.abs(ms) > MAX_DURATION_MS) throw new Error(`invalid duration ${JSON.stringify(node.value)}`);
    return { text: node.value, ms };
  } catch (error) {
    return new Expected(dialect.duration((error as Error).message));
  }
});

/**
 * `resource.Quantity` as an exact amount in nano-units: a string or a bare number, spaces around
 * it trimmed as Quantity's UnmarshalJSON does, more than 2^63-1 whole units refused.
 */
export const goQuantityNanos: Decoder<bigint> = scalar((node, dialect) => {
  const text = node.kind === 'string' ? node.value : node.kind === 'number' ? node.text : undefined;
  const read = text === undefined ? undefined : readQuantity(text);
  if (read?.ok) return read.value;
  return new Expected(dialect.quantity(read?.error.message));
});

/**
 * `resource.Quantity` as Go's ParseQuantity reads it (its sign, and whether it overflows a
 * float64), for rules that look at no more: a string, or a bare number.
 */
export const goQuantity: Decoder<GoQuantity> = scalar((node, dialect) => {
  if (node.kind !== 'string' && node.kind !== 'number') return new Expected(dialect.quantity());
  // A number is read as JSON.parse reads it (1e400 is Infinity), which is how Go overflows too.
  const read = readGoQuantityJson(node.kind === 'string' ? node.value : Number(node.text));
  return read.ok ? read.value : new Expected(dialect.quantity(read.error));
});

export type IntOrString = { type: 'int'; value: bigint } | { type: 'string'; value: string };

/**
 * `intstr.IntOrString`: a string, or an integer read as Go's int32 (kept a bigint: network QoS
 * sums it exactly with quantities).
 */
export const goIntOrString: Decoder<IntOrString> = scalar((node, dialect): IntOrString | Expected => {
  if (node.kind === 'string') return { type: 'string', value: node.value };
  if (node.kind !== 'number') return new Expected('an integer or a string');
  const value = readInteger(node, 'int32', dialect);
  return value instanceof Expected ? value : { type: 'int', value };
});

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
export const goTime: Decoder<string> = scalar((node) =>
  node.kind === 'string' && isRfc3339(node.value)
    ? node.value
    : new Expected('an RFC 3339 time such as "2025-01-02T15:04:05Z"'),
);

/** Free-form JSON that must be an object (`map[string]interface{}`, an empty struct). */
export const goAnyObject: Decoder<JsonNode> = scalar((node) =>
  node.kind === 'object' ? node : new Expected('an object'),
);

/** Free-form JSON (`apiextensionsv1.JSON`): anything goes. */
export const goAnyJson: Decoder<JsonNode> = (node) => (node?.kind === 'null' ? undefined : node);
