/**
 * Node strategies (`nodeStrategies[]`, `nodeConfigs[]`) and their node selectors, as Koordinator's
 * slo-config checker treats them (`pkg/webhook/cm/plugins/sloconfig/{checker.go,selector.go}`):
 * every strategy needs a non-empty selector that apimachinery can convert, no "virtual node" built
 * from one selector may match two strategies (NodeStrategiesOverlap), and no real node may match two
 * (ExistNodeConfict, spelt as Koordinator spells it).
 */
import { type FieldError, type FieldPath, forbidden, invalid, required } from '../field-errors.js';
import { labelKeyProblem, labelValueProblem } from '../../util/k8s-names.js';
import {
  type LabelSelector,
  type SelectorOperator,
  type SelectorRequirement,
  selectorMatches,
} from '../../util/label-selector.js';
import { goString, list, map, struct } from './go-decode.js';

/** A node as strategies see it. (StateSnapshot's NodeView has this shape.) */
export interface NodeLabels {
  name: string;
  labels: Readonly<Record<string, string>>;
}

/** `metav1.LabelSelector`. */
export const LABEL_SELECTOR = struct({
  matchLabels: map(goString, ''),
  matchExpressions: list(struct({ key: goString, operator: goString, values: list(goString) })),
});

export type LabelSelectorJson = NonNullable<ReturnType<typeof LABEL_SELECTOR>>;

/** `NodeCfgProfile`, inlined in every node strategy. */
export const NODE_PROFILE = { name: goString, nodeSelector: LABEL_SELECTOR };

/** A node strategy as read from the config, before its selector is checked. */
export interface StrategyEntry {
  name?: string;
  nodeSelector?: LabelSelectorJson;
}

/** A node strategy whose selector converted. */
export interface NodeStrategy {
  index: number;
  /** How messages name it: its name, or its path when it has none (names are optional). */
  label: string;
  source: LabelSelectorJson;
  selector: LabelSelector;
}

const OPERATORS: readonly string[] = ['In', 'NotIn', 'Exists', 'DoesNotExist'];

/** `metav1.LabelSelectorAsSelector`, collecting every reason it would fail. */
function compileSelector(source: LabelSelectorJson, path: FieldPath, errors: FieldError[]): LabelSelector {
  const requirements: SelectorRequirement[] = [];
  const labelsPath = path.child('matchLabels');
  for (const [key, value] of source.matchLabels ?? []) {
    const keyProblem = labelKeyProblem(key);
    if (keyProblem !== undefined) errors.push(invalid(labelsPath.key(key), key, keyProblem));
    const valueProblem = labelValueProblem(value);
    if (valueProblem !== undefined) errors.push(invalid(labelsPath.key(key), value, valueProblem));
    requirements.push({ key, operator: 'In', values: [value] });
  }
  for (const [index, expression] of (source.matchExpressions ?? []).entries()) {
    const at = path.child('matchExpressions').index(index);
    const key = expression?.key ?? '';
    const operator = expression?.operator ?? '';
    const values = (expression?.values ?? []).map((value) => value ?? '');
    const keyProblem = labelKeyProblem(key);
    if (keyProblem !== undefined) errors.push(invalid(at.child('key'), key, keyProblem));
    if (!OPERATORS.includes(operator)) {
      errors.push(invalid(at.child('operator'), operator, 'must be In, NotIn, Exists or DoesNotExist'));
      continue;
    }
    const needsValues = operator === 'In' || operator === 'NotIn';
    if (needsValues && values.length === 0) {
      errors.push(required(at.child('values'), `operator ${operator} needs at least one value`));
    }
    if (!needsValues && values.length > 0) {
      errors.push(forbidden(at.child('values'), `must be empty for operator ${operator}`));
    }
    for (const [position, value] of values.entries()) {
      const problem = labelValueProblem(value);
      if (problem !== undefined) errors.push(invalid(at.child('values').index(position), value, problem));
    }
    requirements.push({ key, operator: operator as SelectorOperator, values });
  }
  return { requirements };
}

