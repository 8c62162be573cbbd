/**
 * Feature gates: one per webhook (a gated-off webhook is absent from the routes and from
 * both configurations), and some per rule. Parsed from `--feature-gates=Name=true,Other=false`.
 */
export const FEATURE_GATE_DEFAULTS = {
  PodMutatingWebhook: true,
  PodValidatingWebhook: true,
  NodeStatusMutatingWebhook: true,
  NodeValidatingWebhook: true,
  ElasticQuotaMutatingWebhook: true,
  ElasticQuotaValidatingWebhook: true,
  ReservationMutatingWebhook: true,
  ConfigMapValidatingWebhook: true,
  GpuClassMutatingWebhook: true,
  ModelBoosterMutatingWebhook: true,
  ModelBoosterValidatingWebhook: true,
  AutoscalingPolicyMutatingWebhook: true,
  AutoscalingPolicyValidatingWebhook: true,
  ModelServingValidatingWebhook: true,
  ModelRouteValidatingWebhook: true,
  ModelServerValidatingWebhook: true,
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

export type FeatureGate = keyof typeof FEATURE_GATE_DEFAULTS;
export type FeatureGates = Readonly<Record<FeatureGate, boolean>>;

function isFeatureGate(name: string): name is FeatureGate {
  return Object.hasOwn(FEATURE_GATE_DEFAULTS, name);
}

/** Parses `A=true,B=false`; throws with the offending entry and the known gates on bad input. */
export function parseFeatureGates(spec: string | undefined): FeatureGates {
  const gates: Record<FeatureGate, boolean> = { ...FEATURE_GATE_DEFAULTS };
  for (const raw of (spec ?? '').split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const match = /^([A-Za-z0-9]+)=(true|false)$/.exec(entry);
    if (!match?.[1] || !match[2]) {
      throw new Error(`--feature-gates: "${entry}" is not of the form Name=true or Name=false`);
    }
    const name = match[1];
    if (!isFeatureGate(name)) {
      throw new Error(
        `--feature-gates: unknown gate "${name}"; known gates: ${Object.keys(FEATURE_GATE_DEFAULTS).join(', ')}`,
      );
    }
    gates[name] = match[2] === 'true';
  }
  return gates;
}

/**
 * Whether quota admission, and the usage the store counts, read a pod as its replace-resources
 * annotation transforms it: Koordinator v1.8.0 transforms only with both gates on.
 */
export function replaceResourcesCounted(gates: FeatureGates): boolean {
  return gates.ElasticQuotaEvaluationTransformPod && gates.ReplaceResourcesTransformer;
}
