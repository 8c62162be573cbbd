/**
 * /mutate-node-status (Koordinator spec §3): a node whose resource-amplification-ratio annotation
 * says e.g. {"cpu": 1.5} reports 1.5 × its real allocatable CPU, and keeps the real one in the
 * raw-allocatable annotation so the next status update amplifies from it, not from the already
 * amplified value.
 */
import { allow, deny, mutate } from '../../admission/decisions.js';
import type { JsonObject, JsonValue } from '../../admission/types.js';
import type { Rule } from '../../state.js';
import { formatQuantity, parseQuantity } from '../../util/quantity.js';
import { AMPLIFICATION_RATIO_ANNOTATION, AMPLIFIED_RESOURCES, RAW_ALLOCATABLE_ANNOTATION } from './keys.js';
import { asObject } from '../../util/json.js';

function amplified(node: JsonObject): Record<string, string> {
  const allocatable = asObject(asObject(node.status)?.allocatable) ?? {};
  const out: Record<string, string> = {};
  for (const resource of AMPLIFIED_RESOURCES) {
    const value = allocatable[resource];
    if (typeof value === 'string' || typeof value === 'number') out[resource] = String(value);
  }
  return out;
}

/** Koordinator's IsResourceListEqual over cpu and memory: the same keys, equal quantities. */
function sameResources(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => {
    const other = b[key];
    if (other === undefined) return false;
    try {
      return parseQuantity(a[key] ?? '') === parseQuantity(other);
    } catch {
      return a[key] === other;
    }
  });
}

const NANOS_PER_MILLI = 1_000_000n;

export const amplifyNodeStatus: Rule = (request) => {
  const node = request.object;
  if (
    request.operation !== 'UPDATE' ||
    !node ||
    request.resource.resource !== 'nodes' ||
    request.subResource !== 'status'
  ) {
    return allow();
  }
  const mutated = structuredClone(node);
  const annotations = (asObject(mutated.metadata.annotations) ?? {}) as Record<string, JsonValue>;
  const ratioText = annotations[AMPLIFICATION_RATIO_ANNOTATION];
  if (typeof ratioText !== 'string' || ratioText === '') {
    // The feature is off for this node: drop a leftover raw value.
    if (annotations[RAW_ALLOCATABLE_ANNOTATION] === undefined) return allow();
    mutated.metadata.annotations = Object.fromEntries(
      Object.entries(annotations).filter(([key]) => key !== RAW_ALLOCATABLE_ANNOTATION),
    );
    return mutate(mutated);
  }
  const allocatable = asObject(asObject(mutated.status)?.allocatable);
  if (!allocatable) return allow();

  const current = amplified(node);
  const previous = request.oldObject ? amplified(request.oldObject) : current;
  const rawText = annotations[RAW_ALLOCATABLE_ANNOTATION];
  let original: Record<string, string>;
  if (typeof rawText !== 'string' || !sameResources(previous, current)) {
    // The kubelet reported a new allocatable (or none was recorded): that is the real capacity.
    original = Object.fromEntries(
      Object.entries(current).map(([key, value]) => [key, formatQuantity(parseQuantity(value), value)]),
    );
    if (Object.keys(original).length > 0) annotations[RAW_ALLOCATABLE_ANNOTATION] = JSON.stringify(original);
  } else {
    try {
      original = JSON.parse(rawText) as Record<string, string>;
    } catch (error) {
      return deny(
        `metadata.annotations[${RAW_ALLOCATABLE_ANNOTATION}]: not valid JSON: ${(error as Error).message}`,
        500,
        'InternalError',
      );
    }
  }

  let ratios: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(ratioText);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new Error('not a JSON object');
    ratios = parsed as Record<string, unknown>;
  } catch (error) {
    return deny(
      `metadata.annotations[${AMPLIFICATION_RATIO_ANNOTATION}]: not a JSON object of ratios: ${(error as Error).message}`,
      500,
      'InternalError',
    );
  }
  for (const resource of AMPLIFIED_RESOURCES) {
    const ratio = ratios[resource];
    const base = original[resource];
    if (typeof ratio !== 'number' || !(ratio > 1) || base === undefined) continue;
    // As Koordinator: milli-units times the ratio, truncated toward zero, in the original's format.
    const milli = parseQuantity(base) / NANOS_PER_MILLI;
    const scaled = BigInt(Math.trunc(Number(milli) * ratio));
    allocatable[resource] = formatQuantity(scaled * NANOS_PER_MILLI, base);
  }
  mutated.metadata.annotations = annotations;
  return mutate(mutated);
};
