/**
 * A webhook's JSONPatch applied to the object as the API server applies it, so the next webhook of
 * the chain (and the validating ones) see what the API server would hand them.
 */
import fastJsonPatch from 'fast-json-patch';
import type { JsonPatch } from '../admission/response.js';
import type { KubeObject } from '../admission/types.js';

const clone = <T>(value: T): T => structuredClone(value);

/**
 * Applies a JSONPatch response as the API server does: fast-json-patch, validating each operation
 * (a `test` that fails, or a path that does not resolve, throws); `inPlace` when `object` is a copy
 * of the caller's own.
 */
export function applyPatch(object: KubeObject, patch: JsonPatch, inPlace = false): KubeObject {
  return fastJsonPatch.applyPatch(inPlace ? object : clone(object), patch, true, true).newDocument;
}
