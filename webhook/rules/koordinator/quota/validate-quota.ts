/**
 * /validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota: Koordinator's quota-tree checks, in its
 * order and with its messages (each after the field it is about), plus two it lacks, run after
 * all of its own so that where Koordinator refuses, it is Koordinator's message that is shown: a
 * child's max may not exceed its parent's, and a quota may not become its own ancestor.
 * Upstream: quota_topology.go
 * and quota_topology_check.go; every message: docs/rules/validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota.md.
 *
 * Unlike Koordinator, validation never changes the store (no phantom quotas when a later
 * admission step refuses the object): the store follows the watch only, so a quota is known a few
 * milliseconds after it is stored. An UPDATE that changes a quota's place in the tree, or a
 * DELETE, within those milliseconds is refused as Koordinator refuses a quota its topology does
 * not know (a retry succeeds); any other update (status, other labels) is not checked at all.
 */
import type { Decision, JsonObject, JsonValue } from '../../../admission/types.js';
import type { Rule, StateSnapshot } from '../../../state.js';
import { MAX_WARNING_CHARS, truncate } from '../../../util/bounded-text.js';
import { asObject, readJsonText } from '../../../util/json.js';
import { own } from '../../../util/own.js';
import { canonicalQuantity, goQuantityString, writtenAs } from '../../../util/quantity.js';
import { quantityAt } from '../../shared/quantity-at.js';
import { failure, success, type Result } from '../../../util/result.js';
import { decisionOf, findings, PASSED, type Findings } from '../../shared/findings.js';
import { atField, FieldPath, type FieldError } from '../../shared/field-errors.js';
import { DEFAULT_QUOTA, QUOTA_ANNOTATIONS, QUOTA_LABELS, ROOT_QUOTA, SYSTEM_QUOTA } from './keys.js';
import { quotaView, type QuotaView } from './quota-view.js';

type Amounts = Map<string, bigint>;

const NAME = FieldPath.of('metadata', 'name');
const LABELS = FieldPath.of('metadata', 'labels');
const ANNOTATIONS = FieldPath.of('metadata', 'annotations');
const PARENT = LABELS.key(QUOTA_LABELS.parent);
const IS_PARENT = LABELS.key(QUOTA_LABELS.isParent);
const TREE_ID = LABELS.key(QUOTA_LABELS.treeId);
const NAMESPACES = ANNOTATIONS.key(QUOTA_ANNOTATIONS.namespaces);
const SHARED_WEIGHT = ANNOTATIONS.key(QUOTA_ANNOTATIONS.sharedWeight);
const STRICT_KEYS = ANNOTATIONS.key(QUOTA_ANNOTATIONS.maxStrictCheckResourceKeys);
const MAX = FieldPath.of('spec', 'max');
const MIN = FieldPath.of('spec', 'min');

/** Reads a resource list; a value that is no quantity, or too large a one, is an error naming `path[key]`. */
function amounts(list: Readonly<Record<string, unknown>>, path: FieldPath): Result<Amounts, FieldError> {
  const out: Amounts = new Map();
  for (const [key, value] of Object.entries(list)) {
    const read = quantityAt(value, path.key(key));
    if (!read.ok) return read;
    out.set(key, read.value);
  }
  return success(out);
}

/** A refusal with Koordinator's message, after the field it is about. */
const refused = (path: FieldPath, message: string): Findings => findings([atField(path, message)]);

/** A quantity of the quota, or of another one in the tree, that cannot be read. */
const unreadable = (read: { error: FieldError }): Findings => findings([read.error]);

const byteOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Go's %v of a slice of names, `[cpu memory]`, sorted (Go ranges over a map in random order). */
const goList = (keys: Iterable<string>): string =>
  truncate(`[${[...keys].sort(byteOrder).join(' ')}]`, MAX_WARNING_CHARS);

const negativeKeys = (list: Amounts): string[] =>
  [...list].filter(([, value]) => value < 0n).map(([key]) => key);

function annotationsOf(object: JsonObject): Record<string, JsonValue> {
  return asObject(asObject(object.metadata)?.annotations) ?? {};
}

