/**
 * Koordinator's cluster_colocation_profile.go for a new pod: every matching ClusterColocationProfile,
 * in name order, then the batch/mid resource translation (docs/rules/mutate-pod.md;
 * cluster_colocation_profile.go).
 */
import type { KubeObject } from '../../../admission/types.js';
import { NAMESPACE_NAME_LABEL } from '../../../names.js';
import type { StateSnapshot } from '../../../state.js';
import type { CopyOnWrite } from '../../../util/copy-on-write.js';
import { labelsOf } from '../../../util/json.js';
import type { StepSkip } from '../../shared/step-skip.js';
import { POD_PATCH_SCHEMA } from '../../../util/strategic-merge-patch.js';
import { translateBatchResources } from './batch-resources.js';
import {
  applyProfile,
  probabilityPercent,
  profileApplies,
  profileMatches,
  ProfileProblem,
  SKIP_UPDATE_RESOURCES_ANNOTATION,
  type ProfileTarget,
} from './colocation-profile.js';

export interface PodProfileOptions {
  /** A uniform integer in 0..99 (Go's rand.Intn(100)); injectable so probability is testable. */
  roll: () => number;
  /** Gate ColocationProfileSkipMutatingResources. */
  skipMutatingResources: boolean;
}

const POD_TARGET: ProfileTarget = { podSpecPath: ['spec'], patchSchema: POD_PATCH_SCHEMA };

export interface PodProfileResult {
  /** The profiles applied, in order. */
  applied: string[];
  /** One per profile that could not be applied, naming it and the field. */
  warnings: string[];
  /** A warning when the batch/mid translation was skipped over a quantity it could not read. */
  translationSkipped?: StepSkip;
}

/**
 * Applies the profiles to the pod in `draft`; says which applied, and warns for each that could
 * not be. A quantity the batch/mid translation cannot read skips the translation (the pod keeps
 * its cpu and memory) with a warning naming the field.
 */
export function applyProfilesToPod(
  draft: CopyOnWrite<KubeObject>,
  namespace: string,
  state: StateSnapshot,
  options: PodProfileOptions,
): PodProfileResult {
  const pod = draft.current;
  const applied: string[] = [];
  // Koordinator counts a failed namespace lookup as a match. The API server has already checked
  // that the namespace exists, so a miss here only means the watch has not seen it yet; every
  // namespace carries its name as a label, so matching on that alone is the closest true answer.
  const namespaceLabels = state.namespace(namespace)?.labels ?? { [NAMESPACE_NAME_LABEL]: namespace };
  const labels = labelsOf(pod);
  const profiles = state.colocationProfileCandidates(labels, namespaceLabels);
  if (profiles.length === 0) return { applied, warnings: [] };
  const warnings: string[] = [];
  const matched = profiles.filter((profile) => {
    try {
      return profileMatches(profile, labels, namespaceLabels);
    } catch (error) {
      // Koordinator counts an invalid selector as a match; that would apply the profile to every pod.
      if (error instanceof ProfileProblem) warnings.push(error.message);
      else throw error;
      return false;
    }
  });
  if (matched.length === 0) return { applied, warnings };

  let result = pod;
  let skipTranslation = options.skipMutatingResources;
  for (const profile of matched) {
    // Read before the dice, as in Koordinator: a profile that loses the roll still keeps resources.
    if (Object.hasOwn(profile.annotations, SKIP_UPDATE_RESOURCES_ANNOTATION)) skipTranslation = true;
    try {
      if (!profileApplies(probabilityPercent(profile), options.roll)) continue;
      result = applyProfile(result, profile, POD_TARGET, state) as KubeObject;
      applied.push(profile.name);
    } catch (error) {
      if (!(error instanceof ProfileProblem)) throw error;
      warnings.push(error.message);
    }
  }
  // applyProfile shares what it leaves alone with `pod`; the draft copies whatever a later step
  // writes, so `pod` stays untouched.
  draft.replace(result);
  // As in Koordinator, translation runs once any profile matched, even when none won its roll: it
  // follows the pod's own resulting class, so a pod that kept its class is translated only if that
  // class was already batch or mid, which is what that class means.
  if (!skipTranslation) {
    const translated = translateBatchResources(draft);
    if (!translated.ok) {
      // The translation reads every quantity before it changes anything, so the pod is intact.
      const warning = `${translated.error.toString()}; the batch/mid resource translation was skipped`;
      return {
        applied,
        warnings: [...warnings, warning],
        translationSkipped: { warning, reason: 'invalid-quantity' },
      };
    }
  }
  return { applied, warnings };
}
