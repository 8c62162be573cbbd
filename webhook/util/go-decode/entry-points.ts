/**
 * The two ways into the decoders, side by side, each with its dialect (decoding.ts):
 *
 * - `decodeJsonText`: a JSON document held as text (a ConfigMap key), as Koordinator's controllers
 *   `json.Unmarshal` it. Reading the text itself keeps what `JSON.parse` throws away and Go looks
 *   at: number literals (`1.0` is no int64, 2^63-1 is read exactly) and key order (the last of
 *   several case-insensitive matches wins).
 * - `decodeParsed`: an object of a request, already parsed, as a Go webhook decodes a custom
 *   resource. Its values are seen through the same JsonNode view (parsed-node.ts), made only
 *   where a decoder looks.
 *
 * Both fail with the type errors (Go's decoder fails, and nothing else is checked); validator-tag
 * errors and unknown keys go to the caller's `report`, when it gives one.
 */
import type { JsonValue } from '../../admission/types.js';
import { atField, type FieldError, FieldPath, invalid } from '../../rules/shared/field-errors.js';
import { failure, success, type Result } from '../result.js';
import {
  type Decoder,
  type Decoding,
  type Dialect,
  PARSED_DIALECT,
  shown,
  TEXT_DIALECT,
} from './decoding.js';
import { parseJsonText } from './json-text.js';
import { parsedNode } from './parsed-node.js';

/** What a caller hears about besides type errors. */
export interface DecodeReport {
  /** Values that decoded but break their validator tags (go-playground runs after Unmarshal). */
  readonly tagErrors: FieldError[];
  /** When given, the keys no field takes (Go drops them silently, which hides typos). */
  readonly unknownFields?: FieldPath[];
}

/** The sink of one decoding. */
function decodingFor(dialect: Dialect, report?: DecodeReport): Decoding {
  return {
    dialect,
    typeErrors: [],
    tagErrors: report?.tagErrors ?? [],
    ...(report?.unknownFields ? { unknownFields: report.unknownFields } : {}),
  };
}

/**
 * Decodes the JSON document `text`, whose top is at `root` (a syntax error is reported there);
 * undefined for the document `null`.
 */
export function decodeJsonText<T>(
  text: string,
  decoder: Decoder<T>,
  root: FieldPath,
  report?: DecodeReport,
): Result<T | undefined, FieldError[]> {
  const parsed = parseJsonText(text);
  if (!parsed.ok) {
    const { message, tooLarge } = parsed.error;
    return failure([atField(root, tooLarge ? message : `not valid JSON: ${message}`)]);
  }
  const out = decodingFor(TEXT_DIALECT, report);
  const value = decoder(parsed.value, root, out);
  return out.typeErrors.length > 0 ? failure(out.typeErrors) : success(value);
}

/** Decodes an object of a request, whose top is at `root`. */
export function decodeParsed<T>(
  value: JsonValue,
  decoder: Decoder<T>,
  root: FieldPath,
  report?: DecodeReport,
): Result<T, FieldError[]> {
  const out = decodingFor(PARSED_DIALECT, report);
  const node = parsedNode(value);
  const decoded = decoder(node, root, out);
  if (out.typeErrors.length > 0) return failure(out.typeErrors);
  if (decoded === undefined) return failure([invalid(root, shown(node, out.dialect), 'must be an object')]);
  return success(decoded);
}

/** A decoder of whole objects of a request (a custom resource as a Go webhook decodes it). */
export const objectDecoder =
  <T>(decoder: Decoder<T>) =>
  (value: JsonValue): Result<T, FieldError[]> =>
    decodeParsed(value, decoder, FieldPath.root());
