/** Names shared by the rules, the table and the operator. */
import type { RuleGates } from './rule-gates.js';

/** The tier-mapping ConfigMap (in the operator namespace) that the GPU-class rules read. */
export const GPU_TIER_MAPPING_NAME = 'gpu-tier-mapping';
/** The operator's own ConfigMap (in its namespace): run-time settings such as the enforcement per webhook. */
export const OPERATOR_CONFIG_NAME = 'admission-operator';
/** The key of OPERATOR_CONFIG_NAME holding the enforcement text (see webhook/enforcement/enforcement.ts). */
export const ENFORCEMENT_KEY = 'enforcement';
/** Koordinator's SLO ConfigMap. */
export const SLO_CONFIG_NAME = 'slo-controller-config';
/** Koordinator's ConfigMap of pod label requirements (gate EnablePodEnhancedValidator), beside the SLO config. */
export const POD_ENHANCED_VALIDATOR_CONFIG_NAME = 'pod-enhanced-validator-config';
/** The label the API server puts on every namespace, holding its name. */
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';
/** KubeNexus's namespace label naming a tenant's tier. */
export const DEFAULT_TIER_LABEL_KEY = 'tenant.kubenexus.io/tier';
/** GPU resources that send a pod to the GPU-class webhook, as KubeNexus counts them. */
export const DEFAULT_GPU_RESOURCE_NAMES: readonly string[] = [
  'nvidia.com/gpu',
  'amd.com/gpu',
  'intel.com/gpu',
];

/**
 * The ConfigMaps the operator watches and /validate-configmap checks: the tier mapping and the
 * operator's own ConfigMap in its namespace, Koordinator's SLO config (and, with its gate, the pod
 * enhanced-validator config) in Koordinator's.
 */
export function watchedConfigMaps(
  operatorNamespace: string,
  koordinatorNamespace: string,
  gates: Pick<RuleGates, 'EnablePodEnhancedValidator'>,
): { namespace: string; name: string }[] {
  return [
    { namespace: operatorNamespace, name: GPU_TIER_MAPPING_NAME },
    { namespace: operatorNamespace, name: OPERATOR_CONFIG_NAME },
    { namespace: koordinatorNamespace, name: SLO_CONFIG_NAME },
    ...(gates.EnablePodEnhancedValidator
      ? [{ namespace: koordinatorNamespace, name: POD_ENHANCED_VALIDATOR_CONFIG_NAME }]
      : []),
  ];
}
