/**
 * One ClusterColocationProfile
 * (cluster_colocation_profile.go): whether it matches an object, whether the dice
 * let it apply, and what applying it does. Pods and Reservations share this; they differ only in
 * where the pod spec lives and whether namespaces are matched.
 *
 * A profile that cannot be applied as written (an invalid selector, probability or patch, or a
 * PriorityClass that does not exist) is skipped with a warning naming the profile and the field.
 * Koordinator fails the request (or, for a selector, applies the profile to everything); either
 * way one typo in a cluster-scoped profile would refuse or rewrite every new pod in the cluster,
 * which is exactly how an admission webhook wedges a cluster.
 *
 * Upstream sources and every message: docs/rules/mutate-pod.md.
 */
import type { JsonObject, JsonValue } from '../../../admission/types.js';
import type { ColocationProfileView, StateSnapshot } from '../../../state.js';
import { asObject, stringsOf } from '../../../util/json.js';
import { own, putOwn } from '../../../util/own.js';
import {
  parseLabelSelector,
  selectorMatches,
  selectsEverything,
  type LabelSelector,
} from '../../../util/label-selector.js';
import type { Result } from '../../../util/result.js';
import {
  strategicMergePatch,
  StrategicMergePatchError,
  type PatchSchema,
} from '../../../util/strategic-merge-patch.js';
import { PRIORITY_LABEL, QOS_LABEL } from './priority-qos.js';

/** On a profile: its matching pods keep cpu and memory (no batch/mid translation). Presence is enough. */
export const SKIP_UPDATE_RESOURCES_ANNOTATION = 'config.koordinator.sh/skip-update-resources';

/** A profile that cannot be applied; the message names the profile and the field. */
export class ProfileProblem extends Error {}

const problem = (profile: ColocationProfileView, detail: string): ProfileProblem =>
  new ProfileProblem(`ClusterColocationProfile "${profile.name}": ${detail}; the profile was not applied`);

/**
 * Whether the profile selects an object with `labels` in a namespace with `namespaceLabels`
 * (`undefined` for cluster-scoped objects, whose profiles' namespaceSelector is ignored).
 * Throws a ProfileProblem for a selector that does not parse.
 */
export function profileMatches(
  profile: ColocationProfileView,
  labels: Readonly<Record<string, string>>,
  namespaceLabels: Readonly<Record<string, string>> | undefined,
): boolean {
  const { namespaceSelector, selector } = selectorsOf(profile);
  if (namespaceLabels !== undefined) {
    if (!namespaceSelector.ok) throw problem(profile, namespaceSelector.error);
    const everything = selectsEverything(namespaceSelector.value);
    if (!everything && !selectorMatches(namespaceSelector.value, namespaceLabels)) return false;
  }
  if (!selector.ok) throw problem(profile, selector.error);
  return selectorMatches(selector.value, labels);
}

interface ProfileSelectors {
  namespaceSelector: Result<LabelSelector>;
  selector: Result<LabelSelector>;
}

/**
 * Every pod create evaluates every profile, so selectors are parsed once per profile version: the
 * store hands out a new view object whenever a profile changes.
 */
const parsedSelectors = new WeakMap<ColocationProfileView, ProfileSelectors>();

function selectorsOf(profile: ColocationProfileView): ProfileSelectors {
  let parsed = parsedSelectors.get(profile);
  if (!parsed) {
    parsed = {
      namespaceSelector: parseLabelSelector(profile.spec.namespaceSelector, 'spec.namespaceSelector'),
      selector: parseLabelSelector(profile.spec.selector, 'spec.selector'),
    };
    parsedSelectors.set(profile, parsed);
  }
  return parsed;
}

/**
 * spec.probability as a percent (absent: 100), read as intstr.GetScaledValueFromIntOrPercent
 * reads it: an integer as is, "N%" as N. Throws a ProfileProblem for anything else.
 */
