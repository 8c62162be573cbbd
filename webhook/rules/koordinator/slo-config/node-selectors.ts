/**
 * Node strategies (`nodeStrategies[]`, `nodeConfigs[]`) and their node selectors, as Koordinator's
 * slo-config checker treats them (`pkg/webhook/cm/plugins/sloconfig/{checker.go,selector.go}`):
 * every strategy needs a non-empty selector that apimachinery can convert, no "virtual node" built
 * from one selector may match two strategies (NodeStrategiesOverlap), and no real node may match two
 * (ExistNodeConfict, spelt as Koordinator spells it).
 */
import { type FieldError, type FieldPath, forbidden, invalid, required } from '../../shared/field-errors.js';
import { labelKeyProblem, labelValueProblem } from '../../../util/k8s-names.js';
import {
  type LabelSelector,
  type SelectorOperator,
  type SelectorRequirement,
} from '../../../util/label-selector.js';
import { MAX_SHOWN_VALUE_CHARS, truncate } from '../../../util/bounded-text.js';
import { list, map, struct } from '../../../util/go-decode/composites.js';
import { goString } from '../../../util/go-decode/scalars.js';
import { own } from '../../../util/own.js';

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
    // Messages name a strategy within its key's value, whose key they name already.
    strategies.push({ index, label: name === '' ? path.withinJson().toString() : name, source, selector });
  }
  return errors.length === before ? strategies : undefined;
}

// A message names this many strategies (or labels) and counts the rest: a single ConfigMap can hold
// tens of thousands of them, and each name is the user's own text.
const MAX_LISTED = 20;
const MAX_SHOWN_LABEL_CHARS = 2 * MAX_SHOWN_VALUE_CHARS;

/** `[a b]`, as Go prints a list of names (at most MAX_LISTED of them, each cut to a bounded length). */
export function strategyList(strategies: readonly NodeStrategy[]): string {
  const shown = strategies
    .slice(0, MAX_LISTED)
    .map((strategy) => truncate(strategy.label, MAX_SHOWN_VALUE_CHARS));
  const more = strategies.length - shown.length;
  return `[${shown.join(' ')}${more > 0 ? ` …and ${more} more` : ''}]`;
}

// Koordinator builds every virtual node of the product of the value counts; they repeat with the
// least common multiple of those counts, and past this many distinct ones we stop rather than let a
// crafted selector exhaust the webhook's memory.
const VIRTUAL_NODE_LIMIT = 1000;

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

export interface ValuedExpression {
  key: string;
  values: readonly string[];
}

/** The expressions that give virtual nodes a label: those with values (Exists and DoesNotExist add nothing). */
function valuedExpressions(source: LabelSelectorJson): ValuedExpression[] {
  return (source.matchExpressions ?? []).flatMap((expression) => {
    const values = (expression?.values ?? []).map((value) => value ?? '');
    return values.length > 0 ? [{ key: expression?.key ?? '', values }] : [];
  });
}

function virtualNodeCount(expressions: readonly ValuedExpression[]): number {
  let count = 1;
  for (const { values } of expressions) {
    count = Math.min((count / gcd(count, values.length)) * values.length, VIRTUAL_NODE_LIMIT);
  }
  return count;
}

/** A selector's virtual nodes, each built when asked for, so a search can stop early and memory stays flat. */
export interface VirtualNodes {
  /** The expressions with values, in selector order. */
  readonly expressions: readonly ValuedExpression[];
  readonly count: number;
  /** Virtual node `index` (< count). */
  at(index: number): ReadonlyMap<string, string>;
}

const NO_LABELS: ReadonlyMap<string, string> = new Map();

/**
 * `generateNodesByNodeSelector`: the label sets of nodes a selector was evidently written for.
 * Virtual node i has every matchLabels label and, for each expression with values, its key set to
 * `values[i % len(values)]` (Exists and DoesNotExist add nothing); only the distinct ones are
 * counted (they repeat every lcm of the value counts), at most VIRTUAL_NODE_LIMIT.
 */
