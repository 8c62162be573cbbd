/**
 * /mutate-pod: Koordinator's CREATE chain, in its order: ClusterColocationProfiles with the
 * batch/mid translation, the extended-resource-spec annotation, the multi-quota-tree node affinity
 * (gated), the device resource split. UPDATE changes nothing (as in Koordinator). Upstream:
 * mutating_handler.go; docs/rules/mutate-pod.md.
 */
import { allow, mutate } from '../../../admission/decisions.js';
import type { Rule } from '../../../state.js';
import { applyProfilesToPod, type PodProfileOptions } from '../colocation/apply-profiles-to-pod.js';
import { profileAudit } from '../colocation/colocation-profile.js';
import { applyExtendedResourceSpec } from '../colocation/extended-resource-spec.js';
import { applyDeviceResourceSpec } from '../device/device-resource-spec.js';
import { applyMultiQuotaTreeAffinity } from '../quota/multi-quota-tree-affinity.js';
import { skipAudit, type StepSkip } from '../../shared/step-skip.js';
import { CopyOnWrite } from '../../../util/copy-on-write.js';
import { KINDS } from '../../../kinds.js';

export type PodMutationOptions = PodProfileOptions & {
  /** Gate DisableExtendedResourceSpec. */
  skipExtendedResourceSpec: boolean;
  /** Gate DisableDeviceResourceSpec. */
  skipDeviceResourceSpec: boolean;
  /** Gate MultiQuotaTree. */
  multiQuotaTree: boolean;
};

/**
 * Each step that meets a quantity or an annotation it cannot read skips its own change and says
 * which field in a warning; the other steps still run. A mutating webhook never refuses a pod for
 * what it could not do: /validate-pod is where a pod is refused. Anything else a step throws is a
 * bug, left to the server to answer as one.
 */
export function podMutator(options: PodMutationOptions): Rule {
  return (request, state) => {
    if (
      request.operation !== 'CREATE' ||
      request.subResource ||
      request.resource.resource !== KINDS.pod.plural ||
      !request.object
    ) {
      return allow();
    }
    const namespace =
      (typeof request.object.metadata.namespace === 'string' && request.object.metadata.namespace) ||
      (request.namespace ?? '');
    // Most pods come out as they went in; the draft copies only what a step changes.
    const draft = new CopyOnWrite(request.object);
    const { applied, warnings, translationSkipped } = applyProfilesToPod(draft, namespace, state, options);
    const profileWarnings = warnings.filter((warning) => warning !== translationSkipped?.warning);
    const skips: StepSkip[] = translationSkipped ? [translationSkipped] : [];
    if (!options.skipExtendedResourceSpec) {
      const skipped = applyExtendedResourceSpec(draft);
      if (skipped) skips.push(skipped);
    }
    if (options.multiQuotaTree) applyMultiQuotaTreeAffinity(draft, namespace, state);
    if (!options.skipDeviceResourceSpec) {
      const skipped = applyDeviceResourceSpec(draft);
      if (skipped) skips.push(skipped);
    }
    const allWarnings = [...profileWarnings, ...skips.map((skip) => skip.warning)];
    const shownWarnings = allWarnings.length > 0 ? allWarnings : undefined;
    const decision = draft.changed ? mutate(draft.current, shownWarnings) : allow(shownWarnings);
    const profiles = profileAudit(applied, profileWarnings);
    const audit =
      skips.length > 0 ? { ...profiles, ...skipAudit(skips, profiles?.action ?? 'skipped') } : profiles;
    return audit ? { ...decision, audit } : decision;
  };
}
