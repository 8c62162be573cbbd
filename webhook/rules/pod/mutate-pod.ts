/**
 * /mutate-pod: Koordinator's CREATE chain, in its order. UPDATE changes nothing (as in
 * Koordinator). The ClusterColocationProfile step and its batch/mid translation (§1.2, §1.3) join
 * the chain ahead of these with their rules.
 */
import { allow, deny, mutate } from '../../admission/decisions.js';
import type { Rule } from '../../state.js';
import { applyExtendedResourceSpec } from '../colocation/extended-resource-spec.js';
import { applyDeviceResourceSpec } from '../device/device-resource-spec.js';

export interface PodMutationOptions {
  /** Gate DisableExtendedResourceSpec. */
  skipExtendedResourceSpec: boolean;
  /** Gate DisableDeviceResourceSpec. */
  skipDeviceResourceSpec: boolean;
}

export function podMutator(options: PodMutationOptions): Rule {
  return (request) => {
    if (
      request.operation !== 'CREATE' ||
      request.subResource ||
      request.resource.resource !== 'pods' ||
      !request.object
    ) {
      return allow();
    }
    const pod = structuredClone(request.object);
    try {
      if (!options.skipExtendedResourceSpec) applyExtendedResourceSpec(pod);
      if (!options.skipDeviceResourceSpec) applyDeviceResourceSpec(pod);
    } catch (error) {
      return deny((error as Error).message, 400, 'BadRequest');
    }
    return mutate(pod);
  };
}