export function virtualNodes(source: LabelSelectorJson): VirtualNodes {
  const expressions = valuedExpressions(source);
  const matchLabels = source.matchLabels ?? NO_LABELS;
  return {
    expressions,
    count: virtualNodeCount(expressions),
    at(index) {
      if (expressions.length === 0) return matchLabels;
      const labels = new Map(matchLabels);
      for (const { key, values } of expressions) labels.set(key, values[index % values.length] ?? '');
      return labels;
    },
  };
}

/** A requirement with its values in a set, so a check costs the same however many values it lists. */
interface CompiledRequirement {
  key: string;
  operator: SelectorOperator;
  values: ReadonlySet<string>;
}

/**
 * Where a strategy can be found from a node's labels. Each strategy sits under exactly one anchor,
 * a requirement every node it matches must satisfy: an In requirement (under each of its values),
 * else an Exists (under its key), else a DoesNotExist (a candidate for nodes without that key),
 * else, NotIn only, a candidate for every node. Of the In requirements the anchor is the one whose
 * values the fewest strategies share, so that one node's labels lead to few candidates that then
 * fail a later requirement.
 */
interface StrategyIndex {
  requirements: readonly (readonly CompiledRequirement[])[];
  byValue: Map<string, Map<string, number[]>>;
  byKey: Map<string, number[]>;
  byAbsentKey: Map<string, number[]>;
  always: number[];
}

const indexes = new WeakMap<readonly NodeStrategy[], StrategyIndex>();

function push<K>(buckets: Map<K, number[]>, key: K, position: number): void {
  const bucket = buckets.get(key);
  if (bucket) bucket.push(position);
  else buckets.set(key, [position]);
}

function count<K>(counts: Map<K, number>, key: K): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

/** The strategies' index, built once per list in O(total selector size). */
function indexOf(strategies: readonly NodeStrategy[]): StrategyIndex {
  const cached = indexes.get(strategies);
  if (cached) return cached;
  const requirements = strategies.map((strategy) =>
    strategy.selector.requirements.map(({ key, operator, values }) => ({
      key,
      operator,
      values: new Set(values),
    })),
  );
  const valueCounts = new Map<string, Map<string, number>>();
  const existsCounts = new Map<string, number>();
  const absentCounts = new Map<string, number>();
  for (const each of requirements) {
    for (const { key, operator, values } of each) {
      if (operator === 'In') {
        let counts = valueCounts.get(key);
        if (!counts) valueCounts.set(key, (counts = new Map<string, number>()));
        for (const value of values) count(counts, value);
      } else if (operator === 'Exists') count(existsCounts, key);
      else if (operator === 'DoesNotExist') count(absentCounts, key);
    }
  }
  const index: StrategyIndex = {
    requirements,
    byValue: new Map(),
    byKey: new Map(),
    byAbsentKey: new Map(),
    always: [],
  };
  for (const [position, each] of requirements.entries()) {
    let anchor: CompiledRequirement | undefined;
    let best = Infinity;
    for (const requirement of each) {
      if (requirement.operator !== 'In') continue;
      const counts = valueCounts.get(requirement.key);
      let shared = 0;
      for (const value of requirement.values) shared += counts?.get(value) ?? 0;
      if (shared < best) [anchor, best] = [requirement, shared];
    }
    if (anchor) {
      let byValue = index.byValue.get(anchor.key);
      if (!byValue) index.byValue.set(anchor.key, (byValue = new Map<string, number[]>()));
      for (const value of anchor.values) push(byValue, value, position);
      continue;
    }
    for (const requirement of each) {
      const shared = requirement.operator === 'Exists' ? (existsCounts.get(requirement.key) ?? 0) : Infinity;
      if (shared < best) [anchor, best] = [requirement, shared];
    }
    if (anchor) {
      push(index.byKey, anchor.key, position);
      continue;
    }
    // The key most strategies forbid: the fewest distinct keys for every node to look at.
    for (const requirement of each) {
      const shared =
        requirement.operator === 'DoesNotExist' ? -(absentCounts.get(requirement.key) ?? 0) : Infinity;
      if (shared < best) [anchor, best] = [requirement, shared];
    }
    if (anchor) push(index.byAbsentKey, anchor.key, position);
    else index.always.push(position);
  }
  indexes.set(strategies, index);
  return index;
}

