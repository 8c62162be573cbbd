/**
 * The feature gates both sides run with, in three profiles: `checks`, every Koordinator webhook on
 * and every gate that adds a check (quota admission, device requests, required labels,
 * multi-quota-tree affinity) on, so every rule meets the reviews; and `koordinator-defaults`, the
 * webhooks on and every rule gate at Koordinator's default (quota admission off, which is on by
 * default here); and, against v1.8.0 only, `transform`: its two gates that count a pod as its
 * replace-resources annotation renames it. The names differ: ours are the table's, theirs Koordinator's.
 */
export interface GateProfile {
  name: string;
  ours: string;
  oracle: string;
  /** The Koordinator releases that know its gates (oracle-build.ts); every one when absent. */
  releases?: readonly string[];
}

const KOORDINATOR_WEBHOOKS = [
  'NodeMutatingWebhook=true',
  'NodeValidatingWebhook=true',
  'ConfigMapValidatingWebhook=true',
  'ReservationMutatingWebhook=true',
];

export const GATE_PROFILES: readonly GateProfile[] = [
  {
    name: 'checks',
    ours: 'ValidatePodDeviceResource=true,EnablePodEnhancedValidator=true,MultiQuotaTree=true',
    oracle: [
      ...KOORDINATOR_WEBHOOKS,
      'EnableQuotaAdmission=true',
      'ValidatePodDeviceResource=true',
      'EnablePodEnhancedValidator=true',
      'MultiQuotaTree=true',
    ].join(','),
  },
  {
    // Koordinator v1.8.0's transform before quota evaluation (the replace-resources annotation).
    name: 'transform',
    releases: ['v1.8.0'],
    ours: 'ElasticQuotaEvaluationTransformPod=true,ReplaceResourcesTransformer=true',
    oracle: [
      ...KOORDINATOR_WEBHOOKS,
      'EnableQuotaAdmission=true',
      'ElasticQuotaEvaluationTransformPod=true',
      'ReplaceResourcesTransformer=true',
    ].join(','),
  },
  {
    name: 'koordinator-defaults',
    ours: 'EnableQuotaAdmission=false',
    oracle: KOORDINATOR_WEBHOOKS.join(','),
  },
];