export function probabilityPercent(profile: ColocationProfileView): number {
  const value = profile.spec.probability;
  if (value === undefined || value === null) return 100;
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string') {
    const match = /^(-?\d+)%$/.exec(value);
    if (match?.[1]) return Number(match[1]);
  }
  throw problem(
    profile,
    `spec.probability: Invalid value: ${JSON.stringify(value)}: must be an integer or a percentage such as "50%"`,
  );
}

/**
 * Whether the profile applies this time. `roll` is uniform in 0..99 (Go's rand.Intn(100)), so a
 * profile of N% applies when roll <= N, as in Koordinator.
 */
export function profileApplies(percent: number, roll: () => number): boolean {
  if (percent === 0) return false;
  return percent === 100 || roll() <= percent;
}

/** Where the profile's pod-level settings go in the object it is applied to. */
export interface ProfileTarget {
  /** Path of the pod spec (schedulerName, priority): `['spec']` for a pod. */
  podSpecPath: readonly string[];
  /** The object's strategic-merge schema, for spec.patch. */
  patchSchema: PatchSchema;
  /** Only for objects that hold a pod template: skip the pod-spec settings when it is absent. */
  podSpecOptional?: boolean;
}

function stringMap(profile: ColocationProfileView, field: string): Record<string, string> {
  const value = profile.spec[field];
  if (value === undefined || value === null) return {};
  const map = asObject(value);
  const strings = stringsOf(value);
  if (!map || Object.keys(map).length !== Object.keys(strings).length) {
    throw problem(profile, `spec.${field}: must be a map of strings`);
  }
  return strings;
}

function optionalString(profile: ColocationProfileView, field: string): string {
  const value = profile.spec[field];
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw problem(profile, `spec.${field}: must be a string`);
  return value;
}

/** The object at `path` under `root`; undefined when absent. */
function objectAt(root: JsonObject, path: readonly string[]): JsonObject | undefined {
  let current: JsonObject | undefined = root;
  for (const name of path) current = current && asObject(current[name]);
  return current;
}

/**
 * The object at `path` under `root`, which the caller owns, made writable: every object on the
 * way is replaced by a shallow copy (or created), so what it shares with the input stays untouched.
 */
function ownObjectAt(root: JsonObject, path: readonly string[]): JsonObject {
  let current = root;
  for (const name of path) {
    const next: JsonObject = { ...(asObject(current[name]) ?? {}) };
    current[name] = next;
    current = next;
  }
  return current;
}

/**
 * A string map copied on its first write, so one the profile leaves alone stays shared with the
 * object it came from.
 */
class CopyOnWriteMap {
  private copy: Record<string, JsonValue> | undefined;
  constructor(private readonly source: Readonly<Record<string, JsonValue>>) {}
  /** Own keys only: a key such as `constructor` names no label, not Object.prototype's function. */
  get(key: string): JsonValue | undefined {
    const map = this.copy ?? this.source;
    return own(map, key);
  }
  set(key: string, value: JsonValue): void {
    this.copy ??= { ...this.source };
    putOwn(this.copy, key, value);
  }
  /** The written copy, when it was written and holds anything. */
  written(): Record<string, JsonValue> | undefined {
    return this.copy && Object.keys(this.copy).length > 0 ? this.copy : undefined;
  }
}

/**
 * The object with the profile applied, in Koordinator's order (labels, annotations, key
 * mappings, suffixes, schedulerName, qosClass, priorityClassName, koordinatorPriority, patch):
 * later steps and later profiles win. Pure: `object` is not modified. The result copies only the
 * objects on the paths it changes and shares the rest with `object`, so that an admission diff
 * against `object` skips everything the profile left alone; neither may be changed in place
 * while the other is in use. Throws a ProfileProblem, leaving nothing half-applied.
 */
