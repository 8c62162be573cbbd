/**
 * Rule gates: switches inside a webhook's rules, most of them Koordinator's of the same name.
 * Each carries a doc comment: the chart's schema and README describe the gate with it
 * (`npm run chart:generate`). The webhooks' own gates are declared in their folders
 * (webhook/webhooks/); webhook/feature-gates.ts puts both together.
 */
export const RULE_GATE_DEFAULTS = {
  /** A child quota's max keys need only be a subset of its parent's (Koordinator's gate of the same name). */
  ElasticQuotaEnableUpdateResourceKey: false,
  /** Skip the extended-resource-spec annotation on pods. */
  DisableExtendedResourceSpec: false,
  /** Skip splitting koordinator.sh/gpu into gpu-core and gpu-memory-ratio. */
  DisableDeviceResourceSpec: false,
  /** Check pods' koordinator.sh GPU requests for consistency (Koordinator's gate, off by default). */
  ValidatePodDeviceResource: false,
  /** Skip the batch/mid resource translation after ClusterColocationProfiles are applied. */
  ColocationProfileSkipMutatingResources: false,
  /** Pin pods of a multi-quota tree to its ElasticQuotaProfile's nodes (Koordinator's MultiQuotaTree). */
  MultiQuotaTree: false,
  /** Require the labels listed in the pod-enhanced-validator-config ConfigMap on new and updated pods. */
  EnablePodEnhancedValidator: false,
  /** Let a pod's koordinator.sh/priority label change on UPDATE. */
  ColocationProfileSkipValidatingPriority: false,
  /** Refuse pods that would push their quota past its limit. */
  EnableQuotaAdmission: true,
  /** Also evaluate pods that move to another quota on UPDATE. */
  EnableQuotaAdmissionOnUpdate: false,
  /** Transform a pod before quota admission counts it (Koordinator v1.8.0; with ReplaceResourcesTransformer). */
  ElasticQuotaEvaluationTransformPod: false,
  /** The transform: the pod.koordinator.sh/replace-resources annotation renames or erases resources. */
  ReplaceResourcesTransformer: false,
} as const satisfies Record<string, boolean>;

export type RuleGate = keyof typeof RULE_GATE_DEFAULTS;
export type RuleGates = Readonly<Record<RuleGate, boolean>>;

/**
 * Whether quota admission, and the usage the store counts, read a pod as its replace-resources
 * annotation transforms it: Koordinator v1.8.0 transforms only with both gates on.
 */
export function replaceResourcesCounted(gates: RuleGates): boolean {
  return gates.ElasticQuotaEvaluationTransformPod && gates.ReplaceResourcesTransformer;
}
