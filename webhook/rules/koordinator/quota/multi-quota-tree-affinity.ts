/**
 * Koordinator's multi_quota_tree_affinity.go (gate MultiQuotaTree;
 * multi_quota_tree_affinity.go): a cluster split into several quota trees, each owning a
 * set of nodes described by an ElasticQuotaProfile. A pod of a quota in such a tree is pinned to
 * that tree's nodes with a required node affinity, so quota accounting and placement agree.
 *
 * Upstream sources and every message: docs/rules/mutate-pod.md.
 */
import type { JsonObject, JsonValue, KubeObject } from '../../../admission/types.js';
import type { StateSnapshot } from '../../../state.js';
import type { CopyOnWrite } from '../../../util/copy-on-write.js';
import { asArray, asObject, labelsOf, stringsOf } from '../../../util/json.js';
import { QUOTA_LABELS } from './keys.js';

/** The profile's nodeSelector as node selector requirements: matchLabels (sorted) then matchExpressions. */
function requirementsOf(nodeSelector: JsonObject): JsonObject[] {
  const fromLabels = Object.entries(stringsOf(nodeSelector.matchLabels))
    // Go ranges over the map in random order; sorting keeps the patch stable across calls.
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]): JsonObject => ({ key, operator: 'In', values: [value] }));
  const fromExpressions = asArray(nodeSelector.matchExpressions).flatMap((item): JsonObject[] => {
    const expression = asObject(item);
    if (!expression || typeof expression.key !== 'string' || typeof expression.operator !== 'string')
      return [];
    const values = asArray(expression.values).filter((value) => typeof value === 'string');
    return [{ key: expression.key, operator: expression.operator, ...(values.length > 0 ? { values } : {}) }];
  });
  return [...fromLabels, ...fromExpressions];
}

/** Adds the tree's node requirements to the pod; returns whether it did. */
export function applyMultiQuotaTreeAffinity(
  draft: CopyOnWrite<KubeObject>,
  namespace: string,
  state: StateSnapshot,
): boolean {
  const pod = draft.current;
  // Only the quota label or the namespace's name, not the full quota-name fallback of quotaNameOf.
  const quotaName = labelsOf(pod)[QUOTA_LABELS.name] || namespace;
  const quota = state.elasticQuota(quotaName) ?? state.quotaBoundTo(namespace);
  if (!quota?.treeId) return false;
  // Koordinator takes the first profile the API server lists: by namespace, then name.
  const profile = state.elasticQuotaProfiles(quota.treeId)[0];
  if (!profile?.nodeSelector) return false;
  const requirements = requirementsOf(profile.nodeSelector);

  const required = draft.mapAt(
    'spec',
    'affinity',
    'nodeAffinity',
    'requiredDuringSchedulingIgnoredDuringExecution',
  );
  const terms = asArray(required.nodeSelectorTerms);
  if (terms.length === 0) {
    required.nodeSelectorTerms = [{ matchExpressions: requirements }];
    return true;
  }
  // Node selector terms are ORed, so the tree's requirements must join every one of them.
  required.nodeSelectorTerms = terms.map((term): JsonValue => {
    const object = asObject(term) ?? {};
    return { ...object, matchExpressions: [...asArray(object.matchExpressions), ...requirements] };
  });
  return true;
}