function holds(
  requirements: readonly CompiledRequirement[],
  valueOf: (key: string) => string | undefined,
): boolean {
  for (const { key, operator, values } of requirements) {
    const value = valueOf(key);
    const holding =
      operator === 'In'
        ? value !== undefined && values.has(value)
        : operator === 'NotIn'
          ? value === undefined || !values.has(value)
          : operator === 'Exists'
            ? value !== undefined
            : value === undefined;
    if (!holding) return false;
  }
  return true;
}

/** How many strategies a label set's anchors lead to (no allocation: it decides whether to memoise). */
function candidateCount(index: StrategyIndex, labels: ReadonlyMap<string, string>): number {
  let candidates = index.always.length;
  for (const [key, value] of labels) {
    candidates += (index.byValue.get(key)?.get(value)?.length ?? 0) + (index.byKey.get(key)?.length ?? 0);
  }
  for (const [key, bucket] of index.byAbsentKey) if (!labels.has(key)) candidates += bucket.length;
  return candidates;
}

/**
 * The positions of the strategies that match a label set, in list order, and the work it took
 * (labels looked up plus requirements of the candidates checked). Each strategy is a candidate at
 * most once, as it has one anchor and a label set has one value per key.
 */
function matchPositions(
  index: StrategyIndex,
  keys: Iterable<string>,
  valueOf: (key: string) => string | undefined,
): { positions: number[]; work: number } {
  const positions: number[] = [];
  const buckets: (readonly number[])[] = [index.always];
  let work = index.byAbsentKey.size;
  for (const key of keys) {
    work += 1;
    const value = valueOf(key);
    const byValue = value === undefined ? undefined : index.byValue.get(key)?.get(value);
    const byKey = index.byKey.get(key);
    if (byValue) buckets.push(byValue);
    if (byKey) buckets.push(byKey);
  }
  for (const [key, bucket] of index.byAbsentKey) if (valueOf(key) === undefined) buckets.push(bucket);
  for (const bucket of buckets) {
    for (const position of bucket) {
      const requirements = index.requirements[position] ?? [];
      work += requirements.length;
      if (holds(requirements, valueOf)) positions.push(position);
    }
  }
  if (buckets.length > 1) positions.sort((x, y) => x - y);
  return { positions, work };
}

/**
 * The strategies whose selectors match `labels`, in list order. After a first call builds the
 * list's index (O(s), s the total size of the selectors), a call costs O(l + c log c): l labels, c
 * candidates (the strategies under the labels' anchors; for realistic selectors about the matches).
 */
export function strategiesMatching(
  strategies: readonly NodeStrategy[],
  labels: Readonly<Record<string, string>>,
): NodeStrategy[] {
  const { positions } = matchPositions(indexOf(strategies), Object.keys(labels), (key) => own(labels, key));
  return positions.flatMap((position) => strategies[position] ?? []);
}

export interface Overlap {
  strategies: readonly NodeStrategy[];
  /** A virtual node that matches them all. */
  labels: Readonly<Record<string, string>>;
}

/** The result of the overlap search: the overlaps, and whether it stopped for work before the end. */
export interface OverlapSearch {
  overlaps: Overlap[];
  /** True when the work bound stopped the search before every virtual node was tried. */
  exhausted: boolean;
}

// One overlap refuses the config; past this many distinct ones the rest add length, not information.
const MAX_OVERLAPS = 10;
// Label lookups plus requirement checks: a fraction of a second of one core (docs/performance/
// README.md, "slo-controller-config node strategies"). Selectors within a 1 MiB ConfigMap that are
// crafted to make many candidates fail (in general no index avoids that: finding which of n
// selectors one label set satisfies is a subset query) stop here instead of stalling the server.
const OVERLAP_WORK_LIMIT = 2_000_000;
// Virtual nodes whose (repeated) strategies were already reported, remembered up to this many.
const REMEMBERED_NODES = 100_000;
const REMEMBER_ABOVE = 16;

