/**
 * Which pods /mutate-pod (mutate-pod.ts) could change or warn about, given the state: the rest are
 * never sent to it (webhook/narrowing/). It changes nothing on UPDATE; on CREATE, step by step:
 *
 * - ClusterColocationProfiles: a pod whose labels a profile's selector matches, in a namespace its
 *   namespaceSelector matches (the API server reads the namespace's labels); a profile whose
 *   namespaceSelector does not parse warns on every pod, one whose selector does not parse on every
 *   pod of the namespaces it selects. The batch/mid translation only follows a matching profile;
 * - the extended-resource-spec annotation (unless DisableExtendedResourceSpec): a pod that carries
 *   it, or asks for batch resources;
 * - the multi-quota-tree affinity (gate MultiQuotaTree): a pod with the quota-name label, and the
 *   namespaces whose quota (named after them, or binding them) is in a tree an ElasticQuotaProfile
 *   with a node selector describes;
 * - the GPU split (unless DisableDeviceResourceSpec): a container asking for a koordinator.sh GPU.
 */
import type { ReachState } from '../../../state.js';
import type { Reach, ReachTerm } from '../../../narrowing/reach.js';
import { containersRequestAny, FALSE, hasAnnotation, hasLabel, or } from '../../../narrowing/cel-text.js';
import { parseLabelSelector } from '../../../util/label-selector.js';
import { BATCH_RESOURCES, EXTENDED_RESOURCE_SPEC_ANNOTATION } from '../colocation/extended-resource-spec.js';
import { DEVICE_RESOURCES } from '../device/device-resource-spec.js';
import { QUOTA_LABELS } from '../quota/keys.js';
import type { PodMutationOptions } from './mutate-pod.js';

const CREATE = ['CREATE'] as const;

export function podMutatorReach(options: PodMutationOptions): (state: ReachState) => Reach {
  const resources = resourceTerms(options);
  const fixed: ReachTerm[] = [
    ...(resources === FALSE ? [] : [{ operations: CREATE, cel: resources }]),
    ...(options.multiQuotaTree ? [{ operations: CREATE, cel: hasLabel(QUOTA_LABELS.name) }] : []),
  ];
  return (state) => {
    const reach: Reach = { anywhere: [...fixed], within: [] };
    if (options.multiQuotaTree) {
      reach.within.push({ namespaces: { names: treeNamespaces(state) }, terms: [{ operations: CREATE }] });
    }
    for (const profile of state.colocationProfiles()) {
      const namespaceSelector = parseLabelSelector(profile.spec.namespaceSelector, 'spec.namespaceSelector');
      const selector = parseLabelSelector(profile.spec.selector, 'spec.selector');
      // Its warning, on every pod the profile is evaluated for.
      if (!namespaceSelector.ok) {
        reach.anywhere.push({ operations: CREATE });
        continue;
      }
      const term: ReachTerm = selector.ok
        ? { operations: CREATE, labels: selector.value }
        : { operations: CREATE };
      if (namespaceSelector.value.requirements.length === 0) reach.anywhere.push(term);
      else reach.within.push({ namespaces: { selector: namespaceSelector.value }, terms: [term] });
    }
    return reach;
  };
}

/** Namespaces whose pods (without a quota-name label) get a quota tree's node affinity. */
function treeNamespaces(state: ReachState): string[] {
  const candidates = new Set<string>();
  for (const quota of state.elasticQuotas()) {
    // applyMultiQuotaTreeAffinity looks a namespace's quota up by name first, in any namespace.
    candidates.add(quota.name);
    for (const namespace of quota.namespaces) candidates.add(namespace);
  }
  return [...candidates].filter((namespace) => {
    const quota = state.elasticQuota(namespace) ?? state.quotaBoundTo(namespace);
    return quota?.treeId ? state.elasticQuotaProfiles(quota.treeId)[0]?.nodeSelector !== undefined : false;
  });
}

/**
 * The extended-resource-spec annotation and batch resources, and the GPU split's koordinator.sh
 * GPUs: when both apply, one walk over every container looks for either (an init container
 * asking for such a GPU is then sent too, though only containers' are split), half the
 * condition to plan.
 */
function resourceTerms(options: PodMutationOptions): string {
  const devices = !options.skipDeviceResourceSpec;
  if (options.skipExtendedResourceSpec)
    return devices ? containersRequestAny(DEVICE_RESOURCES, { initContainers: false }) : FALSE;
  return or([
    hasAnnotation(EXTENDED_RESOURCE_SPEC_ANNOTATION),
    containersRequestAny(devices ? [...BATCH_RESOURCES, ...DEVICE_RESOURCES] : BATCH_RESOURCES),
  ]);
}
