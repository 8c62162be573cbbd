/** /mutate-scheduling-sigs-k8s-io-v1alpha1-elasticquota: Koordinator's ElasticQuota defaulting. */
import { defineWebhook, matching } from '../define.js';
import { KINDS } from '../../kinds.js';
import { defaultElasticQuota } from '../../rules/koordinator/quota/default-quota.js';

export const webhook = defineWebhook({
  name: 'mutate-elasticquota',
  path: '/mutate-scheduling-sigs-k8s-io-v1alpha1-elasticquota',
  type: 'mutating',
  resourceRules: [matching(KINDS.elasticQuota, ['CREATE'])],
  failurePolicy: 'Fail',
  timeoutSeconds: 10,
  reinvocationPolicy: 'Never',
  featureGate: 'ElasticQuotaMutatingWebhook',
  docs: {
    page: 'mutate-scheduling-sigs-k8s-io-v1alpha1-elasticquota.md',
    entryPoint: 'rules/koordinator/quota/default-quota.ts',
    checks: '`koordinator/quota/quota-view.ts`, `koordinator/quota/keys.ts`',
  },
  build: () => ({ handler: defaultElasticQuota }),
});
