/**
 * What the quota rules know of an ElasticQuota: its place in the tree (from labels), its
 * bounds and its bound namespaces (from annotations). Built by the store from the watch and
 * by the rules from the object under review, the same way.
 */
import type { JsonObject, JsonValue } from '../../../admission/types.js';
import type { QuotaView } from '../../../state.js';
import { QUOTA_ANNOTATIONS, QUOTA_LABELS, ROOT_QUOTA } from './keys.js';
import { asObject, readJsonText } from '../../../util/json.js';
import { putOwn } from '../../../util/own.js';

// Declared with the state that serves it, below the rules; its readers keep finding it here.
export type { QuotaView };

function stringMap(value: JsonValue | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, item] of Object.entries(asObject(value) ?? {})) {
    if (typeof item === 'string' || typeof item === 'number') putOwn(out, key, String(item));
  }
  return out;
}

function parseAdmissionAnnotation(value: string | undefined): Record<string, JsonValue> | undefined {
  if (!value) return undefined;
  const read = readJsonText(value);
  // An unreadable limit falls back to max, as an absent one does.
  if (!read.ok) return undefined;
  const limits = asObject(read.value);
  if (!limits || Object.keys(limits).length === 0) return undefined;
  // A nested value is no quantity; an empty one of its kind says so without holding (and later
  // walking) whatever depth the annotation's text built.
  const shallow = (item: JsonValue): JsonValue =>
    Array.isArray(item) ? [] : typeof item === 'object' && item !== null ? {} : item;
  return Object.fromEntries(Object.entries(limits).map(([key, item]) => [key, shallow(item)]));
}

function parseNamespacesAnnotation(value: string | undefined): string[] {
  if (!value) return [];
  const read = readJsonText(value);
  const parsed = read.ok ? read.value : undefined;
  return Array.isArray(parsed) ? parsed.filter((item): item is string => typeof item === 'string') : [];
}

/** Reads a quota from its JSON form (as the API server sends it in a review or a watch event). */
export function quotaView(object: JsonObject): QuotaView {
  const metadata = asObject(object.metadata) ?? {};
  const labels = stringMap(metadata.labels);
  const annotations = stringMap(metadata.annotations);
  const spec = asObject(object.spec) ?? {};
  const name = typeof metadata.name === 'string' ? metadata.name : '';
  const parentLabel = labels[QUOTA_LABELS.parent] ?? '';
  return {
    namespace: typeof metadata.namespace === 'string' ? metadata.namespace : '',
    name,
    parent: parentLabel !== '' || name === ROOT_QUOTA ? parentLabel : ROOT_QUOTA,
    isParent: labels[QUOTA_LABELS.isParent] === 'true',
    treeId: labels[QUOTA_LABELS.treeId] ?? '',
    isRoot: labels[QUOTA_LABELS.isRoot] === 'true',
    allowForceUpdate: labels[QUOTA_LABELS.allowForceUpdate] === 'true',
    min: stringMap(spec.min),
    max: stringMap(spec.max),
    namespaces: parseNamespacesAnnotation(annotations[QUOTA_ANNOTATIONS.namespaces]),
    admission: parseAdmissionAnnotation(annotations[QUOTA_ANNOTATIONS.admission]),
  };
}
