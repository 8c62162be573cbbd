/**
 * /validate-pod-resize: ours, not Koordinator's: quota admission for in-place resizes (Kubernetes
 * 1.33 on; an API server without the subresource never sends one). Off with /validate-pod's gate.
 */
import { defineWebhook, matching } from '../define.js';
import { KINDS } from '../../kinds.js';
import { podResizeValidator, RESIZE_SUBRESOURCE } from '../../rules/koordinator/quota/pod-resize-quota.js';
import { podResizeReach } from '../../rules/koordinator/pod/validate-pod-resize-reach.js';
import { podValidation } from '../koordinator-pod-options.js';

export const webhook = defineWebhook({
  name: 'validate-pod-resize',
  path: '/validate-pod-resize',
  type: 'validating',
  resourceRules: [matching(KINDS.pod, ['UPDATE'], RESIZE_SUBRESOURCE)],
  failurePolicy: 'Fail',
  timeoutSeconds: 10,
  featureGate: 'PodValidatingWebhook',
  docs: {
    page: 'validate-pod-resize.md',
    entryPoint: 'rules/koordinator/quota/pod-resize-quota.ts',
    note: '(ours: quota admission for in-place resizes)',
    checks:
      '`koordinator/quota/pod-quota.ts`, `koordinator/quota/pod-requests.ts`, ' +
      '`koordinator/quota/replace-resources.ts`, `koordinator/pod/validate-pod-resize-reach.ts`',
  },
  build: (context) => {
    const options = podValidation(context);
    return { handler: podResizeValidator(options), reach: podResizeReach(options) };
  },
});
