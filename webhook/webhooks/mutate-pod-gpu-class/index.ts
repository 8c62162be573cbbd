/** /mutate-pod-gpu-class: KubeNexus, a tenant's tier sends its GPU pods to a GPU class. */
import { defineWebhook, matching } from '../define.js';
import { KINDS } from '../../kinds.js';
import { containersRequestAny } from '../../narrowing/cel-text.js';
import { assignGpuClass } from '../../rules/kubenexus/assign-gpu-class.js';

export const webhook = defineWebhook({
  name: 'mutate-pod-gpu-class',
  path: '/mutate-pod-gpu-class',
  type: 'mutating',
  resourceRules: [matching(KINDS.pod, ['CREATE'])],
  failurePolicy: 'Ignore',
  timeoutSeconds: 5,
  reinvocationPolicy: 'Never',
  featureGate: 'GpuClassMutatingWebhook',
  docs: {
    page: 'mutate-pod-gpu-class.md',
    entryPoint: 'rules/kubenexus/assign-gpu-class.ts',
    note: '(tiered namespaces, GPU pods)',
    checks: '`kubenexus/tier-mapping.ts`',
  },
  build: (context) => ({
    namespaceSelector: { matchExpressions: [{ key: context.tierLabelKey, operator: 'Exists' }] },
    matchConditions: [
      {
        name: 'requests-gpu',
        expression: containersRequestAny(context.gpuResourceNames, { guarded: false, limits: true }),
      },
    ],
    handler: assignGpuClass,
  }),
});
