/** /validate-pod: Koordinator's pod validation (colocation, quota admission, devices, enhanced labels). */
import { defineWebhook, matching } from '../define.js';
import { KINDS } from '../../kinds.js';
import { COLOCATION_STEP, podValidator } from '../../rules/koordinator/pod/validate-pod.js';
import { podValidatorReach } from '../../rules/koordinator/pod/validate-pod-reach.js';
import { podValidation } from '../koordinator-pod-options.js';

export const webhook = defineWebhook({
  name: 'validate-pod',
  path: '/validate-pod',
  type: 'validating',
  resourceRules: [matching(KINDS.pod, ['CREATE', 'UPDATE'])],
  failurePolicy: 'Fail',
  timeoutSeconds: 10,
  featureGate: 'PodValidatingWebhook',
  steps: [COLOCATION_STEP],
  docs: {
    page: 'validate-pod.md',
    entryPoint: 'rules/koordinator/pod/validate-pod.ts',
    checks:
      '`koordinator/colocation/validate-colocation.ts`, `koordinator/colocation/priority-qos.ts`, ' +
      '`koordinator/quota/pod-quota.ts`, `koordinator/quota/resolve-quota.ts`, `koordinator/quota/pod-requests.ts`, ' +
      '`koordinator/device/validate-device.ts`, `koordinator/pod/enhanced-validation.ts`',
  },
  build: (context) => {
    const options = podValidation(context);
    return { handler: podValidator(options), reach: podValidatorReach(options) };
  },
});
