/**
 * The webhook table this replica serves, publishes and audits, built from the options. The
 * GPU-class webhook's selectors follow the GPU tier mapping, so the table is rebuilt whenever the
 * mapping changes; until the store has read it, the default mapping applies.
 */
import { DEFAULT_TIER_MAPPING, type TierMapping } from '../../webhook/rules/kubenexus/tier-mapping.js';
import { enabledWebhooks, type TableContext, type WebhookEntry } from '../../webhook/table.js';
import type { OperatorOptions } from '../config/options.js';

type TableOptions = Pick<
  OperatorOptions,
  | 'namespace'
  | 'excludedNamespaces'
  | 'webhookNamespaceSelector'
  | 'webhookObjectSelector'
  | 'sloConfigNamespace'
  | 'featureGates'
  | 'webhookOverrides'
  | 'maxAmplificationRatio'
>;

/** What the table is built from: the options, the ConfigMaps /validate-configmap checks, and the mapping. */
function tableContext(
  options: TableOptions,
  configMaps: TableContext['configMaps'],
  mapping: TierMapping,
): TableContext {
  return {
    namespace: options.namespace,
    excludedNamespaces: options.excludedNamespaces,
    tierLabelKey: mapping.namespaceLabelKey,
    gpuResourceNames: mapping.gpuResources,
    configMaps,
    koordinatorNamespace: options.sloConfigNamespace,
    gates: options.featureGates,
    overrides: options.webhookOverrides,
    maxAmplificationRatio: options.maxAmplificationRatio,
    ...(options.webhookNamespaceSelector ? { namespaceSelector: options.webhookNamespaceSelector } : {}),
    ...(options.webhookObjectSelector ? { objectSelector: options.webhookObjectSelector } : {}),
  };
}

export class ServedWebhooks {
  private current: readonly WebhookEntry[];

  /** `fixed`: a table of a test's own, served whatever the mapping. */
  constructor(
    private readonly options: TableOptions,
    private readonly configMaps: TableContext['configMaps'],
    private readonly fixed?: readonly WebhookEntry[],
  ) {
    this.current = this.build(DEFAULT_TIER_MAPPING);
  }

  /** The table in force; a function, so what holds it always reads the latest. */
  readonly entries = (): readonly WebhookEntry[] => this.current;

  /** Rebuilds the table for a new tier mapping. */
  follow(mapping: TierMapping): void {
    this.current = this.build(mapping);
  }

  private build(mapping: TierMapping): readonly WebhookEntry[] {
    return this.fixed ?? enabledWebhooks(tableContext(this.options, this.configMaps, mapping));
  }
}
