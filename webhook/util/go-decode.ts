/**
 * Decoding a parsed JSON value into the shape of a Go struct, the way `json.Unmarshal` fills
 * Koordinator's config types, followed by go-playground validator tags:
 *
 * - Type errors are what Go's decoder refuses (a string where an `*int64` goes, `1.5` or `1e2` for an
 *   integer, an int64 out of range, an unparsable duration or quantity). They are collected, one per
 *   bad value, rather than stopping at the first.
 * - Unknown keys are ignored (and collected, when asked, to warn about typos); `null` is the same as absent (Go leaves a nil pointer); a key matches a
 *   field case-insensitively when no field has its exact name, the last matching key winning.
 * - Tags (`min=0,max=100,gtfield=memoryEvictLowerPercent`) run after decoding with go-playground's
 *   semantics: every tagged field is `omitempty` (absent, null and "" are skipped, an explicit 0 is
 *   checked), rules run in order and the first failing one is the field's only error, bounds are
 *   inclusive for min/max and strict for gt/lt, and gtfield/ltfield fail when the other field is unset.
 *
 * (go-json.ts, beside it, decodes from `JSON.parse` output, which has already lost number
 * literals and key order; Koordinator's int64 fields need both.)
 */
import { type FieldError, type FieldPath, GoStringer, invalid } from '../rules/shared/field-errors.js';
import { readQuantity } from './quantity.js';
import { parseGoDuration } from './go-duration.js';
import { type JsonNode, nodeText } from './json-text.js';

/** Where decoding reports: type errors (Go's Unmarshal fails) apart from tag errors (the validator). */
export interface Decoding {
  typeErrors: FieldError[];
  tagErrors: FieldError[];
  /** Keys no field takes: Go drops them silently, which hides typos, so they are collected for warnings. */
  unknownFields?: FieldPath[];
}

/**
 * Problems kept per list: a refusal shows a few dozen within its bounded message, and a config
 * with 20,000 unknown keys must not build 20,000 paths to say so.
 */
export const MAX_REPORTED = 100;

function report<T>(list: T[] | undefined, item: () => T): void {
  if (list && list.length < MAX_REPORTED) list.push(item());
}

export type Decoder<T> = (node: JsonNode | undefined, path: FieldPath, out: Decoding) => T | undefined;

type Tag =
  | { rule: 'min' | 'max' | 'gt' | 'lt'; bound: number }
  | { rule: 'gtfield' | 'ltfield'; field: string }
  | { rule: 'oneof'; values: readonly string[] };

/** A decoder carrying validator tags, which its enclosing struct, list or map evaluates. */
type TaggedDecoder<T> = Decoder<T> & { readonly tags: readonly Tag[] };

/** The offending value as messages show it: scalars as written, containers abridged. */
function shown(node: JsonNode): string | boolean | GoStringer {
  if (node.kind === 'string') return node.value;
  if (node.kind === 'boolean') return node.value;
  return new GoStringer(nodeText(node));
}

/** Records that `node` is not the type Go expected at `path`. */
function typeMismatch(node: JsonNode, path: FieldPath, out: Decoding, expected: string): void {
  report(out.typeErrors, () => invalid(path, shown(node), `must be ${expected}`));
}

/** What a scalar reader returns for a value Go would refuse: what it expected instead. */
class Expected {
  constructor(readonly description: string) {}
}