function byKey([a]: readonly [string, string], [b]: readonly [string, string]): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * `NodeSelectorOverlap`: every distinct set of strategies some virtual node matches more than one
 * of, in the order the pairwise search (every virtual node against every selector) meets them, up
 * to MAX_OVERLAPS of them.
 *
 * Strategies whose matchLabels and valued expressions are equal build the same virtual nodes, so
 * only the first of them is tried; a virtual node that leads to many strategies and was already
 * reported is not looked up again; and each lookup goes through the index. With v virtual nodes
 * (one per strategy for matchLabels or single-valued In), l labels each and c candidates per
 * lookup, the search costs O(s + v (l + c log c)) instead of the pairwise O(v n l); for realistic
 * selectors c is about the number of matches, so O(n log n): 16,000 strategies, which fill a
 * 1 MiB ConfigMap, take a fraction of a second where the pairwise search took tens of seconds
 * (docs/performance/README.md, "slo-controller-config node strategies"). Work is bounded by
 * OVERLAP_WORK_LIMIT; memory by the input, MAX_OVERLAPS and REMEMBERED_NODES. A search stopped by
 * its work bound returns the overlaps found so far: the selectors were crafted to be expensive, and
 * real nodes that match two strategies are still refused by ExistNodeConfict here and by
 * /validate-node when a node is relabelled.
 */
export function searchOverlaps(
  strategies: readonly NodeStrategy[],
  workLimit = OVERLAP_WORK_LIMIT,
): OverlapSearch {
  const index = indexOf(strategies);
  const found = new Map<string, Overlap>();
  const triedSources = new Set<string>();
  const reportedNodes = new Set<string>();
  const done = (exhausted: boolean): OverlapSearch => ({ overlaps: [...found.values()], exhausted });
  let work = 0;
  for (const strategy of strategies) {
    const { source } = strategy;
    const nodes = virtualNodes(source);
    const { expressions } = nodes;
    work += 1 + expressions.length;
    if (nodes.count > 1) {
      const signature = JSON.stringify([
        [...(source.matchLabels ?? [])].sort(byKey),
        expressions.map(({ key, values }) => [key, values]),
      ]);
      work += signature.length;
      if (triedSources.has(signature)) continue;
      triedSources.add(signature);
    }
    for (let node = 0; node < nodes.count; node++) {
      if (work > workLimit) return done(true);
      const labels = nodes.at(node);
      work += labels.size;
      // Only a label set that leads to many strategies is worth remembering: looking it up again
      // would cost as much as those strategies, once per strategy that builds it.
      let nodeKey: string | undefined;
      if (candidateCount(index, labels) > REMEMBER_ABOVE) {
        nodeKey = JSON.stringify([...labels].sort(byKey));
        work += nodeKey.length;
        if (reportedNodes.has(nodeKey)) continue;
      }
      const matched = matchPositions(index, labels.keys(), (key) => labels.get(key));
      work += matched.work;
      if (matched.positions.length < 2) continue;
      work += matched.positions.length;
      if (nodeKey !== undefined && reportedNodes.size < REMEMBERED_NODES) reportedNodes.add(nodeKey);
      const matching = matched.positions.flatMap((position) => strategies[position] ?? []);
      const id = matching.map((each) => each.index).join(',');
      if (found.has(id)) continue;
      found.set(id, { strategies: matching, labels: Object.fromEntries(labels) });
      if (found.size >= MAX_OVERLAPS) return done(false);
    }
  }
  return done(false);
}

/** `{a=1,b=2}`: a label set, sorted by key (at most MAX_LISTED labels, each cut to a bounded length). */
export function labelsText(labels: Readonly<Record<string, string>>): string {
  const pairs = Object.entries(labels).sort(byKey);
  const shown = pairs
    .slice(0, MAX_LISTED)
    .map(([key, value]) => truncate(`${key}=${value}`, MAX_SHOWN_LABEL_CHARS));
  const more = pairs.length - shown.length;
  return `{${shown.join(',')}${more > 0 ? `,…and ${more} more` : ''}}`;
}
