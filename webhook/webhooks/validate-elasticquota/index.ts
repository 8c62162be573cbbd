/** /validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota: Koordinator's ElasticQuota tree validation. */
import { defineWebhook, matching } from '../define.js';
import { KINDS } from '../../kinds.js';
import { elasticQuotaValidator } from '../../rules/koordinator/quota/validate-quota.js';

export const webhook = defineWebhook({
  name: 'validate-elasticquota',
  path: '/validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota',
  type: 'validating',
  resourceRules: [matching(KINDS.elasticQuota, ['CREATE', 'UPDATE', 'DELETE'])],
  failurePolicy: 'Fail',
  timeoutSeconds: 10,
  featureGate: 'ElasticQuotaValidatingWebhook',
  docs: {
    page: 'validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota.md',
    entryPoint: 'rules/koordinator/quota/validate-quota.ts',
    checks: '`koordinator/quota/quota-view.ts`, `koordinator/quota/keys.ts`',
  },
  build: (context) => ({
    handler: elasticQuotaValidator({ maxKeysSubset: context.gates.ElasticQuotaEnableUpdateResourceKey }),
  }),
});