/** Koordinator's validateQuotaSelfItem: a quota on its own. Passed, it gives the quota's bounds as read. */
function checkSelf(quota: QuotaView, object: JsonObject): Result<Bounds, Findings> {
  // As written, not as the view keeps them: the view drops values that are not quantities.
  const spec = asObject(object.spec);
  const maxRead = amounts(asObject(spec?.max) ?? {}, MAX);
  if (!maxRead.ok) return failure(unreadable(maxRead));
  const minRead = amounts(asObject(spec?.min) ?? {}, MIN);
  if (!minRead.ok) return failure(unreadable(minRead));
  const max = maxRead.value;
  const min = minRead.value;
  const refuse = (path: FieldPath, message: string): Result<never, Findings> =>
    failure(refused(path, message));
  if (negativeKeys(max).length > 0)
    return refuse(
      MAX,
      `${quota.name} quota.Spec.Max's value < 0, in dimensions :${goList(negativeKeys(max))}`,
    );
  if (negativeKeys(min).length > 0)
    return refuse(
      MIN,
      `${quota.name} quota.Spec.Min's value < 0, in dimensions :${goList(negativeKeys(min))}`,
    );

  const annotations = annotationsOf(object);
  const weightText = annotations[QUOTA_ANNOTATIONS.sharedWeight];
  if (typeof weightText === 'string' && weightText !== '') {
    const weightRead = readJsonText(weightText);
    // Koordinator returns Go's JSON error as it is; ours does not quote the parser either.
    if (!weightRead.ok) return refuse(SHARED_WEIGHT, 'not valid JSON');
    const weight = weightRead.value;
    if (typeof weight !== 'object' || weight === null || Array.isArray(weight))
      return refuse(SHARED_WEIGHT, 'must be a JSON object');
    const read = amounts(weight, SHARED_WEIGHT);
    if (!read.ok) return failure(unreadable(read));
    const parsed = read.value;
    if (negativeKeys(parsed).length > 0) {
      return refuse(
        SHARED_WEIGHT,
        `${quota.name} quota.Annotation[${QUOTA_ANNOTATIONS.sharedWeight}]'s value < 0, in dimension :${goList(negativeKeys(parsed))}`,
      );
    }
  }

  for (const key of [...min.keys()].sort(byteOrder)) {
    const value = min.get(key) ?? 0n;
    const upper = max.get(key);
    if (upper === undefined) {
      return refuse(
        MIN.key(key),
        `resourceKey ${key} of quota ${quota.name} is included in min, which is not included in max`,
      );
    }
    if (upper < value) {
      return refuse(
        MIN.key(key),
        `resourceKey ${key} of quota ${quota.name} min ${canonicalQuantity(own(quota.min, key) ?? '')} > max ${canonicalQuantity(own(quota.max, key) ?? '')}`,
      );
    }
  }

  const strictText = annotations[QUOTA_ANNOTATIONS.maxStrictCheckResourceKeys];
  if (typeof strictText === 'string' && strictText !== '') {
    const invalidKeys = (why: string): Result<never, Findings> =>
      refuse(
        STRICT_KEYS,
        `${quota.name} quota.Annotation[${QUOTA_ANNOTATIONS.maxStrictCheckResourceKeys}]'s value is invalid: ${why}`,
      );
    const keysRead = readJsonText(strictText);
    if (!keysRead.ok) return invalidKeys('not valid JSON');
    const keys = keysRead.value;
    if (!Array.isArray(keys) || !keys.every((key) => typeof key === 'string'))
      return invalidKeys('must be a JSON array of resource names');
    const usedList = asObject(asObject(object.status)?.used) ?? {};
    const usedRead = amounts(usedList, FieldPath.of('status', 'used'));
    if (!usedRead.ok) return failure(unreadable(usedRead));
    const used = usedRead.value;
    for (const key of keys) {
      const value = used.get(key);
      if (value === undefined) continue;
      const upper = max.get(key);
      if (upper === undefined) {
        return refuse(
          MAX.key(key),
          `resourceKey ${key} of quota ${quota.name} is included in used, which is not included in max but should check max >= used`,
        );
      }
      if (upper < value) {
        return refuse(
          MAX.key(key),
          `resourceKey ${key} of quota ${quota.name} max ${canonicalQuantity(own(quota.max, key) ?? '')} < used ${canonicalQuantity(writtenAs(own(usedList, key)))}`,
        );
      }
    }
  }
  return success({ name: quota.name, max, min });
}

/** True when `candidate` is `quota` or lies below it in the tree (following parents upward). */
function isSelfOrDescendant(state: StateSnapshot, quota: string, candidate: string): boolean {
  const seen = new Set<string>();
  for (let current: string | undefined = candidate; current && current !== ROOT_QUOTA;) {
    if (current === quota) return true;
    if (seen.has(current)) return false;
    seen.add(current);
    current = state.elasticQuota(current)?.parent;
  }
  return false;
}

