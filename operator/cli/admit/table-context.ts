/**
 * The webhook table the commands judge with, built from their table flags as the operator builds
 * it from its own: the same ConfigMaps, namespaces, gates and overrides. Shared by `admit` and
 * `audit`, so both judge exactly as the operator's table would.
 */
import { DEFAULT_TIER_LABEL_KEY, watchedConfigMaps } from '../../../webhook/names.js';
import type { TierMapping } from '../../../webhook/rules/kubenexus/tier-mapping.js';
import { webhookTable, type TableContext } from '../../../webhook/table.js';
import type { TableFlags } from './args.js';

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
    ...(flags.webhookNamespaceSelector ? { namespaceSelector: flags.webhookNamespaceSelector } : {}),
    ...(flags.webhookObjectSelector ? { objectSelector: flags.webhookObjectSelector } : {}),
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
