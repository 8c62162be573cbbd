/**
 * /validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota: Koordinator's quota-tree checks
 * (spec §5.3-§5.5), plus what the seeds promise and Koordinator omits: a child's max may not
 * exceed its parent's, and a quota may not become its own ancestor.
 *
 * Unlike Koordinator, validation never changes the store (no phantom quotas when a later
 * admission step refuses the object): the store follows the watch only. The previous state of
 * an UPDATE comes from the request's oldObject, so a store a few milliseconds behind cannot
 * refuse an update of a quota it has not seen yet.
 */
import { deny } from '../../admission/decisions.js';
import type { Decision, JsonObject, JsonValue } from '../../admission/types.js';
import type { Rule, StateSnapshot } from '../../state.js';
import { asObject, parseJsonText } from '../../util/json.js';
import { formatQuantity, QuantityFieldError, quantityAt, writtenAs } from '../../util/quantity.js';
import { DEFAULT_QUOTA, QUOTA_ANNOTATIONS, QUOTA_LABELS, ROOT_QUOTA, SYSTEM_QUOTA } from './keys.js';
import { quotaView, type QuotaView } from './quota-view.js';

/** A refusal: the field path, then what is wrong. */
class QuotaError extends Error {}

const fail = (path: string, message: string): never => {
  throw new QuotaError(`${path}: ${message}`);
};

type Amounts = Map<string, bigint>;

/** Reads a resource list; a value that is no quantity, or too large a one, refuses naming `path[key]`. */
function amounts(list: Readonly<Record<string, unknown>>, path: string): Amounts {
  const out: Amounts = new Map();
  for (const [key, value] of Object.entries(list)) {
    try {
      out.set(key, quantityAt(value, `${path}[${key}]`));
    } catch (error) {
      if (!(error instanceof QuantityFieldError)) throw error;
      throw new QuotaError(error.message);
    }
  }
  return out;
}

function sameKeys(a: Amounts, b: Amounts): boolean {
  return a.size === b.size && [...a.keys()].every((key) => b.has(key));
}

function subsetOf(a: Amounts, b: Amounts): boolean {
  return [...a.keys()].every((key) => b.has(key));
}

const keyList = (keys: Iterable<string>): string => `[${[...keys].sort().join(' ')}]`;

function annotationsOf(object: JsonObject): Record<string, JsonValue> {
  const metadata = object.metadata;
  const annotations =
    typeof metadata === 'object' && metadata !== null && !Array.isArray(metadata)
      ? metadata.annotations
      : undefined;
  return typeof annotations === 'object' && annotations !== null && !Array.isArray(annotations)
    ? annotations
    : {};
}

