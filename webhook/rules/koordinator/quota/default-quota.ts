/**
 * /mutate-scheduling-sigs-k8s-io-v1alpha1-elasticquota (CREATE): Koordinator's defaults.
 * - A quota without a parent hangs under the root quota.
 * - A quota without a tree id inherits its parent's (the parent must exist).
 * - The shared weight defaults to max, and an explicit one is aligned with max's keys.
 * Upstream: fillQuotaDefaultInformation in
 * quota_topology.go;
 * every message: docs/rules/mutate-scheduling-sigs-k8s-io-v1alpha1-elasticquota.md.
 */
import { allow, mutate } from '../../../admission/decisions.js';
import type { Decision, JsonValue } from '../../../admission/types.js';
import type { Rule } from '../../../state.js';
import { stringsOf, readJsonText } from '../../../util/json.js';
import { own, putOwn } from '../../../util/own.js';
import { canonicalQuantity } from '../../../util/quantity.js';
import { QUOTA_ANNOTATIONS, QUOTA_LABELS, ROOT_QUOTA } from './keys.js';
import { quotaView } from './quota-view.js';
import { decisionOf, findings } from '../../shared/findings.js';
import { atField, FieldPath } from '../../shared/field-errors.js';

const refused = (path: FieldPath, message: string): Decision =>
  decisionOf(findings([atField(path, message)]));
const ANNOTATIONS = FieldPath.of('metadata', 'annotations');

/**
 * Go's json.Marshal of a ResourceList: keys sorted, each quantity in Go's spelling (`1.5Gi` is
 * written `1536Mi`); the annotation keeps that form.
 */
function resourceListJson(list: Readonly<Record<string, string>>): string {
  return JSON.stringify(
    Object.fromEntries(
      Object.entries(list)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([key, value]) => [key, canonicalQuantity(value)]),
    ),
  );
}

export const defaultElasticQuota: Rule = (request, state) => {
  const object = request.object;
  if (request.operation !== 'CREATE' || request.subResource || !object) return allow();
  const quota = quotaView(object);
  if (quota.name === ROOT_QUOTA) return allow();

  const mutated = structuredClone(object);
  const metadata = mutated.metadata;
  const labels = stringsOf(metadata.labels);
  const annotations = stringsOf(metadata.annotations);

  if (!labels[QUOTA_LABELS.parent]) labels[QUOTA_LABELS.parent] = ROOT_QUOTA;
  const parentName = labels[QUOTA_LABELS.parent] ?? ROOT_QUOTA;
  if (!labels[QUOTA_LABELS.treeId] && parentName !== ROOT_QUOTA) {
    const parent = state.elasticQuota(parentName);
    if (!parent) {
      return refused(
        FieldPath.of('metadata', 'labels').key(QUOTA_LABELS.parent),
        `fill quota ${quota.name} failed, parent not exist`,
      );
    }
    if (parent.treeId) labels[QUOTA_LABELS.treeId] = parent.treeId;
  }

  const declared = annotations[QUOTA_ANNOTATIONS.sharedWeight];
  const hasMax = Object.keys(quota.max).length > 0;
  if (!declared) {
    // Koordinator writes "null" when max is absent; a weight of nothing is better left unset.
    if (hasMax) annotations[QUOTA_ANNOTATIONS.sharedWeight] = resourceListJson(quota.max);
  } else {
    const read = readJsonText(declared);
    const parsed: JsonValue | undefined = read.ok ? read.value : undefined;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      // Koordinator follows its prefix with Go's JSON error; ours says what is expected instead.
      return refused(
        ANNOTATIONS.key(QUOTA_ANNOTATIONS.sharedWeight),
        'fillDefaultQuotaInfo unmarshal sharedWeight failed:must be a JSON object of resource quantities',
      );
    }
    const weight = stringsOf(parsed);
    // Aligned with max: every max key present (defaulting to max), no key max lacks.
    const aligned: Record<string, string> = {};
    for (const [key, value] of Object.entries(quota.max)) putOwn(aligned, key, own(weight, key) ?? value);
    const changed =
      Object.keys(aligned).length !== Object.keys(weight).length ||
      Object.entries(aligned).some(([key, value]) => own(weight, key) !== value);
    if (changed) annotations[QUOTA_ANNOTATIONS.sharedWeight] = resourceListJson(aligned);
  }

  metadata.labels = labels;
  metadata.annotations = annotations;
  return mutate(mutated);
};
