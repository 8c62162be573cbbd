/**
 * /mutate-pod: Koordinator's CREATE chain, in its order: ClusterColocationProfiles with the
 * batch/mid translation (§1.2, §1.3), the extended-resource-spec annotation (§1.4), the
 * multi-quota-tree node affinity (§1.6, gated), the device resource split (§1.5). UPDATE changes
 * nothing (as in Koordinator).
 */
import { allow, deny, mutate } from '../../admission/decisions.js';
import type { Rule } from '../../state.js';
import { applyProfilesToPod, type PodProfileOptions } from '../colocation/apply-profiles-to-pod.js';
import { profileAudit } from '../colocation/colocation-profile.js';
import { applyExtendedResourceSpec } from '../colocation/extended-resource-spec.js';
import { applyDeviceResourceSpec } from '../device/device-resource-spec.js';
import { applyMultiQuotaTreeAffinity } from '../quota/multi-quota-tree-affinity.js';

export type PodMutationOptions = PodProfileOptions & {
  /** Gate DisableExtendedResourceSpec. */
  skipExtendedResourceSpec: boolean;
  /** Gate DisableDeviceResourceSpec. */
  skipDeviceResourceSpec: boolean;
  /** Gate MultiQuotaTree. */
  multiQuotaTree: boolean;
};

export function podMutator(options: PodMutationOptions): Rule {
  return (request, state) => {
    if (
      request.operation !== 'CREATE' ||
      request.subResource ||
      request.resource.resource !== 'pods' ||
      !request.object
    ) {
      return allow();
    }
    const namespace =
      (typeof request.object.metadata.namespace === 'string' && request.object.metadata.namespace) ||
      (request.namespace ?? '');
    try {
      const { pod, applied, warnings } = applyProfilesToPod(request.object, namespace, state, options);
      const mutated = pod === request.object ? structuredClone(pod) : pod;
      if (!options.skipExtendedResourceSpec) applyExtendedResourceSpec(mutated);
      if (options.multiQuotaTree) applyMultiQuotaTreeAffinity(mutated, namespace, state);
      if (!options.skipDeviceResourceSpec) applyDeviceResourceSpec(mutated);
      const decision = mutate(mutated, warnings.length > 0 ? warnings : undefined);
      const audit = profileAudit(applied, warnings);
      return audit ? { ...decision, audit } : decision;
    } catch (error) {
      return deny((error as Error).message, 400, 'BadRequest');
    }
  };
}
