/**
 * /mutate-pod-gpu-class: a pod that asks for GPUs in a tiered namespace is pinned to its tier's
 * GPU class, so the cluster autoscaler grows exactly the node pool that class lives in.
 *
 * One class becomes a nodeSelector; several become a required node-affinity expression
 * `In [classes]`, added to every existing required term (terms are ORed, so it must hold in
 * each). A pod that already constrains the class label chose for itself and is left alone.
 */
import { allow, mutate } from '../../admission/decisions.js';
import type { Decision, JsonObject, KubeObject } from '../../admission/types.js';
import type { Rule } from '../../state.js';
import { quantityAt } from '../shared/quantity-at.js';
import { success, type Result } from '../../util/result.js';
import type { FieldError } from '../shared/field-errors.js';
import type { TierMapping } from './tier-mapping.js';
import { asObject, asArray } from '../../util/json.js';
import { own } from '../../util/own.js';
import { podContainers } from '../shared/pod-containers.js';

export type SkipReason =
  'no-gpu' | 'no-tier' | 'unknown-tier' | 'user-override' | 'unknown-namespace' | 'invalid-quantity';

/**
 * True when a container or init container requests or limits one of the counted GPU resources;
 * an error naming the field for a GPU amount that cannot be read before a positive one is found.
 * (Our exact parser: client-node's quantityToScalar throws on valid forms such as "1.5Gi".)
 */
function requestsGpu(pod: KubeObject, gpuResources: readonly string[]): Result<boolean, FieldError> {
  for (const { container, path } of podContainers(pod)) {
    const resources = asObject(asObject(container)?.resources);
    for (const kind of ['requests', 'limits']) {
      const amounts = asObject(resources?.[kind]);
      for (const name of gpuResources) {
        const value = own(amounts, name);
        if (value === undefined) continue;
        const amount = quantityAt(value, path.child('resources', kind).key(name));
        if (!amount.ok) return amount;
        if (amount.value > 0n) return success(true);
      }
    }
  }
  return success(false);
}

/** True when the pod already constrains `key` through its nodeSelector or any node-affinity term. */
function constrainsNodeLabel(pod: KubeObject, key: string): boolean {
  const spec = asObject(pod.spec);
  if (own(asObject(spec?.nodeSelector), key) !== undefined) return true;
  const nodeAffinity = asObject(asObject(spec?.affinity)?.nodeAffinity);
  const required = asArray(
    asObject(nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution)?.nodeSelectorTerms,
  );
  const preferred = asArray(nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution).map(
    (weighted) => asObject(weighted)?.preference ?? null,
  );
  return [...required, ...preferred].some((term) =>
    asArray(asObject(term)?.matchExpressions).some((expression) => asObject(expression)?.key === key),
  );
}

/** The classes for this pod: its workload type's override in the tier, else the tier's classes. */
function classesFor(
  mapping: TierMapping,
  tier: string,
  podLabels: JsonObject | undefined,
): readonly string[] | undefined {
  const folded = tier.toLowerCase();
  const workloadType = own(podLabels, mapping.workloadTypeLabel);
  if (typeof workloadType === 'string') {
    const override = mapping.workloadOverrides.get(folded)?.get(workloadType);
    if (override) return override;
  }
  return mapping.tiers.get(folded);
}

/**
 * The pod pinned to `classes`; `pod` is not modified. Only the objects on the path to the change
 * are copied; the rest is shared with `pod`, so the admission diff against it skips everything
 * else (a pod may carry megabytes the rule never looks at). Neither may be changed in place after.
 */
function pinToClasses(pod: KubeObject, key: string, classes: readonly string[]): KubeObject {
  const spec: JsonObject = { ...(asObject(pod.spec) ?? {}) };
  const mutated: KubeObject = { ...pod, spec };
  if (classes.length === 1) {
    spec.nodeSelector = { ...(asObject(spec.nodeSelector) ?? {}), [key]: classes[0] ?? '' };
    return mutated;
  }
  const expression: JsonObject = { key, operator: 'In', values: [...classes] };
  const affinity: JsonObject = { ...(asObject(spec.affinity) ?? {}) };
  const nodeAffinity: JsonObject = { ...(asObject(affinity.nodeAffinity) ?? {}) };
  const required: JsonObject = {
    ...(asObject(nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution) ?? {}),
  };
  const terms = asArray(required.nodeSelectorTerms);
  required.nodeSelectorTerms =
    terms.length === 0
      ? [{ matchExpressions: [expression] }]
      : terms.map((term) => {
          const current = asObject(term) ?? {};
          return { ...current, matchExpressions: [...asArray(current.matchExpressions), expression] };
        });
  nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution = required;
  affinity.nodeAffinity = nodeAffinity;
  spec.affinity = affinity;
  return mutated;
}

function skip(reason: SkipReason, tier = '', warning?: string): Decision {
  return { ...allow(warning ? [warning] : undefined), audit: { action: 'skipped', reason, tier } };
}

export const assignGpuClass: Rule = (request, state) => {
  const pod = request.object;
  if (!pod) return allow();
  const mapping = state.gpuTierMapping();
  const gpu = requestsGpu(pod, mapping.gpuResources);
  if (!gpu.ok) return skip('invalid-quantity', '', `GPU class not set: ${gpu.error.toString()}`);
  if (!gpu.value) return skip('no-gpu');

  const namespaceName = request.namespace ?? '';
  const namespace = state.namespace(namespaceName);
  if (!namespace) {
    return skip(
      'unknown-namespace',
      '',
      `GPU class not set: namespace ${namespaceName} is not known to admission-operator yet; no tier applied`,
    );
  }
  const tier = own(namespace.labels, mapping.namespaceLabelKey);
  if (tier === undefined || tier === '') {
    return skip(
      'no-tier',
      '',
      `GPU class not set: namespace ${namespaceName} has no ${mapping.namespaceLabelKey} label`,
    );
  }
  if (constrainsNodeLabel(pod, mapping.nodeLabelKey)) return skip('user-override', tier);
  const labels = asObject(asObject(pod.metadata)?.labels);
  const classes = classesFor(mapping, tier, labels);
  if (!classes || classes.length === 0) {
    return skip(
      'unknown-tier',
      tier,
      `GPU class not set: tier ${JSON.stringify(tier)} of namespace ${namespaceName} is not in the gpu-tier-mapping (known: ${[...mapping.tiers.keys()].join(', ')})`,
    );
  }
  return {
    ...mutate(pinToClasses(pod, mapping.nodeLabelKey, classes)),
    audit: { action: 'injected', tier: tier.toLowerCase(), class: classes.join(',') },
  };
};