/**
 * Checks every strategy's selector as `CreateNodeConfigProfileChecker` does: present, with
 * matchLabels or matchExpressions, and convertible. The strategies come back only when all are
 * valid (Koordinator's checker does not initialise otherwise, so it checks no overlap or node).
 */
export function nodeStrategiesOf(
  entries: readonly (StrategyEntry | undefined)[],
  listPath: FieldPath,
  errors: FieldError[],
): NodeStrategy[] | undefined {
  const strategies: NodeStrategy[] = [];
  const before = errors.length;
  for (const [index, entry] of entries.entries()) {
    const path = listPath.index(index);
    const name = entry?.name ?? '';
    const source = entry?.nodeSelector;
    if (
      source === undefined ||
      ((source.matchLabels?.size ?? 0) === 0 && (source.matchExpressions ?? []).length === 0)
    ) {
      errors.push(
        required(
          path.child('nodeSelector'),
          'a node strategy needs a nodeSelector with matchLabels or matchExpressions',
        ),
      );
      continue;
    }
    const selector = compileSelector(source, path.child('nodeSelector'), errors);
    strategies.push({ index, label: name === '' ? path.toString() : name, source, selector });
  }
  return errors.length === before ? strategies : undefined;
}

/** `[a b]`, as Go prints a list of names. */
export function strategyList(strategies: readonly NodeStrategy[]): string {
  return `[${strategies.map((strategy) => strategy.label).join(' ')}]`;
}

// Koordinator builds every virtual node of the product of the value counts; they repeat with the
// least common multiple of those counts, and past this many distinct ones we stop rather than let a
// crafted selector exhaust the webhook's memory.
const VIRTUAL_NODE_LIMIT = 1000;

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/**
 * `generateNodesByNodeSelector`: the label sets of nodes a selector was evidently written for.
 * Virtual node i has every matchLabels label and, for each expression with values, its key set to
 * `values[i % len(values)]` (Exists and DoesNotExist add nothing).
 */
export function virtualNodes(source: LabelSelectorJson): Record<string, string>[] {
  const expressions = (source.matchExpressions ?? []).flatMap((expression) => {
    const values = (expression?.values ?? []).map((value) => value ?? '');
    return values.length > 0 ? [{ key: expression?.key ?? '', values }] : [];
  });
  let count = 1;
  for (const { values } of expressions) {
    count = Math.min((count / gcd(count, values.length)) * values.length, VIRTUAL_NODE_LIMIT);
  }
  const nodes: Record<string, string>[] = [];
  for (let index = 0; index < count; index++) {
    const labels = new Map(source.matchLabels ?? []);
    for (const { key, values } of expressions) labels.set(key, values[index % values.length] ?? '');
    nodes.push(Object.fromEntries(labels));
  }
  return nodes;
}

export interface Overlap {
  strategies: readonly NodeStrategy[];
  /** A virtual node that matches them all. */
  labels: Readonly<Record<string, string>>;
}

/** `NodeSelectorOverlap`: every distinct set of strategies some virtual node matches more than one of. */
export function overlappingStrategies(strategies: readonly NodeStrategy[]): Overlap[] {
  const found = new Map<string, Overlap>();
  for (const strategy of strategies) {
    for (const labels of virtualNodes(strategy.source)) {
      const matching = strategiesMatching(strategies, labels);
      const id = matching.map((each) => each.index).join(',');
      if (matching.length > 1 && !found.has(id)) found.set(id, { strategies: matching, labels });
    }
  }
  return [...found.values()];
}

export function strategiesMatching(
  strategies: readonly NodeStrategy[],
  labels: Readonly<Record<string, string>>,
): NodeStrategy[] {
  return strategies.filter((strategy) => selectorMatches(strategy.selector, labels));
}

/** `{a=1,b=2}`: a label set, sorted by key. */
export function labelsText(labels: Readonly<Record<string, string>>): string {
  const pairs = Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${pairs.map(([key, value]) => `${key}=${value}`).join(',')}}`;
}
