/**
 * Small indexes the store keeps beside its plain maps: a map whose values are wanted in key
 * order, and a map whose values are wanted by a group (e.g. a quota tree), and the candidate
 * index of ClusterColocationProfiles.
 */
import type { JsonValue } from '../../webhook/admission/types.js';
import {
  parseLabelSelector,
  type LabelSelector,
  type SelectorRequirement,
} from '../../webhook/util/label-selector.js';

const byteOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Values in key order, sorted once per change rather than once per admission request. */
export class SortedIndex<V> {
  private readonly entries = new Map<string, V>();
  private sorted: readonly V[] | undefined;

  set(key: string, value: V): void {
    this.entries.set(key, value);
    this.sorted = undefined;
  }

  delete(key: string): void {
    if (this.entries.delete(key)) this.sorted = undefined;
  }

  get(key: string): V | undefined {
    return this.entries.get(key);
  }

  get size(): number {
    return this.entries.size;
  }

  values(): readonly V[] {
    this.sorted ??= [...this.entries.keys()].sort(byteOrder).map((key) => this.entries.get(key) as V);
    return this.sorted;
  }
}

/** Values looked up by group, each group in key order; a value moves when its group changes. */
export class GroupedIndex<V> {
  private readonly groupOf = new Map<string, string>();
  private readonly groups = new Map<string, SortedIndex<V>>();

  constructor(private readonly group: (value: V) => string) {}

  set(key: string, value: V): void {
    this.delete(key);
    const name = this.group(value);
    this.groupOf.set(key, name);
    let members = this.groups.get(name);
    if (!members) this.groups.set(name, (members = new SortedIndex<V>()));
    members.set(key, value);
  }

  delete(key: string): void {
    const name = this.groupOf.get(key);
    if (name === undefined) return;
    this.groupOf.delete(key);
    const members = this.groups.get(name);
    members?.delete(key);
    if (members?.size === 0) this.groups.delete(name);
  }

  members(group: string): readonly V[] {
    return this.groups.get(group)?.values() ?? [];
  }
}

/**
 * Which ClusterColocationProfiles could match a pod, so a pod create evaluates those rather than
 * every profile. A profile is filed under the label pairs (key, value) one `In` requirement
 * (matchLabels included) of its pod selector accepts, or failing that of its namespace
 * selector: a pod it matches must carry one of those pairs, or live in a namespace that does.
 * A profile with neither, or with a selector that does not parse (it must still be evaluated to
 * produce its warning), is a candidate for every pod. Candidates come back in the profiles'
 * order, so applying them gives the same result as scanning them all.
 */
export class ProfileCandidates<P extends ProfileSelectors> {
  private readonly byPodLabel = new Map<string, P[]>();
  private readonly byNamespaceLabel = new Map<string, P[]>();
  private readonly always: P[] = [];
  private readonly rank = new Map<P, number>();

  /** `profiles` in the order they apply (by name). */
  constructor(private readonly profiles: readonly P[]) {
    profiles.forEach((profile, index) => {
      this.rank.set(profile, index);
      this.file(profile);
    });
  }

  candidates(
    podLabels: Readonly<Record<string, string>>,
    namespaceLabels: Readonly<Record<string, string>>,
  ): readonly P[] {
    if (this.always.length === this.profiles.length) return this.profiles;
    const found = new Set<P>(this.always);
    collect(this.byPodLabel, podLabels, found);
    collect(this.byNamespaceLabel, namespaceLabels, found);
    if (found.size === this.always.length) return this.always;
    const rank = (profile: P): number => this.rank.get(profile) ?? 0;
    return [...found].sort((a, b) => rank(a) - rank(b));
  }

  private file(profile: P): void {
    const podSelector = parseLabelSelector(profile.spec.selector, 'spec.selector');
    const namespaceSelector = parseLabelSelector(profile.spec.namespaceSelector, 'spec.namespaceSelector');
    if (!podSelector.ok || !namespaceSelector.ok) {
      this.always.push(profile);
      return;
    }
    const podTerm = narrowestEquality(podSelector.value);
    const namespaceTerm = podTerm ? undefined : narrowestEquality(namespaceSelector.value);
    const term = podTerm ?? namespaceTerm;
    if (!term) {
      this.always.push(profile);
      return;
    }
    const index = podTerm ? this.byPodLabel : this.byNamespaceLabel;
    for (const value of new Set(term.values)) {
      const key = pairKey(term.key, value);
      let filed = index.get(key);
      if (!filed) index.set(key, (filed = []));
      filed.push(profile);
    }
  }
}

/** What ProfileCandidates reads of a profile: its two selectors, as written. */
export interface ProfileSelectors {
  spec: { selector?: JsonValue; namespaceSelector?: JsonValue };
}

const pairKey = (key: string, value: string): string => `${key}\u0000${value}`;

function collect<P>(index: Map<string, P[]>, labels: Readonly<Record<string, string>>, into: Set<P>): void {
  if (index.size === 0) return;
  for (const [key, value] of Object.entries(labels)) {
    const filed = index.get(pairKey(key, value));
    if (filed) for (const profile of filed) into.add(profile);
  }
}

/** The `In` requirement with the fewest values: every label set the selector matches has one of them. */
function narrowestEquality(selector: LabelSelector): SelectorRequirement | undefined {
  let best: SelectorRequirement | undefined;
  for (const requirement of selector.requirements) {
    if (requirement.operator !== 'In') continue;
    if (!best || requirement.values.length < best.values.length) best = requirement;
  }
  return best;
}

const candidateIndexes = new WeakMap<readonly ProfileSelectors[], ProfileCandidates<ProfileSelectors>>();

/**
 * The candidate index of `profiles`, built once per list: the store hands out a new list
 * whenever a profile changes.
 */
export function profileCandidates<P extends ProfileSelectors>(profiles: readonly P[]): ProfileCandidates<P> {
  let index = candidateIndexes.get(profiles) as ProfileCandidates<P> | undefined;
  if (!index) {
    index = new ProfileCandidates(profiles);
    candidateIndexes.set(profiles, index);
  }
  return index;
}