/** A decoder of one JSON scalar; null and absent decode to nothing. */
function scalar<T>(read: (node: JsonNode) => T | Expected): Decoder<T> {
  return (node, path, out) => {
    if (node === undefined || node.kind === 'null') return undefined;
    const value = read(node);
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

function readInteger(node: JsonNode, bits: 32 | 64): bigint | Expected {
  const expected = `an integer (int${bits})`;
  if (node.kind !== 'number' || !INTEGER_LITERAL.test(node.text)) return new Expected(expected);
  const max = 2n ** BigInt(bits - 1) - 1n;
  const min = -max - 1n;
  const value = BigInt(node.text);
  return value < min || value > max
    ? new Expected(`${expected} from ${min.toString()} to ${max.toString()}`)
    : value;
}

/** Go `int64`: an integer literal (no fraction or exponent) within range, read exactly. */
export const goInt64: Decoder<bigint> = scalar((node) => readInteger(node, 64));
/** Go `int32`. */
export const goInt32: Decoder<bigint> = scalar((node) => readInteger(node, 32));

/** Go `float64`: any JSON number within float64's range. */
export const goFloat64: Decoder<number> = scalar((node) => {
  if (node.kind !== 'number') return new Expected('a number');
  const value = Number(node.text);
  return Number.isFinite(value) ? value : new Expected('a number within float64 range');
});

/** `metav1.Duration`: a Go duration string such as "5m". */
export const goDuration: Decoder<number> = scalar((node) => {
  if (node.kind !== 'string') return new Expected('a duration string such as "5m"');
  try {
    return parseGoDuration(node.value);
  } catch {
    return new Expected('a duration such as "5m" or "1h30m"');
  }
});

/**
 * `resource.Quantity`, in nano-units: a string or a bare number, spaces around it trimmed as
 * Quantity's UnmarshalJSON does.
 */
export const goQuantity: Decoder<bigint> = scalar((node) => {
  const text = node.kind === 'string' ? node.value : node.kind === 'number' ? node.text : undefined;
  const read = text === undefined ? undefined : readQuantity(text);
  return read?.ok ? read.value : new Expected('a quantity such as "100M"');
});

export type IntOrString = { type: 'int'; value: bigint } | { type: 'string'; value: string };

/** `intstr.IntOrString`: a string, or an integer read as Go's int32. */
export const goIntOrString: Decoder<IntOrString> = scalar((node): IntOrString | Expected => {
  if (node.kind === 'string') return { type: 'string', value: node.value };
  if (node.kind !== 'number') return new Expected('an integer or a string');
  const value = readInteger(node, 32);
  return value instanceof Expected ? value : { type: 'int', value };
});

/** Free-form JSON that must be an object (`map[string]interface{}`, an empty struct). */
export const goAnyObject: Decoder<JsonNode> = scalar((node) =>
  node.kind === 'object' ? node : new Expected('an object'),
);

/** Attaches validator tags, written as in Go's struct tags without the implied `omitempty`. */
export function tagged<T extends bigint | number | string>(decoder: Decoder<T>, tags: string): Decoder<T> {
  const parsed = tags.split(',').map((text): Tag => {
    const [rule = '', argument = ''] = text.split('=');
    switch (rule) {
      case 'min':
      case 'max':
      case 'gt':
      case 'lt': {
        const bound = Number(argument);
        if (argument === '' || !Number.isFinite(bound)) throw new Error(`bad bound in tag ${text}`);
        return { rule, bound };
      }
      case 'gtfield':
      case 'ltfield':
        return { rule, field: argument };
      case 'oneof':
        return { rule, values: argument.split(' ') };
      default:
        throw new Error(`unsupported validator tag ${text}`);
    }
  });
  const wrapped: Decoder<T> = (node, path, out) => decoder(node, path, out);
  return Object.assign(wrapped, { tags: parsed });
}

function tagsOf<T>(decoder: Decoder<T>): readonly Tag[] {
  return 'tags' in decoder ? (decoder as TaggedDecoder<T>).tags : [];
}

function compare(a: bigint | number, b: bigint | number): number {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'bigint' && Number.isInteger(b)) return compare(a, BigInt(b));
  if (typeof b === 'bigint' && Number.isInteger(a)) return compare(BigInt(a), b);
  const x = Number(a);
  const y = Number(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

function isNumeric(value: unknown): value is bigint | number {
  return typeof value === 'bigint' || typeof value === 'number';
}

function oneOfProblem(values: readonly string[], value: unknown): string | undefined {
  return typeof value === 'string' && !values.includes(value)
    ? `must be one of ${values.join(', ')}`
    : undefined;
}

function numericProblem(
  tag: Exclude<Tag, { rule: 'oneof' }>,
  value: unknown,
  sibling: (field: string) => unknown,
): string | undefined {
  if (!isNumeric(value)) return undefined;
  if ('field' in tag) {
    const relation = tag.rule === 'gtfield' ? 'greater' : 'less';
    const other = sibling(tag.field);
    if (!isNumeric(other)) return `must be ${relation} than ${tag.field}, which must then be set too`;
    const order = compare(value, other);
    const holds = relation === 'greater' ? order > 0 : order < 0;
    return holds ? undefined : `must be ${relation} than ${tag.field} (${String(other)})`;
  }
  const order = compare(value, tag.bound);
  const bound = String(tag.bound);
  switch (tag.rule) {
    case 'min':
      return order < 0 ? `must be at least ${bound}` : undefined;
    case 'max':
      return order > 0 ? `must be at most ${bound}` : undefined;
    case 'gt':
      return order <= 0 ? `must be greater than ${bound}` : undefined;
    case 'lt':
      return order >= 0 ? `must be less than ${bound}` : undefined;
  }
}

/** Why `value` breaks its tags (the first failing rule), or undefined. */
function tagProblem(
  tags: readonly Tag[],
  value: unknown,
  sibling: (field: string) => unknown,
): string | undefined {
  if (value === undefined || value === '') return undefined;
  for (const tag of tags) {
    const problem =
      tag.rule === 'oneof' ? oneOfProblem(tag.values, value) : numericProblem(tag, value, sibling);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function checkTags<T>(
  decoder: Decoder<T>,
  value: T | undefined,
  path: FieldPath,
  out: Decoding,
  sibling: (field: string) => unknown = () => undefined,
): void {
  const problem = tagProblem(tagsOf(decoder), value, sibling);
  if (problem === undefined) return;
  const bad =
    typeof value === 'bigint' || typeof value === 'number' || typeof value === 'string' ? value : '';
  report(out.tagErrors, () => invalid(path, bad, problem));
}

export type Fields = Readonly<Record<string, Decoder<unknown>>>;

/** The decoded form of a struct: every field optional, as absent and null both decode to nothing. */
export type Struct<F extends Fields> = { [K in keyof F]?: F[K] extends Decoder<infer T> ? T : never };

/** A Go struct. Embedded (`json:",inline"`) structs are written by spreading their fields in. */
export function struct<F extends Fields>(fields: F): Decoder<Struct<F>> {
  const names = Object.keys(fields);
  const folded = new Map(names.map((name) => [name.toLowerCase(), name]));
  return (node, path, out) => {
    if (node === undefined || node.kind === 'null') return undefined;
    if (node.kind !== 'object') {
      typeMismatch(node, path, out, 'an object');
      return undefined;
    }
    const chosen = new Map<string, JsonNode>();
    for (const [key, value] of node.entries) {
      const name = Object.hasOwn(fields, key) ? key : folded.get(key.toLowerCase());
      if (name !== undefined) chosen.set(name, value);
      else report(out.unknownFields, () => path.child(key));
    }
    // As go-playground walks a struct: each field's own tags, then what is nested in it.
    const decoded: Record<string, unknown> = {};
    const nested = new Map<string, FieldError[]>();
    for (const name of names) {
      const inner: FieldError[] = [];
      nested.set(name, inner);
      const value = fields[name]?.(chosen.get(name), path.child(name), {
        typeErrors: out.typeErrors,
        tagErrors: inner,
        ...(out.unknownFields ? { unknownFields: out.unknownFields } : {}),
      });
      if (value !== undefined) decoded[name] = value;
    }
    for (const name of names) {
      const decoder = fields[name];
      if (decoder) checkTags(decoder, decoded[name], path.child(name), out, (field) => decoded[field]);
      for (const error of nested.get(name) ?? []) report(out.tagErrors, () => error);
    }
    return decoded as Struct<F>;
  };
}

/**
 * A Go slice. A null element decodes to undefined (Go's nil pointer or zero struct), so indexes,
 * and the paths built from them, stay those of the JSON list.
 */
export function list<T>(item: Decoder<T>): Decoder<(T | undefined)[]> {
  return (node, path, out) => {
    if (node === undefined || node.kind === 'null') return undefined;
    if (node.kind !== 'array') {
      typeMismatch(node, path, out, 'a list');
      return undefined;
    }
    return node.items.map((element, index) => {
      const value = item(element, path.index(index), out);
      checkTags(item, value, path.index(index), out);
      return value;
    });
  };
}

/**
 * A Go map with string keys; entries keep their JSON order. Go stores a null entry as the element's
 * zero value (`{"cpu": null}` is a ratio of 0), given here as `zero`.
 */
export function map<T>(entry: Decoder<T>, zero?: T): Decoder<ReadonlyMap<string, T>> {
  return (node, path, out) => {
    if (node === undefined || node.kind === 'null') return undefined;
    if (node.kind !== 'object') {
      typeMismatch(node, path, out, 'an object');
      return undefined;
    }
    const decoded = new Map<string, T>();
    for (const [key, element] of node.entries) {
      const value = element.kind === 'null' ? zero : entry(element, path.key(key), out);
      checkTags(entry, value, path.key(key), out);
      if (value !== undefined) decoded.set(key, value);
    }
    return decoded;
  };
}
