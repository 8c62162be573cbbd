/**
 * The feature gates both sides run with: every Koordinator webhook on, and the rule gates that add
 * a check (quota admission, device requests, required labels, multi-quota-tree affinity) on, so
 * every rule meets the reviews. The names differ: ours are the table's, theirs Koordinator v1.7.0's.
 */
export const OUR_GATES = 'ValidatePodDeviceResource=true,EnablePodEnhancedValidator=true,MultiQuotaTree=true';

export const ORACLE_GATES = [
  'NodeMutatingWebhook=true',
  'NodeValidatingWebhook=true',
  'ConfigMapValidatingWebhook=true',
  'ReservationMutatingWebhook=true',
  'EnableQuotaAdmission=true',
  'ValidatePodDeviceResource=true',
  'EnablePodEnhancedValidator=true',
  'MultiQuotaTree=true',
].join(',');
