/**
 * /validate-configmap for Koordinator's slo-controller-config (docs/rules/validate-configmap.md;
 * `pkg/webhook/cm/plugins/sloconfig`): a change that the
 * slo-controller would fail to parse, or that breaks a bound, a selector rule or the
 * one-strategy-per-node rule, is refused with every problem, one per line. Every other ConfigMap
 * is left alone, and DELETE is allowed (the slo-controller falls back to its defaults).
 */
import type { AdmissionRequest } from '../../../admission/types.js';
import type { Rule, StateSnapshot } from '../../../state.js';
import { stringsOf } from '../../../util/json.js';
import { decisionOf, headed, findings, PASSED, type Findings } from '../../shared/findings.js';
import { atField, type FieldError } from '../../shared/field-errors.js';
import { type NodeLabels, type NodeStrategy, strategiesMatching, strategyList } from './node-selectors.js';
import { type KeyChecker, type KeyContext, keyPath, sloConfigCheckers } from './slo-config-keys.js';

export type { NodeLabels } from './node-selectors.js';

export interface SloConfigLimits {
  /** --max-amplification-ratio: the most resource-amplification-config may ask for. */
  maxAmplificationRatio?: number;
}

// A refusal names this many nodes per conflict and counts the rest.
const EXAMPLE_NODES = 5;

/**
 * Every problem with an slo-controller-config change, deduplicated, in Koordinator's key order
 * (empty when it is valid), and the keys of the checked values that the slo-controller would
 * silently ignore. `oldData` is null on CREATE.
 *
 * A key is checked only when its new value is non-empty and differs from the old one
 * (Koordinator's IsCfgNotEmptyAndChanged). So a key that was already invalid before this webhook
 * existed does not block edits to other keys; it is checked again as soon as it is edited.
 */
function reviewSloConfig(
  newData: Readonly<Record<string, string>>,
  oldData: Readonly<Record<string, string>> | null,
  nodes: Iterable<NodeLabels>,
  limits: SloConfigLimits,
): { problems: FieldError[]; unknownFields: string[] } {
  const checked = (key: string): boolean => {
    const value = newData[key] ?? '';
    return value !== '' && (oldData === null || value !== (oldData[key] ?? ''));
  };
  const context: KeyContext = { data: newData, checked };
  const problems: FieldError[] = [];
  const unknownFields: string[] = [];
  const withStrategies: { checker: KeyChecker; strategies: NodeStrategy[] }[] = [];
  for (const checker of sloConfigCheckers(limits.maxAmplificationRatio)) {
    if (!checked(checker.key)) continue;
    const outcome = checker.check(newData[checker.key] ?? '', context);
    problems.push(...outcome.problems);
    unknownFields.push(...(outcome.unknownFields ?? []));
    if (outcome.strategies && outcome.strategies.length > 1) {
      withStrategies.push({ checker, strategies: outcome.strategies });
    }
  }
  if (withStrategies.length > 0) problems.push(...nodeConflicts(withStrategies, nodes));
  // The same problem found twice (a node strategy in two keys' checks) is reported once.
  const unique = new Map(problems.map((problem) => [problem.toString(), problem]));
  return { problems: [...unique.values()], unknownFields: [...new Set(unknownFields)] };
}

/** ExistNodeConfict: real nodes that match more than one strategy of a key, grouped by strategies. */
function nodeConflicts(
  keys: readonly { checker: KeyChecker; strategies: NodeStrategy[] }[],
  nodes: Iterable<NodeLabels>,
): FieldError[] {
  const conflicts = new Map<string, { checker: KeyChecker; strategies: NodeStrategy[]; nodes: string[] }>();
  for (const node of nodes) {
    for (const { checker, strategies } of keys) {
      const matching = strategiesMatching(strategies, node.labels);
      if (matching.length < 2) continue;
      const id = `${checker.key}\n${matching.map((strategy) => strategy.index).join(',')}`;
      const conflict = conflicts.get(id) ?? { checker, strategies: matching, nodes: [] };
      conflict.nodes.push(node.name);
      conflicts.set(id, conflict);
    }
  }
  return [...conflicts.values()].map(({ checker, strategies, nodes: names }) => {
    const sorted = [...names].sort();
    const shown = sorted.slice(0, EXAMPLE_NODES).map((name) => JSON.stringify(name));
    const more = sorted.length - shown.length;
    const who =
      sorted.length === 1
        ? `node ${shown.join('')} matches`
        : `nodes ${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''} each match`;
    return atField(
      keyPath(checker.key),
      `${who} ${strategies.length} ${checker.strategiesField} ${strategyList(strategies)}; a node may match at most one (ExistNodeConfict)`,
    );
  });
}

export interface SloConfigValidatorOptions {
  /** Where the slo-controller reads its ConfigMap (Koordinator: --config-namespace, --slo-config-name). */
  namespace: string;
  name: string;
  /** The cluster's nodes, for the conflict check; StateSnapshot.nodes() by default. */
  nodesOf?: (state: StateSnapshot) => Iterable<NodeLabels>;
  maxAmplificationRatio?: number;
}

/**
 * The problems of a write of slo-controller-config, each at its key and the path inside the key's
 * JSON (`data[<key>]: <path>: ...`), and a warning for each field the slo-controller would ignore.
 */
function checkSloConfig(
  request: AdmissionRequest,
  nodes: Iterable<NodeLabels>,
  source: string,
  limits: SloConfigLimits,
): Findings {
  const object = request.object;
  if (!object) return PASSED;
  const oldData =
    request.operation === 'UPDATE' && request.oldObject ? stringsOf(request.oldObject.data) : null;
  const { problems, unknownFields } = reviewSloConfig(stringsOf(object.data), oldData, nodes, limits);
  return findings(
    problems,
    // Go's decoder drops unknown keys without a word, so a misspelt setting would silently not apply.
    unknownFields.map((field) => `${source} ${field}: unknown field, ignored by the slo-controller`),
  );
}

export function sloConfigValidator(options: SloConfigValidatorOptions): Rule {
  const nodesOf = options.nodesOf ?? ((state: StateSnapshot): Iterable<NodeLabels> => state.nodes());
  const limits: SloConfigLimits =
    options.maxAmplificationRatio === undefined
      ? {}
      : { maxAmplificationRatio: options.maxAmplificationRatio };
  const source = `ConfigMap ${options.namespace}/${options.name}`;
  const render = headed(`${source} is not a valid SLO configuration`);
  return (request, state) => {
    const object = request.object;
    if (request.operation === 'DELETE' || !object) return decisionOf(PASSED);
    const name = typeof object.metadata.name === 'string' ? object.metadata.name : request.name;
    const namespace = request.namespace ?? object.metadata.namespace;
    if (namespace !== options.namespace || name !== options.name) return decisionOf(PASSED);
    // The node list is read only when some key has more than one node strategy.
    const nodes: Iterable<NodeLabels> = { [Symbol.iterator]: () => nodesOf(state)[Symbol.iterator]() };
    return decisionOf(checkSloConfig(request, nodes, source, limits), render);
  };
}
