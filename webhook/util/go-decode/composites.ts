/**
 * Decoders of Go's composite types: structs, slices and maps of other decoders. Unknown keys are
 * ignored (and collected, when asked, to warn about typos); `null` is the same as absent.
 */
import type { FieldPath } from '../../rules/shared/field-errors.js';
import { type Decoder, type Decoding, report, typeMismatch } from './decoding.js';
import type { JsonNode } from './json-text.js';
import { checkTags, hasTags } from './tags.js';

const EXPECTED = { object: 'an object', array: 'a list' } as const;

/** The node when it is an object or array as wanted; else nothing, with a type error unless it is null. */
function ofKind<K extends keyof typeof EXPECTED>(
  node: JsonNode | undefined,
  kind: K,
  path: FieldPath,
  out: Decoding,
): Extract<JsonNode, { kind: K }> | undefined {
  if (node === undefined || node.kind === 'null') return undefined;
  if (node.kind === kind) return node as Extract<JsonNode, { kind: K }>;
  typeMismatch(node, path, out, EXPECTED[kind]);
  return undefined;
}

export type Fields = Readonly<Record<string, Decoder<unknown>>>;

/** The decoded form of a struct: every field optional, as absent and null both decode to nothing. */
export type Struct<F extends Fields> = { [K in keyof F]?: F[K] extends Decoder<infer T> ? T : never };

/**
 * A Go struct. Embedded (`json:",inline"`) structs are written by spreading their fields in. In a
 * dialect that folds case, a key matches a field case-insensitively when no field has its exact
 * name, the last matching key winning.
 */
export function struct<F extends Fields>(fields: F): Decoder<Struct<F>> {
  const members = Object.entries(fields).map(([name, decoder]) => ({ name, decoder }));
  const folded = new Map(members.map(({ name }) => [name.toLowerCase(), name]));
  const anyTagged = members.some(({ decoder }) => hasTags(decoder));
  return (node, path, out) => {
    const object = ofKind(node, 'object', path, out);
    if (object === undefined) return undefined;
    const chosen = chooseFields(object, fields, folded, path, out);
    // Absent decodes to nothing and breaks no tag (every tag is omitempty): no path to build.
    const present = members.map(({ name }) => {
      const value = chosen(name);
      return value === undefined ? undefined : { value, path: path.child(name) };
    });
    const decoded: Record<string, unknown> = {};
    if (!anyTagged) {
      for (const [i, { name, decoder }] of members.entries()) {
        const field = present[i];
        const value = field && decoder(field.value, field.path, out);
        if (value !== undefined) decoded[name] = value;
      }
      return decoded as Struct<F>;
    }
    // As go-playground walks a struct: each field's own tags, then what is nested in it. A field's
    // own tags may name a sibling, so they run once every field is decoded; what is nested is held
    // until then, in one list for the whole struct (field i's errors from nestedEnds[i-1]).
    const nested: Decoding = {
      dialect: out.dialect,
      typeErrors: out.typeErrors,
      tagErrors: [],
      ...(out.unknownFields ? { unknownFields: out.unknownFields } : {}),
    };
    const nestedEnds: number[] = [];
    for (const [i, { name, decoder }] of members.entries()) {
      const field = present[i];
      const value = field && decoder(field.value, field.path, nested);
      if (value !== undefined) decoded[name] = value;
      nestedEnds.push(nested.tagErrors.length);
    }
    const sibling = (field: string): unknown => decoded[field];
    for (const [i, { name, decoder }] of members.entries()) {
      const field = present[i];
      if (field) checkTags(decoder, decoded[name], field.path, out, sibling);
      for (let at = nestedEnds[i - 1] ?? 0; at < (nestedEnds[i] ?? 0); at++) {
        const error = nested.tagErrors[at];
        if (error) report(out.tagErrors, () => error);
      }
    }
    return decoded as Struct<F>;
  };
}

/**
 * Which value each field takes. Where keys are unique and matched exactly (a parsed object), by
 * looking each field up; otherwise by walking the keys in order, so that in a dialect that folds
 * case the last matching key wins. Keys no field takes are reported when asked for.
 */
function chooseFields(
  object: Extract<JsonNode, { kind: 'object' }>,
  fields: Fields,
  folded: ReadonlyMap<string, string>,
  path: FieldPath,
  out: Decoding,
): (name: string) => JsonNode | undefined {
  if (object.lookup !== undefined && !out.dialect.foldKeyCase && out.unknownFields === undefined)
    return (name) => object.lookup?.(name);
  const chosen = new Map<string, JsonNode>();
  for (const [key, value] of object.entries) {
    const name = Object.hasOwn(fields, key)
      ? key
      : out.dialect.foldKeyCase
        ? folded.get(key.toLowerCase())
        : undefined;
    if (name !== undefined) chosen.set(name, value);
    else report(out.unknownFields, () => path.child(key));
  }
  return (name) => chosen.get(name);
}

/**
 * A Go slice. A null element decodes to `zero` when given (Go's zero value for the element type),
 * else to undefined (a nil pointer), so indexes, and the paths built from them, stay those of the
 * JSON list.
 */
export function list<T>(item: Decoder<T>): Decoder<(T | undefined)[]>;
export function list<T>(item: Decoder<T>, zero: T): Decoder<T[]>;
export function list<T>(item: Decoder<T>, zero?: T): Decoder<(T | undefined)[]> {
  return (node, path, out) => {
    const array = ofKind(node, 'array', path, out);
    if (array === undefined) return undefined;
    return Array.from(array.items, (element, index) => {
      const value = item(element, path.index(index), out);
      checkTags(item, value, path.index(index), out);
      return value ?? zero;
    });
  };
}

/**
 * A Go map with string keys; entries keep their JSON order. Go stores a null entry as the element's
 * zero value (`{"cpu": null}` is a ratio of 0), given here as `zero`; without one it is left out.
 */
export function map<T>(entry: Decoder<T>, zero?: T): Decoder<ReadonlyMap<string, T>> {
  return (node, path, out) => {
    const object = ofKind(node, 'object', path, out);
    if (object === undefined) return undefined;
    const decoded = new Map<string, T>();
    for (const [key, element] of object.entries) {
      const value = element.kind === 'null' ? zero : entry(element, path.key(key), out);
      checkTags(entry, value, path.key(key), out);
      if (value !== undefined) decoded.set(key, value);
    }
    return decoded;
  };
}
