/** Narrowing helpers for reading objects under review, which arrive as untyped JSON. */
import { pruneDeepJson } from '../admission/json-depth.js';
import type { JsonObject, JsonValue } from '../admission/types.js';
import { putOwn } from './own.js';
import { failure, success, type Result } from './result.js';

/** How deep JSON written into an annotation or a ConfigMap key may nest: far above any real value. */
const MAX_JSON_TEXT_DEPTH = 64;

/**
 * JSON.parse for JSON that users write into strings (annotations, ConfigMap keys); the failure is
 * why the text is not read: not JSON, or nested deeper than MAX_JSON_TEXT_DEPTH (JSON.parse would
 * build such a value, but every walk over it afterwards, comparing, cloning, printing, would
 * recurse past the stack).
 */
export function readJsonText(text: string): Result<JsonValue> {
  const bytes = Buffer.from(text);
  if (pruneDeepJson(bytes, MAX_JSON_TEXT_DEPTH).pruned > 0) {
    return failure(`nested deeper than ${MAX_JSON_TEXT_DEPTH} levels`);
  }
  try {
    return success(JSON.parse(text) as JsonValue);
  } catch (error) {
    // JSON.parse refuses only by throwing; its SyntaxError is the one refusal it has.
    if (!(error instanceof SyntaxError)) throw error;
    return failure(error.message);
  }
}

/** The value when it is a JSON object (not null, not an array). */
export function asObject(value: JsonValue | undefined): JsonObject | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
}

/** The value when it is a JSON array, else an empty one. */
export function asArray(value: JsonValue | undefined): JsonValue[] {
  return Array.isArray(value) ? value : [];
}

/** The string-valued entries of a JSON object (labels and annotations are always strings). */
export function stringsOf(value: JsonValue | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, item] of Object.entries(asObject(value) ?? {}))
    if (typeof item === 'string') putOwn(out, key, item);
  return out;
}

/** An object's labels. */
export function labelsOf(object: JsonObject | null): Record<string, string> {
  return stringsOf(asObject(object?.metadata)?.labels);
}
