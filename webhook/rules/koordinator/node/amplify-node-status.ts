/**
 * /mutate-node-status (docs/rules/mutate-node-status.md; Koordinator's
 * resource_amplification.go): a node whose resource-amplification-ratio annotation
 * says e.g. {"cpu": 1.5} reports 1.5 × its real allocatable CPU, and keeps the real one in the
 * raw-allocatable annotation so the next status update amplifies from it, not from the already
 * amplified value.
 */
import { allow, mutate, warn } from '../../../admission/decisions.js';
import type { Decision, JsonObject, JsonValue, KubeObject } from '../../../admission/types.js';
import type { Rule } from '../../../state.js';
import { canonicalQuantity, formatOf, goQuantityString, writtenAs } from '../../../util/quantity.js';
import { quantityAt } from '../../shared/quantity-at.js';
import { success, type Result } from '../../../util/result.js';
import { FieldPath, type FieldError } from '../../shared/field-errors.js';
import { skipAudit, type StepSkip } from '../../shared/step-skip.js';
import { AMPLIFICATION_RATIO_ANNOTATION, AMPLIFIED_RESOURCES, RAW_ALLOCATABLE_ANNOTATION } from './keys.js';
import { asObject, readJsonText } from '../../../util/json.js';
import { KINDS } from '../../../kinds.js';

function amplified(node: JsonObject): Record<string, JsonValue> {
  const allocatable = asObject(asObject(node.status)?.allocatable) ?? {};
  const out: Record<string, JsonValue> = {};
  for (const resource of AMPLIFIED_RESOURCES) {
    const value = allocatable[resource];
    if (value !== undefined) out[resource] = value;
  }
  return out;
}

/** Koordinator's IsResourceListEqual over cpu and memory: the same keys, equal quantities. */
function sameResources(
  a: Record<string, JsonValue>,
  b: Record<string, JsonValue>,
  path: FieldPath,
): Result<boolean, FieldError> {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return success(false);
  for (const key of keys) {
    const other = b[key];
    if (other === undefined) return success(false);
    const left = quantityAt(a[key], path.key(key));
    if (!left.ok) return left;
    const right = quantityAt(other, path.key(key));
    if (!right.ok) return right;
    if (left.value !== right.value) return success(false);
  }
  return success(true);
}

const ALLOCATABLE = FieldPath.of('status', 'allocatable');

const NANOS_PER_MILLI = 1_000_000n;
const MAX_INT64_FLOAT = 2 ** 63;

/**
 * The status update as it came, with a warning: this webhook (failurePolicy Ignore) never refuses
 * a node's heartbeat because it could not amplify it, whatever the annotations hold.
 */
function skip(warning: string, reason: StepSkip['reason']): Decision {
  return { ...warn(`${warning}; node status not amplified`), audit: skipAudit([{ warning, reason }]) };
}

export const amplifyNodeStatus: Rule = (request) => {
  const node = request.object;
  if (
    request.operation !== 'UPDATE' ||
    !node ||
    request.resource.resource !== KINDS.node.plural ||
    request.subResource !== 'status'
  ) {
    return allow();
  }
  return amplify(node, request.oldObject);
};

const unreadable = (error: FieldError): Decision => skip(error.toString(), 'invalid-quantity');

function amplify(node: KubeObject, oldNode: KubeObject | null): Decision {
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

  const ratioPath = `metadata.annotations[${AMPLIFICATION_RATIO_ANNOTATION}]`;
  const ratioRead = readJsonText(ratioText);
  const ratios: JsonObject | undefined = ratioRead.ok ? asObject(ratioRead.value) : undefined;
  // Koordinator reads the whole annotation into a map of floats: any value but a number (or
  // null, which Go reads as 0) fails it, whatever resource it is for.
  if (!ratios || !Object.values(ratios).every((ratio) => ratio === null || typeof ratio === 'number'))
    return skip(`${ratioPath}: must be a JSON object of ratios such as {"cpu": 1.5}`, 'invalid-annotation');

  const current = amplified(node);
  const previous = oldNode ? amplified(oldNode) : current;
  const rawText = annotations[RAW_ALLOCATABLE_ANNOTATION];
  const rawPath = FieldPath.of('metadata', 'annotations').key(RAW_ALLOCATABLE_ANNOTATION);
  let original: Record<string, JsonValue>;
  const unchanged = typeof rawText === 'string' ? sameResources(previous, current, ALLOCATABLE) : undefined;
  if (unchanged && !unchanged.ok) return unreadable(unchanged.error);
  if (typeof rawText !== 'string' || !unchanged?.value) {
    // The kubelet reported a new allocatable (or none was recorded): that is the real capacity.
    original = {};
    // As Go writes a ResourceList: keys sorted, each quantity in its canonical spelling.
    for (const [key, value] of Object.entries(current).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const read = quantityAt(value, ALLOCATABLE.key(key));
      if (!read.ok) return unreadable(read.error);
      original[key] = canonicalQuantity(writtenAs(value));
    }
    if (Object.keys(original).length > 0) annotations[RAW_ALLOCATABLE_ANNOTATION] = JSON.stringify(original);
  } else {
    const rawRead = readJsonText(rawText);
    const parsed: JsonObject | undefined = rawRead.ok ? asObject(rawRead.value) : undefined;
    if (!parsed)
      return skip(
        `${rawPath.toString()}: must be a JSON object of quantities such as {"cpu": "1"}`,
        'invalid-annotation',
      );
    original = parsed;
  }

  for (const resource of AMPLIFIED_RESOURCES) {
    const ratio = ratios[resource];
    const base = original[resource];
    if (typeof ratio !== 'number' || !(ratio > 1) || base === undefined) continue;
    // As Koordinator: milli-units times the ratio, truncated toward zero, in the original's format.
    const read = quantityAt(base, rawPath.key(resource));
    if (!read.ok) return unreadable(read.error);
    const milli = read.value / NANOS_PER_MILLI;
    const product = Math.trunc(Number(milli) * ratio);
    // Go's int64 conversion of a float past int64 is undefined; no node holds that much.
    if (!(Math.abs(product) <= MAX_INT64_FLOAT)) {
      return skip(
        `${ratioPath}[${resource}]: ratio ${ratio} takes ${resource} past 2^63-1 milli-units`,
        'invalid-annotation',
      );
    }
    allocatable[resource] = goQuantityString(BigInt(product) * NANOS_PER_MILLI, formatOf(writtenAs(base)));
  }
  mutated.metadata.annotations = annotations;
  return mutate(mutated);
}