export function applyProfile(
  object: JsonObject,
  profile: ColocationProfileView,
  target: ProfileTarget,
  state: StateSnapshot,
): JsonObject {
  const result: JsonObject = { ...object };
  const metadata = ownObjectAt(result, ['metadata']);
  const labels = new CopyOnWriteMap(asObject(metadata.labels) ?? {});
  const annotations = new CopyOnWriteMap(asObject(metadata.annotations) ?? {});

  for (const [key, value] of Object.entries(stringMap(profile, 'labels'))) labels.set(key, value);
  for (const [key, value] of Object.entries(stringMap(profile, 'annotations'))) annotations.set(key, value);
  for (const [from, to] of Object.entries(stringMap(profile, 'labelKeysMapping')))
    labels.set(to, labels.get(from) ?? '');
  for (const [from, to] of Object.entries(stringMap(profile, 'annotationKeysMapping')))
    annotations.set(to, annotations.get(from) ?? '');
  for (const [key, suffix] of Object.entries(stringMap(profile, 'labelSuffixes'))) {
    const value = labels.get(key);
    if (typeof value === 'string') labels.set(key, value + suffix);
  }

  // A Reservation without a template has no pod spec to set (Koordinator checks spec.template != nil).
  let ownPodSpec: JsonObject | undefined;
  const podSpec = (): JsonObject | undefined => {
    if (target.podSpecOptional && !objectAt(result, target.podSpecPath.slice(0, -1))) return undefined;
    ownPodSpec ??= ownObjectAt(result, target.podSpecPath);
    return ownPodSpec;
  };
  const schedulerName = optionalString(profile, 'schedulerName');
  const schedulerSpec = schedulerName ? podSpec() : undefined;
  if (schedulerSpec) schedulerSpec.schedulerName = schedulerName;

  const qosClass = optionalString(profile, 'qosClass');
  if (qosClass) labels.set(QOS_LABEL, qosClass);

  const priorityClassName = optionalString(profile, 'priorityClassName');
  const prioritySpec = priorityClassName ? podSpec() : undefined;
  if (prioritySpec) {
    const priorityClass = state.priorityClass(priorityClassName);
    if (!priorityClass) {
      throw problem(
        profile,
        `spec.priorityClassName: Not found: no PriorityClass ${JSON.stringify(priorityClassName)} exists`,
      );
    }
    prioritySpec.priorityClassName = priorityClassName;
    prioritySpec.priority = priorityClass.value;
    if (priorityClass.preemptionPolicy) prioritySpec.preemptionPolicy = priorityClass.preemptionPolicy;
    else delete prioritySpec.preemptionPolicy;
  }

  const koordinatorPriority = profile.spec.koordinatorPriority;
  if (koordinatorPriority !== undefined && koordinatorPriority !== null) {
    if (typeof koordinatorPriority !== 'number' || !Number.isInteger(koordinatorPriority)) {
      throw problem(profile, 'spec.koordinatorPriority: must be an integer');
    }
    labels.set(PRIORITY_LABEL, String(koordinatorPriority));
  }

  const newLabels = labels.written();
  if (newLabels) metadata.labels = newLabels;
  const newAnnotations = annotations.written();
  if (newAnnotations) metadata.annotations = newAnnotations;

  const patch = profile.spec.patch;
  if (patch === undefined || patch === null) return result;
  try {
    return strategicMergePatch(result, patch, target.patchSchema);
  } catch (error) {
    // Only a patch the profile's author got wrong is the profile's problem; anything else is a bug.
    if (!(error instanceof StrategicMergePatchError)) throw error;
    throw problem(profile, `spec.patch: ${error.message}`);
  }
}

/**
 * What the decision's log line and admission_rule_outcomes_total record: which profiles applied,
 * and reason invalid-profile when one had to be skipped, which admins can alert on.
 */
export function profileAudit(
  applied: readonly string[],
  warnings: readonly string[],
): Record<string, string> | undefined {
  if (applied.length === 0 && warnings.length === 0) return undefined;
  return {
    action: applied.length > 0 ? 'profiles-applied' : 'profiles-skipped',
    reason: warnings.length > 0 ? 'invalid-profile' : '',
    profiles: applied.join(','),
  };
}
