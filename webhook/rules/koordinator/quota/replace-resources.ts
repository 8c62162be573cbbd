/**
 * Koordinator v1.8.0's ReplaceResourcesTransformer (pkg/util/transformer), which quota admission
 * applies to a pod before counting it when ElasticQuotaEvaluationTransformPod is on too: the
 * annotation `pod.koordinator.sh/replace-resources` (`from:to,...`; `from:` erases `from`) renames
 * or erases resources in every container's and init container's requests and limits and in the
 * overhead. A rename skips a list that holds `to` already, and cpu moves as its milli-value (1 cpu
 * becomes 1000 of `to`). Pod-level resources are left as they are, as there.
 */
import type { JsonObject, JsonValue } from '../../../admission/types.js';
import { asArray, asObject } from '../../../util/json.js';
import { putOwn } from '../../../util/own.js';
import { formatQuantity, quantityOf } from '../../../util/quantity.js';

export const REPLACE_RESOURCES_ANNOTATION = 'pod.koordinator.sh/replace-resources';

interface ReplaceConfig {
  erase: string[];
  /** In the annotation's order; a later mapping of the same name replaces an earlier one. */
  replace: Map<string, string>;
}

/** GetPodReplaceResourcesConfig: entries without exactly one `:` are skipped. */
export function replaceConfigOf(pod: JsonObject): ReplaceConfig | undefined {
  const value = asObject(asObject(pod.metadata)?.annotations)?.[REPLACE_RESOURCES_ANNOTATION];
  if (typeof value !== 'string' || value === '') return undefined;
  const config: ReplaceConfig = { erase: [], replace: new Map() };
  for (const mapping of value.split(',')) {
    const parts = mapping.split(':');
    if (parts.length !== 2) continue;
    const from = (parts[0] ?? '').trim();
    const to = (parts[1] ?? '').trim();
    if (to === '') config.erase.push(from);
    else config.replace.set(from, to);
  }
  return config.erase.length === 0 && config.replace.size === 0 ? undefined : config;
}

/** One resource list transformed (a copy; the pod's own is left alone). */
function transformList(list: JsonValue | undefined, config: ReplaceConfig): JsonValue | undefined {
  const source = asObject(list);
  if (!source) return list;
  const result: JsonObject = { ...source };
  for (const name of config.erase) Reflect.deleteProperty(result, name);
  for (const [from, to] of config.replace) {
    if (Object.hasOwn(result, to) || !Object.hasOwn(result, from)) continue;
    let value = result[from] as JsonValue;
    if (from === 'cpu') {
      const amount = quantityOf(value);
      // MilliValue rounds up to a whole milli-unit; an unreadable one is left for the counting to name.
      if (amount.ok) value = formatQuantity(((amount.value + 999_999n) / 1_000_000n) * 1_000_000_000n);
    }
    putOwn(result, to, value);
    Reflect.deleteProperty(result, from);
  }
  return result;
}

function transformContainers(
  containers: JsonValue | undefined,
  config: ReplaceConfig,
): JsonValue | undefined {
  if (!Array.isArray(containers)) return containers;
  return asArray(containers).map((each) => {
    const container = asObject(each);
    const resources = asObject(container?.resources);
    if (!container || !resources) return each;
    const changed: JsonObject = { ...resources };
    for (const kind of ['requests', 'limits']) {
      const list = transformList(resources[kind], config);
      if (list !== undefined) changed[kind] = list;
    }
    return { ...container, resources: changed };
  });
}

/** The pod as Koordinator's quota evaluation sees it with both gates on; the pod itself when it has no mapping. */
export function transformReplaceResources(pod: JsonObject): JsonObject {
  const config = replaceConfigOf(pod);
  const spec = asObject(pod.spec);
  if (!config || !spec) return pod;
  const changed: JsonObject = { ...spec };
  for (const key of ['containers', 'initContainers']) {
    const containers = transformContainers(spec[key], config);
    if (containers !== undefined) changed[key] = containers;
  }
  const overhead = transformList(spec.overhead, config);
  if (overhead !== undefined) changed.overhead = overhead;
  return { ...pod, spec: changed };
}
