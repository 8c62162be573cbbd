/**
 * What the chain judges with: the enabled webhooks of the table for the tier mapping in force
 * (rebuilt when the mapping changes, as the operator does), the state, and the namespace labels
 * the API server reads for selectors.
 */
import type { Logger } from 'pino';
import type { Enforcement } from '../enforcement/enforcement.js';
import type { DecisionMetrics } from '../metrics/decision-metrics.js';
import { NAMESPACE_NAME_LABEL } from '../names.js';
import type { TierMapping } from '../rules/kubenexus/tier-mapping.js';
import type { StateSnapshot } from '../state.js';
import { enabledWebhooks, type TableContext, type WebhookEntry } from '../table.js';

export interface ChainContext {
  webhooks: readonly WebhookEntry[];
  state: StateSnapshot;
  logger: Logger;
  metrics: DecisionMetrics;
  /** The labels the API server reads for a namespace's selectors. */
  namespaceLabels: (name: string) => Readonly<Record<string, string>>;
  /** Each webhook's enforcement; deny everywhere when omitted (the audit's "if it were enforced"). */
  enforcement?: Enforcement;
}

/** A function giving the chain's context for the state as it is at the time of the call. */
export function chainContextFactory(
  tableContextFor: (mapping: TierMapping) => TableContext,
  state: StateSnapshot,
  logger: Logger,
  metrics: DecisionMetrics,
  enforcement?: Enforcement,
): () => ChainContext {
  let tableFor: TierMapping | undefined;
  let webhooks: readonly WebhookEntry[] = [];
  return () => {
    const mapping = state.gpuTierMapping();
    if (mapping !== tableFor) {
      tableFor = mapping;
      webhooks = enabledWebhooks(tableContextFor(mapping));
    }
    return {
      webhooks,
      state,
      logger,
      metrics,
      namespaceLabels: (name) => state.namespace(name)?.labels ?? { [NAMESPACE_NAME_LABEL]: name },
      ...(enforcement ? { enforcement } : {}),
    };
  };
}