function sumOfMin(quotas: readonly QuotaView[]): Result<Amounts, FieldError> {
  const total: Amounts = new Map();
  for (const quota of quotas) {
    const min = amounts(quota.min, MIN.of(`quota ${quota.name}`));
    if (!min.ok) return min;
    for (const [key, value] of min.value) total.set(key, (total.get(key) ?? 0n) + value);
  }
  return success(total);
}

/** Koordinator's LessThanOrEqualCompletely: every key of `a` within `b`, a key `b` lacks counting as 0. */
const withinCompletely = (a: Amounts, b: Amounts): boolean =>
  [...a].every(([key, value]) => value <= (b.get(key) ?? 0n));

const sameKeys = (a: Amounts, b: Amounts): boolean =>
  a.size === b.size && [...a.keys()].every((key) => b.has(key));

const keysIncluded = (outer: Amounts, inner: Amounts): boolean =>
  [...inner.keys()].every((key) => outer.has(key));

export interface QuotaValidationOptions {
  /**
   * Gate ElasticQuotaEnableUpdateResourceKey: a child's max keys need only be a subset of its
   * parent's, instead of the same set.
   */
  maxKeysSubset: boolean;
}

interface Bounds {
  name: string;
  max: Amounts;
  min: Amounts;
}

/** The bounds of another quota of the tree, as the store keeps them. */
function boundsOf(quota: QuotaView): Result<Bounds, FieldError> {
  const max = amounts(quota.max, MAX.of(`quota ${quota.name}`));
  if (!max.ok) return max;
  const min = amounts(quota.min, MIN.of(`quota ${quota.name}`));
  if (!min.ok) return min;
  return success({ name: quota.name, max: max.value, min: min.value });
}

/** Koordinator's checkSubAndParentGroupQuotaKey for one parent-child pair. */
function checkKeys(parent: Bounds, child: Bounds, self: string, options: QuotaValidationOptions): Findings {
  const failed = (message: string, path = MAX): Findings =>
    refused(
      path,
      `failed to check sub and parent group quotaKey, err: checkSubAndParentGroupQuotaKey failed: ${message}`,
    );
  // Koordinator names the pair differently when this quota is the child and when it is the parent.
  const isChild = child.name === self;
  if (options.maxKeysSubset) {
    if (!keysIncluded(parent.max, child.max))
      return failed(`${child.name}'s max keys are not all included in ${parent.name}'s`);
  } else if (!sameKeys(parent.max, child.max)) {
    return failed(
      isChild
        ? `${parent.name}'s max keys are not the same with ${child.name}'s`
        : `${child.name}'s max keys are not the same with ${parent.name}'s`,
    );
  }
  if (!keysIncluded(parent.min, child.min))
    return failed(`${child.name}'s min keys are not all included in ${parent.name}'s`, MIN);
  return PASSED;
}

/** Ours: a child's max within its parent's, in every resource both name. */
function checkMaxWithinParent(parent: Bounds, child: Bounds): Findings {
  for (const [key, value] of child.max) {
    const upper = parent.max.get(key);
    if (upper !== undefined && value > upper) {
      return refused(
        MAX,
        `resource ${key}: max ${goQuantityString(value, 'DecimalSI')} of ${child.name} exceeds max ${goQuantityString(upper, 'DecimalSI')} of its parent ${parent.name}`,
      );
    }
  }
  return PASSED;
}

