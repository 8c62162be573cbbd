/**
 * Koordinator's extended_resource_spec.go
 * (extended_resource_spec.go): the pod annotation node.koordinator.sh/extended-resource-spec mirrors each
 * container's batch-cpu and batch-memory requests and limits, for the koordlet to read.
 *
 * Upstream sources and every message: docs/rules/mutate-pod.md.
 */
import type { JsonObject, JsonValue, KubeObject } from '../../../admission/types.js';
import type { CopyOnWrite } from '../../../util/copy-on-write.js';
import { canonicalQuantity, writtenAs } from '../../../util/quantity.js';
import { quantityAt } from '../../shared/quantity-at.js';
import { failure, success, type Result } from '../../../util/result.js';
import { FieldPath, type FieldError } from '../../shared/field-errors.js';
import { asArray, asObject, readJsonText } from '../../../util/json.js';
import { putOwn } from '../../../util/own.js';
import type { StepSkip } from '../../shared/step-skip.js';

export const EXTENDED_RESOURCE_SPEC_ANNOTATION = 'node.koordinator.sh/extended-resource-spec';
export const BATCH_RESOURCES = ['kubernetes.io/batch-cpu', 'kubernetes.io/batch-memory'];

/** Deeper than any spec this rule writes (containers, name, requests, resource: four levels). */
const MAX_SPEC_DEPTH = 8;

/**
 * Go's encoding: sorted keys at every level, so equal specs compare equal as text. Undefined for
 * a value nested deeper than `depth` levels: the current annotation is user text, and JSON.parse
 * builds a structure far deeper than a recursive walk could follow; such a value is no spec.
 */
function sortedJson(value: unknown, depth = MAX_SPEC_DEPTH): string | undefined {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  if (depth === 0) return undefined;
  const items: string[] = [];
  if (Array.isArray(value)) {
    for (const item of value as unknown[]) {
      const text = sortedJson(item, depth - 1);
      if (text === undefined) return undefined;
      items.push(text);
    }
    return `[${items.join(',')}]`;
  }
  const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [key, item] of entries) {
    const text = sortedJson(item, depth - 1);
    if (text === undefined) return undefined;
    items.push(`${JSON.stringify(key)}:${text}`);
  }
  return `{${items.join(',')}}`;
}

/** The batch quantities of one resource list, canonical; one it cannot read goes to `errors`. */
function batchList(
  list: JsonObject | undefined,
  path: FieldPath,
  errors: FieldError[],
): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const name of BATCH_RESOURCES) {
    const value = list?.[name];
    if (value === undefined) continue;
    const read = quantityAt(value, path.key(name));
    if (read.ok) out[name] = canonicalQuantity(writtenAs(value));
    else errors.push(read.error);
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

type ContainerSpecs = Record<string, { limits?: Record<string, string>; requests?: Record<string, string> }>;

/** The annotation's content; the first batch quantity it cannot read (naming the field) instead. */
function desiredSpec(pod: KubeObject): Result<{ containers?: ContainerSpecs }, FieldError> {
  const containers: ContainerSpecs = {};
  const spec = asObject(pod.spec);
  const errors: FieldError[] = [];
  for (const [index, container] of asArray(spec?.containers).entries()) {
    const resources = asObject(asObject(container)?.resources);
    const path = FieldPath.of('spec', 'containers').index(index).child('resources');
    const limits = batchList(asObject(resources?.limits), path.child('limits'), errors);
    const requests = batchList(asObject(resources?.requests), path.child('requests'), errors);
    if (errors[0]) return failure(errors[0]);
    const name = asObject(container)?.name;
    if ((limits || requests) && typeof name === 'string') {
      putOwn(containers, name, { ...(limits ? { limits } : {}), ...(requests ? { requests } : {}) });
    }
  }
  return success(Object.keys(containers).length > 0 ? { containers } : {});
}

/**
 * Field `name` of a JSON object as Go's json.Unmarshal fills a struct field: the key spelt exactly,
 * else the last one equal to it ignoring case.
 */
function goField(object: JsonObject, name: string): JsonValue | undefined {
  if (Object.hasOwn(object, name)) return object[name];
  const key = Object.keys(object).findLast((candidate) => candidate.toLowerCase() === name);
  return key === undefined ? undefined : object[key];
}

/**
 * The current annotation as Koordinator reads it before comparing (json.Unmarshal into its
 * ExtendedResourceSpec): the fields it has, `containers` and each container's `limits` and
 * `requests`; any other key, whatever its name, is ignored as Go's decoder ignores it, and a null
 * is the absent value it decodes to. Anything else is left as written (it differs from every
 * spec this rule writes).
 */
function asKoordinatorReads(value: unknown): unknown {
  const spec = asObject(value as JsonValue);
  if (!spec) return value;
  const containers = goField(spec, 'containers');
  if (containers === undefined || containers === null) return {};
  const byName = asObject(containers);
  if (!byName) return { containers };
  const read: JsonObject = {};
  for (const [name, item] of Object.entries(byName)) {
    const container = asObject(item);
    const lists: JsonObject = {};
    for (const kind of ['limits', 'requests']) {
      const list = container && goField(container, kind);
      if (list !== undefined && list !== null) lists[kind] = list;
    }
    putOwn(read, name, item === null || container ? lists : item);
  }
  return { containers: read };
}

/**
 * Sets the annotation on the pod when it differs. A batch quantity that cannot be read, or a
 * current annotation that is not JSON, leaves the pod alone: the returned warning names the field.
 */
export function applyExtendedResourceSpec(draft: CopyOnWrite<KubeObject>): StepSkip | undefined {
  const pod = draft.current;
  const skipped = `; the ${EXTENDED_RESOURCE_SPEC_ANNOTATION} annotation was not updated`;
  const read = desiredSpec(pod);
  if (!read.ok) return { warning: `${read.error.toString()}${skipped}`, reason: 'invalid-quantity' };
  const desired = read.value;
  const currentText = asObject(pod.metadata.annotations)?.[EXTENDED_RESOURCE_SPEC_ANNOTATION];
  let current: unknown = {};
  if (typeof currentText === 'string') {
    const read = readJsonText(currentText);
    if (read.ok) current = read.value;
    else {
      return {
        warning: `metadata.annotations[${EXTENDED_RESOURCE_SPEC_ANNOTATION}]: failed to get current extended resource spec: not valid JSON${skipped}`,
        reason: 'invalid-annotation',
      };
    }
  }
  const desiredText = sortedJson(desired) ?? '{}';
  if (sortedJson(asKoordinatorReads(current)) === desiredText) return undefined;
  draft.mapAt('metadata', 'annotations')[EXTENDED_RESOURCE_SPEC_ANNOTATION] = desiredText;
  return undefined;
}
