/**
 * The webhooks of the table as the operator writes them into its configurations: each entry with
 * a reach (reach.ts) becomes one or more entries of the same path whose selectors and match
 * conditions send the API server's review only when the webhook could act on it.
 *
 * The entries of one path are disjoint: they split the namespaces by single label requirements
 * (`r1`; `not r1, r2`; ...; `not r1, ..., not rk` for the rest), so no review is sent to a path
 * twice. The API server calls every matching entry as a webhook of its own, so overlapping entries
 * would run /mutate-pod twice (rolling each profile's probability again) and /validate-pod twice
 * (the second call counting the first one's quota reservation). docs/design.md, "Blast radius",
 * says why the shapes are these.
 *
 * Operations whose reach differs get entries of their own (rules of those operations only), each
 * with a condition that reads only what its operations can be affected by: Kubernetes 1.30's API
 * server plans a condition's whole expression again on every review (cel-go 0.17 under cost
 * tracking), so what it costs a pod follows the length of the text, not the part evaluated.
 *
 * Everything is bounded whatever the state holds: at most NARROWING_LIMITS.namespaceGroups + 1
 * entries per path and operation, conditions of at most NARROWING_LIMITS.conditionChars characters
 * (profile selectors are coarsened first, then dropped), namespace lists of at most
 * NARROWING_LIMITS.listedNames names. Whatever does not fit is sent more widely, never less.
 */
import type { V1LabelSelectorRequirement } from '@kubernetes/client-node';
import type { Operation } from '../admission/types.js';
import { NAMESPACE_NAME_LABEL } from '../names.js';
import type { ReachState } from '../state.js';
import { shortName, type WebhookEntry } from '../table.js';
import type { LabelSelector, SelectorRequirement } from '../util/label-selector.js';
import { isNamespaceName } from '../util/k8s-names.js';
import {
  and,
  FALSE,
  hasAnyLabel,
  inList,
  operationIs,
  or,
  requirementCel,
  selectorCel,
  TRUE,
  validRequirement,
} from './cel-text.js';
import { holdsAlways, type Reach, type ReachTerm } from './reach.js';

export const NARROWING_LIMITS = {
  /** Characters of one entry's reach condition (the API server compiles up to 100,000 code points). */
  conditionChars: 16_384,
  /** Namespace groups of one path; each adds an entry. */
  namespaceGroups: 6,
  /** Namespace names written into the condition itself (`request.namespace in [...]`) rather than a selector. */
  foldedNames: 200,
  /** Namespace names one selector lists; a longer list sends the reviews of every namespace instead. */
  listedNames: 10_000,
};

/** The name of the match condition narrowing adds. */
export const REACH_CONDITION = 'could-be-affected';

interface Group {
  requirement: SelectorRequirement;
  terms: ReachTerm[];
}

/** The entries to publish: every entry with a reach narrowed to it, the others as they are. */
export function narrowWebhooks(entries: readonly WebhookEntry[], state: ReachState): WebhookEntry[] {
  return entries.flatMap((entry) => (entry.reach ? narrowEntry(entry, entry.reach(state)) : [entry]));
}

/** `entry` narrowed to `reach`: disjoint entries of its path (none when it can act on nothing). */
export function narrowEntry(entry: WebhookEntry, reach: Reach): WebhookEntry[] {
  const groups = operationGroups(entry, reach);
  // One group: every operation has the same reach, and the entry keeps all of them.
  if (groups.length === 1) return narrowByNamespace(entry, groups[0]?.reach ?? reach);
  return groups.flatMap(({ operations, reach: theirs }, index) =>
    narrowByNamespace(onlyOperations(entry, operations, index), theirs),
  );
}

/**
 * The entry's operations, those with the same reach together (in the order its rules name them),
 * each with that reach: its terms for those operations, with no operation test left in them.
 */
