/**
 * The admission chain's context as the operator would have it: the webhook table built from the
 * table flags and the tier mapping in force (rebuilt when the mapping changes, as the operator
 * does), the state store, and the namespace labels the API server reads for selectors. Shared by
 * `admit` and `audit`, so both judge exactly as the operator's table would.
 */
import type { Logger } from 'pino';
import type { Enforcement } from '../../../webhook/enforcement/enforcement.js';
import type { OperatorMetrics } from '../../../webhook/metrics/operator-metrics.js';
import { DEFAULT_TIER_LABEL_KEY, NAMESPACE_NAME_LABEL, watchedConfigMaps } from '../../../webhook/names.js';
import type { TierMapping } from '../../../webhook/rules/kubenexus/tier-mapping.js';
import {
  enabledWebhooks,
  webhookTable,
  type TableContext,
  type WebhookEntry,
} from '../../../webhook/table.js';
import type { StateStore } from '../../store/state-store.js';
import type { TableFlags } from './args.js';
import type { ChainContext } from './evaluate.js';

/** The operator's ConfigMaps under these flags: what its store watches and /validate-configmap checks. */
export const configMapsOf = (flags: TableFlags): { namespace: string; name: string }[] =>
  watchedConfigMaps(flags.operatorNamespace, flags.sloConfigNamespace, flags.featureGates);

export function tableContextOf(flags: TableFlags, mapping: TierMapping | undefined): TableContext {
  return {
    namespace: flags.operatorNamespace,
    excludedNamespaces: flags.excludedNamespaces,
    tierLabelKey: mapping?.namespaceLabelKey ?? DEFAULT_TIER_LABEL_KEY,
    gpuResourceNames: mapping?.gpuResources ?? [],
    configMaps: configMapsOf(flags),
    koordinatorNamespace: flags.sloConfigNamespace,
    gates: flags.featureGates,
    overrides: flags.webhookOverrides,
    maxAmplificationRatio: flags.maxAmplificationRatio,
  };
}

/** The API groups any webhook of the table (gated or not) is called for. */
export function watchedGroupsOf(flags: TableFlags): Set<string> {
  return new Set(
    webhookTable(tableContextOf(flags, undefined)).flatMap((entry) =>
      entry.resourceRules.flatMap((rule) => rule.apiGroups),
    ),
  );
}

/** A function giving the chain's context for the state as it is at the time of the call. */
export function chainContextFactory(
  flags: TableFlags,
  store: StateStore,
  logger: Logger,
  metrics: OperatorMetrics,
  enforcement?: Enforcement,
): () => ChainContext {
  let tableFor: TierMapping | undefined;
  let webhooks: readonly WebhookEntry[] = [];
  return () => {
    const mapping = store.gpuTierMapping();
    if (mapping !== tableFor) {
      tableFor = mapping;
      webhooks = enabledWebhooks(tableContextOf(flags, mapping));
    }
    return {
      webhooks,
      state: store,
      logger,
      metrics,
      namespaceLabels: (name) => store.namespace(name)?.labels ?? { [NAMESPACE_NAME_LABEL]: name },
      ...(enforcement ? { enforcement } : {}),
    };
  };
}