/** Koordinator's validateQuotaTopology, then ours. `old` is the quota before an UPDATE. */
function checkTopology(
  state: StateSnapshot,
  quota: QuotaView,
  self: Bounds,
  old: QuotaView | undefined,
  options: QuotaValidationOptions,
): Findings {
  if (quota.name === ROOT_QUOTA) return PASSED;
  const children = state
    .quotaChildren(quota.name)
    .filter((child) => child.name !== quota.name)
    .sort((a, b) => byteOrder(a.name, b.name));

  // checkIsParentChange
  if (old && old.isParent !== quota.isParent) {
    if (!quota.isParent && children.length > 0)
      return refused(
        IS_PARENT,
        `quota has children, isParent is forbidden to modify as false, quotaName:${old.name}`,
      );
    if (quota.isParent && state.quotaPods(old.name).length > 0)
      return refused(
        IS_PARENT,
        `quota has bound pods, isParent is forbidden to modify as true, quotaName: ${old.name}`,
      );
  }

  // checkTreeID
  if (old && old.treeId !== quota.treeId)
    return refused(TREE_ID, `${quota.name} tree id changed [${old.treeId}] vs [${quota.treeId}]`);
  const parent = quota.parent === ROOT_QUOTA ? undefined : state.elasticQuota(quota.parent);
  if (parent && parent.treeId !== quota.treeId) {
    return refused(
      TREE_ID,
      `${quota.name} tree id is different from parent ${parent.name}, [${quota.treeId}] vs [${parent.treeId}]`,
    );
  }
  for (const child of children) {
    if (child.treeId !== quota.treeId) {
      return refused(
        TREE_ID,
        `${quota.name} tree id is different from child ${child.name}, [${quota.treeId}] vs [${child.treeId}]`,
      );
    }
  }

  // A leaf right under the root has nothing more to agree with.
  if (quota.parent === ROOT_QUOTA && !quota.isParent) return PASSED;

  // checkParentQuotaInfo
  if (quota.parent !== ROOT_QUOTA) {
    if (!parent)
      return refused(
        PARENT,
        `${quota.name} has parentName ${quota.parent} but not find parentInfo in quotaInfoMap`,
      );
    if (!parent.isParent)
      return refused(
        PARENT,
        `${quota.name} has parentName ${quota.parent} but the parentQuotaInfo's IsParent is false`,
      );
  }

  const parentRead = parent ? boundsOf(parent) : undefined;
  if (parentRead && !parentRead.ok) return unreadable(parentRead);
  const parentBounds = parentRead?.value;
  const childBounds: Bounds[] = [];
  for (const child of children) {
    const bounds = boundsOf(child);
    if (!bounds.ok) return unreadable(bounds);
    childBounds.push(bounds.value);
  }

  // checkSubAndParentGroupQuotaKey
  if (parentBounds) {
    const found = checkKeys(parentBounds, self, quota.name, options);
    if (found.errors.length > 0) return found;
  }
  for (const child of childBounds) {
    const found = checkKeys(self, child, quota.name, options);
    if (found.errors.length > 0) return found;
  }

  // checkMinQuotaValidate
  if (!quota.allowForceUpdate && !quota.isRoot) {
    if (parent && parentBounds) {
      const siblings = state.quotaChildren(parent.name).filter((sibling) => sibling.name !== quota.name);
      const sum = sumOfMin(siblings);
      if (!sum.ok) return unreadable(sum);
      const total = sum.value;
      for (const [key, value] of self.min) total.set(key, (total.get(key) ?? 0n) + value);
      if (!withinCompletely(total, parentBounds.min))
        return refused(
          MIN,
          `checkMinQuotaSum all brothers' MinQuota > parent MinQuota, parent: ${parent.name}`,
        );
    }
    if (children.length > 0) {
      const total = sumOfMin(children);
      if (!total.ok) return unreadable(total);
      if (!withinCompletely(total.value, self.min))
        return refused(
          MIN,
          `checkMinQuotaSum all children's MinQuota > current MinQuota, current: ${quota.name}`,
        );
    }
  }

  // Ours, after all of Koordinator's.
  if (isSelfOrDescendant(state, quota.name, quota.parent)) {
    return refused(
      PARENT,
      `quota ${quota.name} cannot hang under ${quota.parent}: that would make it its own ancestor`,
    );
  }
  if (parentBounds) {
    const found = checkMaxWithinParent(parentBounds, self);
    if (found.errors.length > 0) return found;
  }
  for (const child of childBounds) {
    const found = checkMaxWithinParent(self, child);
    if (found.errors.length > 0) return found;
  }
  return PASSED;
}

/** The fields whose change Koordinator checks on UPDATE; any other change is not validated at all. */
function treeFieldsEqual(a: QuotaView, b: QuotaView, before: JsonObject, after: JsonObject): boolean {
  const same = (x: Readonly<Record<string, string>>, y: Readonly<Record<string, string>>): boolean =>
    Object.keys(x).length === Object.keys(y).length &&
    Object.entries(x).every(([key, value]) => own(y, key) === value);
  const namespaces = (object: JsonObject): JsonValue | undefined =>
    annotationsOf(object)[QUOTA_ANNOTATIONS.namespaces];
  // Koordinator compares the labels as written (quotaFieldsCopy): `is-parent: "false"` added to a
  // quota without the label is a change, though it reads the same.
  const label = (object: JsonObject, key: string): JsonValue =>
    asObject(asObject(object.metadata)?.labels)?.[key] ?? '';
  const labelsEqual = [QUOTA_LABELS.parent, QUOTA_LABELS.isParent, QUOTA_LABELS.treeId].every(
    (key) => label(before, key) === label(after, key),
  );
  return (
    a.parent === b.parent &&
    a.isParent === b.isParent &&
    a.treeId === b.treeId &&
    labelsEqual &&
    namespaces(before) === namespaces(after) &&
    same(a.min, b.min) &&
    same(a.max, b.max)
  );
}

