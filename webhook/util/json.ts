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
