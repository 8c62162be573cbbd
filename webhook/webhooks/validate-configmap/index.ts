/** /validate-configmap: the ConfigMaps the operator reads, each handed to its family's check. */
import { defineWebhook, matching } from '../define.js';
import { KINDS } from '../../kinds.js';
import { configMapValidator } from '../../rules/admission-operator/validate-configmap.js';
import type { WebhookContext } from '../define.js';

/**
 * CEL: a CREATE or UPDATE of one of `configMaps`. DELETE stays in the resource rules (as Koordinator
 * registers it) but is always allowed, so it never needs a call: a stopped operator must not
 * block deleting its own ConfigMaps (an uninstall does that).
 */
function isWriteOfConfigMaps(configMaps: WebhookContext['configMaps']): string {
  const pairs = configMaps.map(
    // request.name and request.namespace always exist; object.metadata.name does not under generateName,
    // and an expression that errors would fail the request under failurePolicy Fail.
    ({ namespace, name }) => `(request.namespace == '${namespace}' && request.name == '${name}')`,
  );
  return `request.operation != 'DELETE' && (${pairs.length > 0 ? pairs.join(' || ') : 'false'})`;
}

export const webhook = defineWebhook({
  name: 'validate-configmap',
  path: '/validate-configmap',
  type: 'validating',
  resourceRules: [matching(KINDS.configMap, ['CREATE', 'UPDATE', 'DELETE'])],
  failurePolicy: 'Fail',
  timeoutSeconds: 10,
  watchesOwnNamespace: true,
  featureGate: 'ConfigMapValidatingWebhook',
  docs: {
    page: 'validate-configmap.md',
    entryPoint: 'rules/admission-operator/validate-configmap.ts',
    note: '(matchConditions: only the ConfigMaps below)',
    checks:
      '`koordinator/slo-config/*` (slo-controller-config), `kubenexus/validate-tier-mapping.ts`, ' +
      '`kubenexus/tier-mapping.ts` (gpu-tier-mapping), `koordinator/pod/enhanced-validator-config.ts` ' +
      "(pod-enhanced-validator-config), `admission-operator/validate-operator-config.ts` (the operator's own ConfigMap)",
  },
  build: (context) => ({
    matchConditions: [{ name: 'managed-configmaps', expression: isWriteOfConfigMaps(context.configMaps) }],
    handler: configMapValidator({
      operatorNamespace: context.namespace,
      koordinatorNamespace: context.koordinatorNamespace,
      maxAmplificationRatio: context.maxAmplificationRatio,
      webhookNames: context.enforceableNames,
    }),
  }),
});