/** Koordinator's ValidDeleteQuota. */
function checkDelete(request: Parameters<Rule>[0], state: StateSnapshot): Findings {
  const quota = quotaView(request.oldObject ?? { metadata: { name: request.name ?? '' } });
  if ([SYSTEM_QUOTA, ROOT_QUOTA, DEFAULT_QUOTA].includes(quota.name))
    return refused(NAME, `can not delete quotaGroup :${quota.name}`);
  if (!state.elasticQuota(quota.name)) return refused(NAME, `not found quota:${quota.name}`);
  const children = state.quotaChildren(quota.name);
  if (children.length > 0)
    return refused(NAME, `delete quota failed, quota ${quota.name} has ${children.length} child quotas`);
  // Koordinator lists the pods labelled for the quota (its label.quotaName index): a pod counted
  // against the quota through its namespace does not hold the quota's name.
  const pods = state.quotaLabelledPods(quota.name);
  if (pods.length > 0) {
    // Koordinator names at most two pods, by name alone.
    const names = [...pods].sort(byteOrder).map((key) => key.slice(key.indexOf('/') + 1));
    const shown = names.length > 2 ? [names[0], names[1], '...'] : names;
    return refused(
      NAME,
      `delete quota failed, quota ${quota.name} has ${pods.length} child pods: ${shown.join(', ')}`,
    );
  }
  return PASSED;
}

/** Koordinator's ValidAddQuota. */
function checkCreate(
  state: StateSnapshot,
  quota: QuotaView,
  object: JsonObject,
  options: QuotaValidationOptions,
): Findings {
  if (state.elasticQuota(quota.name)) return refused(NAME, `AddQuota quota already exist:${quota.name}`);
  for (const namespace of quota.namespaces) {
    const bound = state.quotaBoundTo(namespace);
    if (bound) {
      return refused(
        NAMESPACES,
        `AddQuota quota ${quota.name}'s annotation namespace ${namespace} is already bound to quota ${bound.name}`,
      );
    }
  }
  const self = checkSelf(quota, object);
  return self.ok ? checkTopology(state, quota, self.value, undefined, options) : self.error;
}

/** Koordinator's ValidUpdateQuota; the quota before the update is the request's oldObject. */
function checkUpdate(
  state: StateSnapshot,
  quota: QuotaView,
  object: JsonObject,
  oldObject: JsonObject,
  options: QuotaValidationOptions,
): Findings {
  const old = quotaView(oldObject);
  if (treeFieldsEqual(old, quota, oldObject, object)) return PASSED;
  if (quota.name === SYSTEM_QUOTA || quota.name === ROOT_QUOTA)
    return refused(NAME, `invalid quota ${quota.name}`);
  for (const namespace of quota.namespaces) {
    const bound = state.quotaBoundTo(namespace);
    if (bound && bound.name !== quota.name) {
      return refused(
        NAMESPACES,
        `UpdadteQuota, quota ${quota.name} update namespaces, but namespace ${namespace} is already bound to quota ${bound.name}`,
      );
    }
  }
  if (!state.elasticQuota(quota.name))
    return refused(NAME, `UpdateQuota quota not exist in quotaInfoMap:${quota.name}`);
  const self = checkSelf(quota, object);
  return self.ok ? checkTopology(state, quota, self.value, old, options) : self.error;
}

function validate(
  request: Parameters<Rule>[0],
  state: StateSnapshot,
  options: QuotaValidationOptions,
): Findings {
  if (request.operation === 'DELETE') return checkDelete(request, state);
  if (request.object && request.operation === 'CREATE')
    return checkCreate(state, quotaView(request.object), request.object, options);
  if (request.object && request.oldObject && request.operation === 'UPDATE')
    return checkUpdate(state, quotaView(request.object), request.object, request.oldObject, options);
  return PASSED;
}

export function elasticQuotaValidator(options: QuotaValidationOptions): Rule {
  return (request, state): Decision => decisionOf(validate(request, state, options));
}