function operationGroups(entry: WebhookEntry, reach: Reach): { operations: Operation[]; reach: Reach }[] {
  const groups = new Map<string, { operations: Operation[]; reach: Reach }>();
  for (const operation of new Set(entry.resourceRules.flatMap((rule) => rule.operations))) {
    const on = (terms: readonly ReachTerm[]): ReachTerm[] =>
      terms.flatMap(({ operations, ...term }) =>
        operations === undefined || operations.includes(operation) ? [term] : [],
      );
    const theirs: Reach = {
      anywhere: on(reach.anywhere),
      within: reach.within.map(({ namespaces, terms }) => ({ namespaces, terms: on(terms) })),
    };
    const key = JSON.stringify(theirs);
    const found = groups.get(key);
    if (found) found.operations.push(operation);
    else groups.set(key, { operations: [operation], reach: theirs });
  }
  return [...groups.values()];
}

/**
 * `entry` sent only `operations`: the first group keeps the entry's name, the others are named
 * after their operations. Declared conditions that hold on every review of these operations are
 * left out (the API server would evaluate them for nothing).
 */
function onlyOperations(entry: WebhookEntry, operations: readonly Operation[], index: number): WebhookEntry {
  const short = shortName(entry.name);
  const implied = operations.every((operation) => entry.matchConditionsHoldOn?.includes(operation));
  return {
    ...entry,
    name:
      index === 0
        ? entry.name
        : `${short}-${operations.map((operation) => operation.toLowerCase()).join('-')}${entry.name.slice(short.length)}`,
    resourceRules: entry.resourceRules.flatMap((rule) => {
      const kept = rule.operations.filter((operation) => operations.includes(operation));
      return kept.length > 0 ? [{ ...rule, operations: kept }] : [];
    }),
    matchConditions: implied ? [] : entry.matchConditions,
  };
}

/** `entry` narrowed to `reach` by namespace groups: disjoint entries of its path. */
function narrowByNamespace(entry: WebhookEntry, reach: Reach): WebhookEntry[] {
  const anywhere = [...reach.anywhere];
  const groups: Group[] = [];
  for (const { namespaces, terms } of reach.within) {
    if (terms.length === 0) continue;
    if ('names' in namespaces) {
      // A name that cannot name a namespace matches none.
      const names = [...new Set(namespaces.names.filter(isNamespaceName))].sort();
      if (names.length === 0) continue;
      if (names.length > NARROWING_LIMITS.listedNames) anywhere.push(...terms);
      else if (names.length <= NARROWING_LIMITS.foldedNames) {
        const inNamespace = inList('request.namespace', names) ?? TRUE;
        anywhere.push(...terms.map((term) => ({ ...term, cel: and([term.cel ?? TRUE, inNamespace]) })));
      } else
        groups.push({ requirement: { key: NAMESPACE_NAME_LABEL, operator: 'In', values: names }, terms });
      continue;
    }
    const requirement = oneRequirement(namespaces.selector);
    if (requirement) groups.push({ requirement, terms });
    else anywhere.push(...terms);
  }
  const bounded = boundGroups(mergeSame(groups), anywhere);
  if (anywhere.some(holdsAlways)) return [entry];
  // The longest requirement goes last: it is then written twice (its own entry and the rest's).
  bounded.sort((a, b) => size(a.requirement) - size(b.requirement) || (identity(a) < identity(b) ? -1 : 1));
  const cells: WebhookEntry[] = [];
  const rest = cell(entry, entry.name, bounded.map(negated), anywhere);
  if (rest) cells.push(rest);
  bounded.forEach((group, index) => {
    const namespaces = [...bounded.slice(0, index).map(negated), group.requirement];
    const terms = [...anywhere, ...bounded.slice(index).flatMap((each) => each.terms)];
    const short = shortName(entry.name);
    const named = cell(entry, `${short}-ns${index + 1}${entry.name.slice(short.length)}`, namespaces, terms);
    if (named) cells.push(named);
  });
  return cells;
}

