/**
 * The node side of the one-strategy-per-node rule (Koordinator's `pkg/webhook/node/plugins/sloconfig`):
 * a node whose labels would match two node strategies of one slo-controller-config key is refused.
 * Every key is parsed, changed or not; a key whose value does not decode, or whose selectors do not
 * convert, is skipped, as Koordinator only consults checkers whose init succeeded. Beyond
 * Koordinator's five keys, the three whose nodeConfigs it leaves unchecked are consulted too.
 */
import { type NodeStrategy, strategiesMatching, strategyList } from './node-selectors.js';
import { sloConfigCheckers } from './slo-config-keys.js';

type KeyStrategies = readonly { key: string; strategies: NodeStrategy[] }[];

/**
 * Node relabels are frequent next to config edits, so each config version is parsed once: the
 * store hands out a new data object whenever the ConfigMap changes. Each key's strategies are
 * indexed by label on the first relabel after that (O(s log s), s the selectors' size), so a
 * relabel then costs O(l + c log c) per key (l labels, c candidate strategies) instead of O(n).
 */
const parsedConfigs = new WeakMap<Readonly<Record<string, string>>, KeyStrategies>();

function strategiesByKey(configData: Readonly<Record<string, string>>): KeyStrategies {
  let parsed = parsedConfigs.get(configData);
  if (!parsed) {
    parsed = sloConfigCheckers().flatMap((checker) => {
      const text = configData[checker.key] ?? '';
      const strategies = text === '' ? undefined : checker.strategiesOf(text);
      return strategies && strategies.length >= 2 ? [{ key: checker.key, strategies }] : [];
    });
    parsedConfigs.set(configData, parsed);
  }
  return parsed;
}

/** Why a node with `labels` conflicts with the config's node strategies, or undefined when it does not. */
export function sloConfigStrategyConflicts(
  configData: Readonly<Record<string, string>> | undefined,
  nodeName: string,
  labels: Readonly<Record<string, string>>,
): string | undefined {
  if (!configData) return undefined;
  const conflicts: string[] = [];
  for (const { key, strategies } of strategiesByKey(configData)) {
    const matching = strategiesMatching(strategies, labels);
    if (matching.length < 2) continue;
    conflicts.push(
      `node ${JSON.stringify(nodeName)} matches ${matching.length} node strategies of slo-controller-config data[${key}]: ${strategyList(matching)}; a node may match at most one`,
    );
  }
  return conflicts.length > 0 ? conflicts.join('; ') : undefined;
}
