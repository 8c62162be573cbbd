/** Narrowing helpers for reading objects under review, which arrive as untyped JSON. */
import type { JsonObject, JsonValue } from '../admission/types.js';

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
    if (typeof item === 'string') out[key] = item;
  return out;
}

/** An object's labels. */
export function labelsOf(object: JsonObject | null): Record<string, string> {
  return stringsOf(asObject(object?.metadata)?.labels);
}