/** One entry of the path: `entry` in the namespaces that meet `namespaces`, sent what `terms` reach. */
function cell(
  entry: WebhookEntry,
  name: string,
  namespaces: readonly SelectorRequirement[],
  terms: readonly ReachTerm[],
): WebhookEntry | undefined {
  const condition = reachCondition(terms);
  if (condition === FALSE) return undefined;
  const { reach: _reach, ...rest } = entry;
  return {
    ...rest,
    name,
    namespaceSelector: {
      ...entry.namespaceSelector,
      matchExpressions: [...(entry.namespaceSelector.matchExpressions ?? []), ...namespaces.map(v1)],
    },
    matchConditions:
      condition === TRUE
        ? entry.matchConditions
        : [...entry.matchConditions, { name: REACH_CONDITION, expression: condition }],
  };
}

const v1 = ({ key, operator, values }: SelectorRequirement): V1LabelSelectorRequirement => ({
  key,
  operator,
  ...(values.length > 0 ? { values: [...values] } : {}),
});

const COMPLEMENT = { In: 'NotIn', NotIn: 'In', Exists: 'DoesNotExist', DoesNotExist: 'Exists' } as const;

function negated({ requirement }: Group): SelectorRequirement {
  return { ...requirement, operator: COMPLEMENT[requirement.operator] };
}

const size = (requirement: SelectorRequirement): number =>
  requirement.values.reduce((sum, value) => sum + value.length + 4, requirement.key.length);

const identity = ({ requirement }: Group): string =>
  [requirement.key, requirement.operator, ...requirement.values].join('\u0000');

/**
 * One requirement every label set the selector matches meets (a superset: the others are
 * dropped), one the API server accepts: the `In` with the fewest values, else `Exists`, else any;
 * undefined when the selector matches every namespace or none of its requirements can be written.
 */
function oneRequirement(selector: LabelSelector): SelectorRequirement | undefined {
  const usable = selector.requirements.filter(validRequirement);
  const rank = (requirement: SelectorRequirement): number =>
    requirement.operator === 'In' ? requirement.values.length : requirement.operator === 'Exists' ? 1e9 : 2e9;
  return [...usable].sort((a, b) => rank(a) - rank(b))[0];
}

/** Groups of the same requirement become one. */
function mergeSame(groups: readonly Group[]): Group[] {
  const byIdentity = new Map<string, Group>();
  for (const group of groups) {
    const key = identity(group);
    const found = byIdentity.get(key);
    if (found) found.terms.push(...group.terms);
    else byIdentity.set(key, { requirement: group.requirement, terms: [...group.terms] });
  }
  return [...byIdentity.values()];
}

/**
 * At most NARROWING_LIMITS.namespaceGroups groups: `In` requirements on one key are joined
 * (their union), then groups whose terms all test the object are sent anywhere (only such objects
 * are sent more widely), then the rest; what moves goes into `anywhere`.
 */
function boundGroups(groups: Group[], anywhere: ReachTerm[]): Group[] {
  if (groups.length <= NARROWING_LIMITS.namespaceGroups) return groups;
  const joined = new Map<string, Group>();
  const others: Group[] = [];
  for (const group of groups) {
    const { key, operator, values } = group.requirement;
    if (operator !== 'In') {
      others.push(group);
      continue;
    }
    const found = joined.get(key);
    if (!found)
      joined.set(key, { requirement: { key, operator, values: [...values] }, terms: [...group.terms] });
    else {
      found.requirement = {
        key,
        operator,
        values: [...new Set([...found.requirement.values, ...values])].sort(),
      };
      found.terms.push(...group.terms);
    }
  }
  const remaining = [...joined.values(), ...others];
  const namespaceOnly = (group: Group): boolean => group.terms.some((term) => !term.cel && !term.labels);
  remaining.sort((a, b) => Number(namespaceOnly(a)) - Number(namespaceOnly(b)));
  while (remaining.length > NARROWING_LIMITS.namespaceGroups) {
    const moved = remaining.shift();
    if (moved) anywhere.push(...moved.terms);
  }
  return remaining;
}

