/**
 * The feature gates both sides run with, in two profiles: `checks`, every Koordinator webhook on
 * and every gate that adds a check (quota admission, device requests, required labels,
 * multi-quota-tree affinity) on, so every rule meets the reviews; and `koordinator-defaults`, the
 * webhooks on and every rule gate at Koordinator's default (quota admission off, which is on by
 * default here). The names differ: ours are the table's, theirs Koordinator v1.7.0's.
 */
export interface GateProfile {
  name: string;
  ours: string;
  oracle: string;
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
    name: 'koordinator-defaults',
    ours: 'EnableQuotaAdmission=false',
    oracle: KOORDINATOR_WEBHOOKS.join(','),
  },
];
