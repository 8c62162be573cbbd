/** The table context of the operator's defaults (every gate at its default) in namespace admission-system. */
import { parseFeatureGates } from '../../webhook/feature-gates.js';
import { enabledWebhooks, type TableContext, type WebhookEntry } from '../../webhook/table.js';

export function defaultTableContext(): TableContext {
  return {
    namespace: 'admission-system',
    excludedNamespaces: [],
    tierLabelKey: 'tenant.kubenexus.io/tier',
    gpuResourceNames: ['nvidia.com/gpu'],
    configMaps: [],
    koordinatorNamespace: 'koordinator-system',
    gates: parseFeatureGates(''),
  };
}

/** The webhooks the operator serves with its defaults. */
export function defaultWebhooks(): WebhookEntry[] {
  return enabledWebhooks(defaultTableContext());
}