/** The condition for `terms`, coarsened until it fits NARROWING_LIMITS.conditionChars (else every review). */
export function reachCondition(terms: readonly ReachTerm[]): string {
  if (terms.length === 0) return FALSE;
  if (terms.some(holdsAlways)) return TRUE;
  for (const level of [0, 1, 2, 3] as const) {
    const text = render(terms, level);
    if (text.length <= NARROWING_LIMITS.conditionChars) return text;
  }
  return TRUE;
}

/**
 * How exactly labels are tested: 0 the selector itself, 1 one requirement of each (selectors
 * testing one key joined into one list), 2 only that the key is there, 3 not at all.
 */
type Precision = 0 | 1 | 2 | 3;

function render(terms: readonly ReachTerm[], precision: Precision): string {
  const byOperations = new Map<string, ReachTerm[]>();
  for (const term of terms) {
    const key = term.operations ? [...new Set(term.operations)].sort().join(',') : '';
    const list = byOperations.get(key);
    if (list) list.push(term);
    else byOperations.set(key, [term]);
  }
  const parts: string[] = [];
  for (const [operations, list] of byOperations) {
    const labelOnly = list.flatMap((term) => (term.labels && term.cel === undefined ? [term.labels] : []));
    const others = list.filter((term) => !(term.labels && term.cel === undefined));
    const reached = or([
      ...others.map((term) =>
        and([term.cel ?? TRUE, term.labels ? coarsened([term.labels], precision) : TRUE]),
      ),
      coarsened(labelOnly, precision),
    ]);
    parts.push(
      operations === ''
        ? reached
        : and([operationIs(operations.split(',') as NonNullable<ReachTerm['operations']>), reached]),
    );
  }
  return or(parts);
}

/** Some of `selectors` matches the object's labels, at `precision`. */
function coarsened(selectors: readonly LabelSelector[], precision: Precision): string {
  if (selectors.length === 0) return FALSE;
  if (precision === 0) return or(joinedByKey(selectors).map(selectorCel));
  if (precision === 3) return TRUE;
  const valuesByKey = new Map<string, Set<string> | 'any'>();
  for (const selector of selectors) {
    const requirement = oneRequirement(selector);
    // Only NotIn or DoesNotExist (or nothing) to go by: most objects match.
    if (!requirement || (requirement.operator !== 'In' && requirement.operator !== 'Exists')) return TRUE;
    const found = valuesByKey.get(requirement.key);
    if (requirement.operator === 'Exists' || found === 'any') valuesByKey.set(requirement.key, 'any');
    else valuesByKey.set(requirement.key, new Set([...(found ?? []), ...requirement.values]));
  }
  if (precision === 2) return hasAnyLabel([...valuesByKey.keys()]);
  return or(
    [...valuesByKey].map(([key, values]) =>
      requirementCel(
        values === 'any'
          ? { key, operator: 'Exists', values: [] }
          : { key, operator: 'In', values: [...values].sort() },
      ),
    ),
  );
}

/**
 * The same label sets matched, in fewer selectors: selectors of one `In` or `Exists` requirement
 * on the same key become one (`key In a` or `key In b` is `key In a, b`; `key Exists` takes them
 * all). Profiles that each select one app label then cost one list to plan, not one test each.
 */
function joinedByKey(selectors: readonly LabelSelector[]): LabelSelector[] {
  const joined: LabelSelector[] = [];
  const byKey = new Map<string, SelectorRequirement>();
  for (const selector of selectors) {
    const [only, ...more] = selector.requirements;
    if (!only || more.length > 0 || (only.operator !== 'In' && only.operator !== 'Exists')) {
      joined.push(selector);
      continue;
    }
    const found = byKey.get(only.key);
    if (!found) {
      const requirement = { ...only, values: [...only.values] };
      byKey.set(only.key, requirement);
      joined.push({ requirements: [requirement] });
    } else if (found.operator === 'In') {
      if (only.operator === 'Exists') {
        found.operator = 'Exists';
        found.values = [];
      } else found.values = [...new Set([...found.values, ...only.values])];
    }
  }
  return joined;
}