/** §5.4: a quota on its own. */
function checkSelf(quota: QuotaView, object: JsonObject): void {
  // As written, not as the view keeps them: the view drops values that are not quantities.
  const spec = asObject(object.spec);
  const max = amounts(asObject(spec?.max) ?? {}, 'spec.max');
  const min = amounts(asObject(spec?.min) ?? {}, 'spec.min');
  for (const [label, list, path] of [
    ['Max', max, 'spec.max'],
    ['Min', min, 'spec.min'],
  ] as const) {
    const negative = [...list].filter(([, value]) => value < 0n).map(([key]) => key);
    if (negative.length > 0)
      fail(path, `quota ${quota.name} has a negative ${label} in dimensions ${keyList(negative)}`);
  }

  const annotations = annotationsOf(object);
  const weightText = annotations[QUOTA_ANNOTATIONS.sharedWeight];
  const weightPath = `metadata.annotations[${QUOTA_ANNOTATIONS.sharedWeight}]`;
  if (typeof weightText === 'string' && weightText !== '') {
    let weight: unknown;
    try {
      weight = parseJsonText(weightText);
    } catch {
      fail(weightPath, 'not valid JSON');
    }
    if (typeof weight !== 'object' || weight === null || Array.isArray(weight))
      fail(weightPath, 'must be a JSON object');
    const parsed = amounts(weight as Record<string, unknown>, weightPath);
    const negative = [...parsed].filter(([, value]) => value < 0n).map(([key]) => key);
    if (negative.length > 0)
      fail(weightPath, `quota ${quota.name} has a negative shared weight in dimensions ${keyList(negative)}`);
  }

  for (const [key, value] of min) {
    const upper = max.get(key);
    if (upper === undefined) {
      fail(`spec.min[${key}]`, `resource ${key} of quota ${quota.name} is in min but not in max`);
    } else if (upper < value) {
      fail(
        `spec.min[${key}]`,
        `resource ${key} of quota ${quota.name}: min ${formatQuantity(value, quota.min[key])} > max ${formatQuantity(upper, quota.max[key])}`,
      );
    }
  }

  const strictText = annotations[QUOTA_ANNOTATIONS.maxStrictCheckResourceKeys];
  if (typeof strictText === 'string' && strictText !== '') {
    const strictPath = `metadata.annotations[${QUOTA_ANNOTATIONS.maxStrictCheckResourceKeys}]`;
    let keys: unknown;
    try {
      keys = parseJsonText(strictText);
    } catch {
      fail(strictPath, 'not valid JSON');
    }
    if (!Array.isArray(keys) || !keys.every((key) => typeof key === 'string'))
      fail(strictPath, 'must be a JSON array of resource names');
    const usedList = asObject(asObject(object.status)?.used) ?? {};
    const used = amounts(usedList, 'status.used');
    for (const key of keys as string[]) {
      const value = used.get(key);
      if (value === undefined) continue;
      const upper = max.get(key);
      if (upper === undefined)
        fail(
          `spec.max[${key}]`,
          `resource ${key} of quota ${quota.name} is in use but not in max, and must be checked against max`,
        );
      else if (upper < value) {
        fail(
          `spec.max[${key}]`,
          `resource ${key} of quota ${quota.name}: max ${formatQuantity(upper, quota.max[key])} < used ${formatQuantity(value, writtenAs(usedList[key]))}`,
        );
      }
    }
  }
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

function sum(quotas: readonly QuotaView[], path: string): Amounts {
  const total: Amounts = new Map();
  for (const quota of quotas) {
    for (const [key, value] of amounts(quota.min, `${path} (quota ${quota.name})`))
      total.set(key, (total.get(key) ?? 0n) + value);
  }
  return total;
}

/** §5.5, plus the max-within-parent and no-cycle checks. */
export interface QuotaValidationOptions {
  /**
   * Gate ElasticQuotaEnableUpdateResourceKey: a child's max keys need only be a subset of its
   * parent's, instead of the same set.
   */
  maxKeysSubset: boolean;
}

function checkTopology(
  state: StateSnapshot,
  quota: QuotaView,
  old: QuotaView | undefined,
  options: QuotaValidationOptions,
): void {
  if (quota.name === ROOT_QUOTA) return;
  const parentPath = `metadata.labels[${QUOTA_LABELS.parent}]`;
  const children = state.quotaChildren(quota.name).filter((child) => child.name !== quota.name);

  if (old && old.isParent && !quota.isParent && children.length > 0) {
    fail(
      `metadata.labels[${QUOTA_LABELS.isParent}]`,
      `quota ${quota.name} has child quotas, so it must stay a parent`,
    );
  }
  if (old && !old.isParent && quota.isParent && state.quotaPods(quota.name).length > 0) {
    fail(
      `metadata.labels[${QUOTA_LABELS.isParent}]`,
      `quota ${quota.name} has pods, so it cannot become a parent`,
    );
  }
  if (old && old.treeId !== quota.treeId) {
    fail(
      `metadata.labels[${QUOTA_LABELS.treeId}]`,
      `quota ${quota.name}: the tree id is immutable ([${old.treeId}] → [${quota.treeId}])`,
    );
  }
  if (isSelfOrDescendant(state, quota.name, quota.parent)) {
    fail(
      parentPath,
      `quota ${quota.name} cannot hang under ${quota.parent}: that would make it its own ancestor`,
    );
  }
  const parent = quota.parent === ROOT_QUOTA ? undefined : state.elasticQuota(quota.parent);
  if (parent && parent.treeId !== quota.treeId) {
    fail(
      `metadata.labels[${QUOTA_LABELS.treeId}]`,
      `quota ${quota.name}: tree id [${quota.treeId}] differs from parent ${parent.name}'s [${parent.treeId}]`,
    );
  }
  for (const child of children) {
    if (child.treeId !== quota.treeId) {
      fail(
        `metadata.labels[${QUOTA_LABELS.treeId}]`,
        `quota ${quota.name}: tree id [${quota.treeId}] differs from child ${child.name}'s [${child.treeId}]`,
      );
    }
  }
  if (quota.parent === ROOT_QUOTA && !quota.isParent) return;

  if (quota.parent !== ROOT_QUOTA) {
    if (!parent) fail(parentPath, `quota ${quota.name}: parent quota ${quota.parent} does not exist`);
    else if (!parent.isParent) {
      fail(
        parentPath,
        `quota ${quota.name}: parent quota ${parent.name} is not a parent quota (label ${QUOTA_LABELS.isParent}=true)`,
      );
    }
  }

  const max = amounts(quota.max, 'spec.max');
  const min = amounts(quota.min, 'spec.min');
  const against = (
    upperName: string,
    upperMax: Amounts,
    upperMin: Amounts,
    lowerName: string,
    lowerMax: Amounts,
    lowerMin: Amounts,
    path: string,
  ): void => {
    if (options.maxKeysSubset ? !subsetOf(lowerMax, upperMax) : !sameKeys(upperMax, lowerMax))
      fail(
        path,
        `the max keys of ${lowerName} ${keyList(lowerMax.keys())} are not ${options.maxKeysSubset ? 'all in' : 'the same as'} its parent ${upperName}'s ${keyList(upperMax.keys())}`,
      );
    if (!subsetOf(lowerMin, upperMin))
      fail(
        path,
        `the min keys of ${lowerName} ${keyList(lowerMin.keys())} are not all in its parent ${upperName}'s ${keyList(upperMin.keys())}`,
      );
    for (const [key, value] of lowerMax) {
      const upper = upperMax.get(key);
      if (upper !== undefined && value > upper) {
        fail(
          path,
          `resource ${key}: max ${formatQuantity(value)} of ${lowerName} exceeds max ${formatQuantity(upper)} of its parent ${upperName}`,
        );
      }
    }
  };
  if (parent) {
    against(
      parent.name,
      amounts(parent.max, 'parent spec.max'),
      amounts(parent.min, 'parent spec.min'),
      quota.name,
      max,
      min,
      'spec.max',
    );
  }
  for (const child of children) {
    against(
      quota.name,
      max,
      min,
      child.name,
      amounts(child.max, `child ${child.name} spec.max`),
      amounts(child.min, `child ${child.name} spec.min`),
      'spec.max',
    );
  }

  if (quota.allowForceUpdate || quota.isRoot) return;
  if (parent) {
    const siblings = state.quotaChildren(parent.name).filter((sibling) => sibling.name !== quota.name);
    const total = sum([...siblings, quota], 'spec.min');
    const parentMin = amounts(parent.min, 'parent spec.min');
    for (const [key, value] of total) {
      if (value > (parentMin.get(key) ?? 0n)) {
        fail(
          'spec.min',
          `the min of all children of ${parent.name} in ${key} (${formatQuantity(value)}) exceeds its min (${formatQuantity(parentMin.get(key) ?? 0n)})`,
        );
      }
    }
  }
  if (children.length > 0) {
    const total = sum(children, 'child spec.min');
    for (const [key, value] of total) {
      if (value > (min.get(key) ?? 0n)) {
        fail(
          'spec.min',
          `the min of the children of ${quota.name} in ${key} (${formatQuantity(value)}) exceeds its min (${formatQuantity(min.get(key) ?? 0n)})`,
        );
      }
    }
  }
}

function checkNamespaces(state: StateSnapshot, quota: QuotaView): void {
  for (const namespace of quota.namespaces) {
    const bound = state.quotaBoundTo(namespace);
    if (bound && bound.name !== quota.name) {
      fail(
        `metadata.annotations[${QUOTA_ANNOTATIONS.namespaces}]`,
        `namespace ${namespace} is already bound to quota ${bound.name}`,
      );
    }
  }
}

/** Fields whose change needs the full check on UPDATE (others, like the shared weight, Koordinator leaves alone). */
function treeFieldsEqual(a: QuotaView, b: QuotaView): boolean {
  const same = (x: Readonly<Record<string, string>>, y: Readonly<Record<string, string>>): boolean =>
    Object.keys(x).length === Object.keys(y).length &&
    Object.entries(x).every(([key, value]) => y[key] === value);
  return (
    a.parent === b.parent &&
    a.isParent === b.isParent &&
    a.treeId === b.treeId &&
    a.namespaces.join('\0') === b.namespaces.join('\0') &&
    same(a.min, b.min) &&
    same(a.max, b.max)
  );
}

function validate(request: Parameters<Rule>[0], state: StateSnapshot, options: QuotaValidationOptions): void {
  if (request.operation === 'DELETE') {
    const quota = quotaView(request.oldObject ?? { metadata: { name: request.name ?? '' } });
    if ([SYSTEM_QUOTA, ROOT_QUOTA, DEFAULT_QUOTA].includes(quota.name))
      fail('metadata.name', `quota ${quota.name} cannot be deleted`);
    const children = state.quotaChildren(quota.name);
    if (children.length > 0) {
      fail(
        'metadata.name',
        `quota ${quota.name} still has ${children.length} child quota(s): ${children
          .map((c) => c.name)
          .sort()
          .join(', ')}`,
      );
    }
    const pods = state.quotaPods(quota.name);
    if (pods.length > 0) {
      const shown = pods.slice(0, 2).join(', ') + (pods.length > 2 ? ', ...' : '');
      fail('metadata.name', `quota ${quota.name} still has ${pods.length} pod(s): ${shown}`);
    }
    return;
  }
  const object = request.object;
  if (!object) return;
  const quota = quotaView(object);
  if (request.operation === 'CREATE') {
    const existing = state.elasticQuota(quota.name);
    if (existing)
      fail(
        'metadata.name',
        `quota ${quota.name} already exists (in namespace ${existing.namespace}); quota names are unique across namespaces`,
      );
    checkNamespaces(state, quota);
    checkSelf(quota, object);
    checkTopology(state, quota, undefined, options);
    return;
  }
  if (request.operation !== 'UPDATE' || !request.oldObject) return;
  const old = quotaView(request.oldObject);
  if (treeFieldsEqual(old, quota)) return;
  if (quota.name === SYSTEM_QUOTA || quota.name === ROOT_QUOTA)
    fail('metadata.name', `quota ${quota.name} cannot be modified`);
  checkNamespaces(state, quota);
  checkSelf(quota, object);
  checkTopology(state, quota, old, options);
}

export function elasticQuotaValidator(options: QuotaValidationOptions): Rule {
  return (request, state): Decision => {
    try {
      validate(request, state, options);
      return { allowed: true };
    } catch (error) {
      if (error instanceof QuotaError) return deny(error.message, 400, 'BadRequest');
      throw error;
    }
  };
}

/** The validator with Koordinator's default gates. */
export const validateElasticQuota: Rule = elasticQuotaValidator({ maxKeysSubset: false });
