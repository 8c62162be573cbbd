/**
 * Koordinator §1.4: the pod annotation node.koordinator.sh/extended-resource-spec mirrors each
 * container's batch-cpu and batch-memory requests and limits, for the koordlet to read.
 */
import type { JsonObject, JsonValue, KubeObject } from '../../admission/types.js';
import { formatQuantity, parseQuantity } from '../../util/quantity.js';
import { asObject } from '../../util/json.js';

export const EXTENDED_RESOURCE_SPEC_ANNOTATION = 'node.koordinator.sh/extended-resource-spec';
const BATCH_RESOURCES = ['kubernetes.io/batch-cpu', 'kubernetes.io/batch-memory'];

/** Go's encoding: sorted keys at every level, so equal specs compare equal as text. */
function sortedJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    typeof item === 'object' && item !== null && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  );
}

function batchList(list: JsonObject | undefined): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const name of BATCH_RESOURCES) {
    const value = list?.[name];
    if (typeof value !== 'string' && typeof value !== 'number') continue;
    try {
      out[name] = formatQuantity(parseQuantity(String(value)), String(value));
    } catch {
      out[name] = String(value);
    }
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Sets the annotation on `pod` (mutating it) when it differs; throws on an unreadable current one. */
export function applyExtendedResourceSpec(pod: KubeObject): void {
  const containers: Record<string, { limits?: Record<string, string>; requests?: Record<string, string> }> =
    {};
  const spec = asObject(pod.spec);
  for (const container of Array.isArray(spec?.containers) ? spec.containers : []) {
    const resources = asObject(asObject(container)?.resources);
    const limits = batchList(asObject(resources?.limits));
    const requests = batchList(asObject(resources?.requests));
    const name = asObject(container)?.name;
    if ((limits || requests) && typeof name === 'string') {
      containers[name] = { ...(limits ? { limits } : {}), ...(requests ? { requests } : {}) };
    }
  }
  const desired = Object.keys(containers).length > 0 ? { containers } : {};
  const annotations = (asObject(pod.metadata.annotations) ?? {}) as Record<string, JsonValue>;
  const currentText = annotations[EXTENDED_RESOURCE_SPEC_ANNOTATION];
  let current: unknown = {};
  if (typeof currentText === 'string') {
    try {
      current = JSON.parse(currentText);
    } catch (error) {
      throw new Error(
        `metadata.annotations[${EXTENDED_RESOURCE_SPEC_ANNOTATION}]: failed to get current extended resource spec: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }
  if (sortedJson(current) === sortedJson(desired)) return;
  annotations[EXTENDED_RESOURCE_SPEC_ANNOTATION] = sortedJson(desired);
  pod.metadata.annotations = annotations;
}
