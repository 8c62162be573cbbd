/**
 * What every decoder shares: its signature, the sink it reports into, and the dialect of the entry
 * point that started it (see entry-points.ts).
 *
 * A decoder reads one JSON value the way Go's decoders fill a typed field, returns `undefined` for
 * absent, null or refused values, and reports one error per refused value rather than stopping at
 * the first, so one refusal lists every malformed field.
 */
import {
  type BadValue,
  type FieldError,
  type FieldPath,
  GoStringer,
  invalid,
} from '../../rules/shared/field-errors.js';
import { type JsonNode, nodeText } from './json-text.js';

export type Decoder<T> = (node: JsonNode | undefined, path: FieldPath, out: Decoding) => T | undefined;

/** What a decoder decodes to: the type the rules read, inferred so the two cannot drift apart. */
export type Decoded<D> = D extends Decoder<infer T> ? T : never;

/** Where decoding reports: type errors (Go's decoder fails) apart from tag errors (the validator). */
export interface Decoding {
  readonly dialect: Dialect;
  readonly typeErrors: FieldError[];
  readonly tagErrors: FieldError[];
  /** Keys no field takes: Go drops them silently, which hides typos, so they are collected for warnings. */
  readonly unknownFields?: FieldPath[];
}

/**
 * Problems kept per list: a refusal shows a few dozen within its bounded message, and a document
 * with 20,000 bad or unknown keys must not build 20,000 paths to say so.
 */
const MAX_REPORTED = 100;

export function report<T>(list: T[] | undefined, item: () => T): void {
  if (list && list.length < MAX_REPORTED) list.push(item());
}

export type IntegerType = 'int32' | 'uint32' | 'int64';

/**
 * What differs between the two entry points. Go's encoding/json matches a key to a field
 * case-insensitively when no field has its exact name, the last match winning: from text that is
 * reproduced. From a parsed object it is not: JSON.parse has already merged repeated keys and lost
 * their order, and the API server prunes a custom resource's keys its schema does not name
 * (docs/rules/kthena.md). The wording is each family's: the refusals users of each already
 * read, kept word for word.
 */
export interface Dialect {
  readonly foldKeyCase: boolean;
  /** How a refusal shows an object or a list found where something else goes. */
  shownContainer(node: JsonNode): BadValue;
  /** What an integer must be; `outOfRange` when the value is an integer beyond `min`..`max`. */
  integer(type: IntegerType, min: bigint, max: bigint, outOfRange: boolean): string;
  /** What a duration must be, when the value is not a string. */
  readonly durationString: string;
  /** What a duration must be, when the string is no duration (`reason` says why). */
  duration(reason: string): string;
  /** What a quantity must be; `reason` is why a string or number is no quantity. */
  quantity(reason?: string): string;
}

/** The dialect of JSON text: Koordinator's configurations (encoding/json). */
export const TEXT_DIALECT: Dialect = {
  foldKeyCase: true,
  // The value as written, abridged.
  shownContainer: (node) => new GoStringer(nodeText(node)),
  integer: (type, min, max, outOfRange) =>
    `an integer (${type})${outOfRange ? ` from ${min.toString()} to ${max.toString()}` : ''}`,
  durationString: 'a duration string such as "5m"',
  duration: () => 'a duration such as "5m" or "1h30m"',
  quantity: () => 'a quantity such as "100M"',
};

/** The dialect of already-parsed objects: Kthena's custom resources, as its webhook decodes them. */
export const PARSED_DIALECT: Dialect = {
  foldKeyCase: false,
  // Named by its JSON type rather than dumped.
  shownContainer: (node) => node.kind,
  integer: (type, min, max) =>
    `${type.startsWith('u') ? 'a' : 'an'} ${type} (a whole number from ${min.toString()} to ${max.toString()})`,
  durationString: 'a duration string such as "30s" or "1m30s"',
  duration: (reason) => `a duration such as "30s" or "1m30s": ${reason}`,
  quantity: (reason) => `a quantity such as "500m", "2Gi" or 3${reason === undefined ? '' : `: ${reason}`}`,
};

/** The offending value as messages show it: scalars as written, containers as the dialect says. */
export function shown(node: JsonNode, dialect: Dialect): BadValue {
  switch (node.kind) {
    case 'string':
    case 'boolean':
      return node.value;
    case 'number':
      return new GoStringer(nodeText(node));
    case 'null':
      return null;
    default:
      return dialect.shownContainer(node);
  }
}

/** Records that `node` is not what Go expected at `path` (`expected` completes "must be"). */
export function typeMismatch(node: JsonNode, path: FieldPath, out: Decoding, expected: string): void {
  report(out.typeErrors, () => invalid(path, shown(node, out.dialect), `must be ${expected}`));
}
