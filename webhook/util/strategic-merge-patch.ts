/**
 * Kubernetes strategic merge patch, applied as apimachinery's
 * `strategicpatch.StrategicMergePatch(original, patch, v1.Pod{})` applies it, because Koordinator
 * applies a ClusterColocationProfile's schemaless `patch` that way and we must produce what it would.
 *
 * Go reads each field's strategy from struct tags; here a PatchSchema carries them by path.
 * Unlisted maps merge key by key (null deletes), unlisted lists are replaced wholesale.
 *
 * Where apimachinery's behaviour is an accident rather than a rule, this differs on purpose:
 * - A patch value for a field the original lacks is applied to an empty value, so directives and
 *   nulls inside it are resolved; apimachinery copies them into the result verbatim.
 * - A key with no schema entry is merged by the defaults; apimachinery fails when a key present on
 *   both sides has no Go field.
 * - `$deleteFromPrimitiveList` on a field that is not a merging list of primitives is an error;
 *   apimachinery would replace the field with the deletion list.
 */
import type { JsonObject, JsonValue } from '../admission/types.js';
import { own, putOwn } from './own.js';

/**
 * How one field is patched, as its Go tag says: `merge` with a `key` for a list of objects
 * (`patchStrategy:"merge" patchMergeKey:"key"`), `merge` without one for a list of primitives kept
 * as an ordered set, `replace` for a map or list taken from the patch as a whole.
 */
export type FieldStrategy =
  { readonly strategy: 'merge'; readonly key?: string } | { readonly strategy: 'replace' };

/**
 * Field strategies by path: dot-separated field names from the object's root, where a list's items
 * add no segment (`spec.containers.env`) and `*` stands for any one key. Treated as immutable once
 * used, since its compiled form is cached.
 */
export interface PatchSchema {
  readonly fields: Readonly<Record<string, FieldStrategy>>;
}

/** A patch that cannot be applied; `path` locates the offending part (empty for the root). */
export class StrategicMergePatchError extends Error {
  override readonly name = 'StrategicMergePatchError';
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`strategic merge patch: at ${path === '' ? '(root)' : path}: ${reason}`);
  }
}

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList/';
const SET_ELEMENT_ORDER = '$setElementOrder/';

function merge(key?: string): FieldStrategy {
  const strategy: FieldStrategy = key === undefined ? { strategy: 'merge' } : { strategy: 'merge', key };
  return Object.freeze(strategy);
}

function podFields(): Record<string, FieldStrategy> {
  // From the k8s.io/api core/v1 and apimachinery meta/v1 struct tags. The `retainKeys` half of
  // `merge,retainKeys` needs no entry: applying a patch honours `$retainKeys` wherever it appears.
  // Lists without a patchStrategy tag (tolerations, readinessGates, resizePolicy,
  // resources.claims, envFrom, the container status lists, ...) take the replace default.
  const fields: Record<string, FieldStrategy> = {
    'metadata.finalizers': merge(),
    'metadata.ownerReferences': merge('uid'),
    'spec.volumes': merge('name'),
    'spec.imagePullSecrets': merge('name'),
    'spec.hostAliases': merge('ip'),
    'spec.topologySpreadConstraints': merge('topologyKey'),
    'spec.schedulingGates': merge('name'),
    'spec.resourceClaims': merge('name'),
    'status.conditions': merge('type'),
    'status.podIPs': merge('ip'),
    'status.hostIPs': merge('ip'),
    'status.resourceClaimStatuses': merge('name'),
  };
  for (const list of ['initContainers', 'containers', 'ephemeralContainers']) {
    fields[`spec.${list}`] = merge('name');
    fields[`spec.${list}.ports`] = merge('containerPort');
    fields[`spec.${list}.env`] = merge('name');
    fields[`spec.${list}.volumeMounts`] = merge('mountPath');
    fields[`spec.${list}.volumeDevices`] = merge('devicePath');
  }
  return fields;
}

/** A v1 Pod as a whole: metadata, spec and status. */
export const POD_PATCH_SCHEMA: PatchSchema = Object.freeze({ fields: Object.freeze(podFields()) });

/**
 * The schema of an object that embeds a PodTemplateSpec (metadata + spec) at `at`, such as a
 * Koordinator Reservation at `['spec', 'template']`. The object's own metadata is an ObjectMeta
 * too, so the pod schema's metadata rules apply at the root as well.
 */
export function embedPodSchema(podSchema: PatchSchema, at: readonly string[]): PatchSchema {
  if (at.length === 0 || at.some((segment) => segment === '' || segment.includes('.')))
    throw new Error(`embedPodSchema: bad template path ${JSON.stringify(at)}`);
  const prefix = at.join('.');
  const fields: Record<string, FieldStrategy> = {};
  for (const [path, strategy] of Object.entries(podSchema.fields)) {
    if (path.startsWith('metadata.')) fields[path] = strategy;
    if (path.startsWith('metadata.') || path.startsWith('spec.')) fields[`${prefix}.${path}`] = strategy;
  }
  return Object.freeze({ fields: Object.freeze(fields) });
}

/**
 * `original` with `patch` applied. Neither input is changed. The result is copied only along the
 * maps and lists the patch touches and shares every other subtree of `original` by reference
 * (never anything of `patch`), so neither may be changed in place afterwards while the other is
 * in use. Throws StrategicMergePatchError for a patch that cannot be applied.
 */
export function strategicMergePatch(original: JsonObject, patch: JsonValue, schema: PatchSchema): JsonObject {
  if (!isObject(patch))
    throw new StrategicMergePatchError('', `the patch must be a JSON object, not ${describe(patch)}`);
  // Copying only what the patch reaches keeps a small patch to a huge object cheap, and lets the
  // caller's diff skip every shared subtree at once.
  return mergeMap(original, patch, [compile(schema)], '');
}

interface SchemaNode {
  strategy: FieldStrategy | undefined;
  readonly children: Map<string, SchemaNode>;
}

/** The schema nodes a value's path matches: an exact name and `*` may both apply. */
type Cursor = readonly SchemaNode[];

const compiled = new WeakMap<PatchSchema, SchemaNode>();

function compile(schema: PatchSchema): SchemaNode {
  const cached = compiled.get(schema);
  if (cached !== undefined) return cached;
  const root: SchemaNode = { strategy: undefined, children: new Map() };
  for (const [pattern, strategy] of Object.entries(schema.fields)) {
    const segments = pattern.split('.');
    if (segments.includes('')) throw new Error(`PatchSchema: bad field path ${JSON.stringify(pattern)}`);
    let node = root;
    for (const segment of segments) {
      let next = node.children.get(segment);
      if (next === undefined) {
        next = { strategy: undefined, children: new Map() };
        node.children.set(segment, next);
      }
      node = next;
    }
    node.strategy = strategy;
  }
  compiled.set(schema, root);
  return root;
}

function childOf(cursor: Cursor, key: string): Cursor {
  const out: SchemaNode[] = [];
  for (const node of cursor) {
    const exact = node.children.get(key);
    if (exact !== undefined) out.push(exact);
    const any = node.children.get('*');
    if (any !== undefined) out.push(any);
  }
  return out;
}

/** An exact name wins over `*`, because childOf lists it first. */
function strategyOf(cursor: Cursor): FieldStrategy | undefined {
  return cursor.find((node) => node.strategy !== undefined)?.strategy;
}

function mergeKeyOf(cursor: Cursor): string | undefined {
  const strategy = strategyOf(cursor);
  return strategy?.strategy === 'merge' ? strategy.key : undefined;
}

/**
 * `patch` merged into a shallow copy of `source`, which is left as it is; the copy's untouched
 * values are `source`'s own.
 */
function mergeMap(source: JsonObject, patch: JsonObject, at: Cursor, path: string): JsonObject {
  if (Object.hasOwn(patch, DIRECTIVE)) {
    const directive = patch[DIRECTIVE];
    if (directive === 'replace') {
      const rest: JsonObject = {};
      for (const [key, value] of Object.entries(patch)) if (key !== DIRECTIVE) putOwn(rest, key, value);
      return mergeMap({}, rest, at, path);
    }
    if (directive === 'delete') return {};
    throw new StrategicMergePatchError(
      fieldPath(path, DIRECTIVE),
      `unknown directive ${JSON.stringify(directive)}; a map takes "replace" or "delete"`,
    );
  }

  const original = copyOf(source);
  applyRetainKeys(original, patch, path);

  // apimachinery orders lists before merging anything else, and the ordered field is done then.
  const ordered = new Set<string>();
  for (const [key, value] of Object.entries(patch))
    if (key.startsWith(SET_ELEMENT_ORDER))
      ordered.add(applySetElementOrder(original, patch, key, value, at, path));

  for (const [key, value] of Object.entries(patch)) {
    if (key === RETAIN_KEYS || key.startsWith(SET_ELEMENT_ORDER) || ordered.has(key)) continue;
    if (key.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
      deleteFromPrimitiveList(original, key, value, at, path);
      continue;
    }
    if (value === null) {
      Reflect.deleteProperty(original, key);
      continue;
    }
    const fieldAt = childOf(at, key);
    const current = own(original, key);
    const p = fieldPath(path, key);
    putOwn(
      original,
      key,
      current === undefined ? materialize(value, fieldAt, p) : mergeValue(current, value, fieldAt, p),
    );
  }
  return original;
}

function mergeValue(current: JsonValue, patch: JsonValue, at: Cursor, path: string): JsonValue {
  const strategy = strategyOf(at);
  if (isObject(current) && isObject(patch))
    return strategy?.strategy === 'replace'
      ? materialize(patch, at, path)
      : mergeMap(current, patch, at, path);
  if (Array.isArray(current) && Array.isArray(patch) && strategy?.strategy === 'merge')
    return mergeList(current, patch, strategy.key, at, path);
  // Scalars, replaced lists, and values whose JSON type changed are taken from the patch.
  return materialize(patch, at, path);
}

/** A patch value applied to nothing, which resolves the directives and nulls inside it. */
function materialize(value: JsonValue, at: Cursor, path: string): JsonValue {
  if (isObject(value)) return mergeMap({}, value, at, path);
  if (!Array.isArray(value)) return value;
  const strategy = strategyOf(at);
  if (strategy?.strategy === 'merge') return mergeList([], value, strategy.key, at, path);
  return value.map((item, i) => materialize(item, at, `${path}[${i}]`));
}

function mergeList(
  original: JsonValue[],
  patch: readonly JsonValue[],
  key: string | undefined,
  at: Cursor,
  path: string,
): JsonValue[] {
  if (original.length === 0 && patch.length === 0) return original;
  return key === undefined
    ? mergePrimitiveList(original, patch, path)
    : mergeKeyedList(original, patch, key, at, path);
}

function mergePrimitiveList(original: JsonValue[], patch: readonly JsonValue[], path: string): JsonValue[] {
  patch.forEach((item, i) => {
    if (typeof item === 'object' && item !== null)
      throw new StrategicMergePatchError(
        `${path}[${i}]`,
        'a list merged as a set of primitives cannot hold objects or lists',
      );
  });
  if (original.some((item) => typeof item === 'object' && item !== null))
    throw new StrategicMergePatchError(
      path,
      'the existing list holds objects but merges as a set of primitives',
    );
  const merged: JsonValue[] = [];
  for (const item of [...original, ...patch]) if (!merged.some((seen) => seen === item)) merged.push(item);
  const inPatch = (item: JsonValue) => patch.some((p) => p === item);
  return normalizeOrder(
    merged.filter(inPatch),
    merged.filter((item) => !inPatch(item)),
    patch,
    original,
    (item) => item,
  );
}

function mergeKeyedList(
  original: JsonValue[],
  patch: readonly JsonValue[],
  key: string,
  at: Cursor,
  path: string,
): JsonValue[] {
  let base: JsonObject[] = original.map((item, i) => {
    if (!isObject(item)) throw new StrategicMergePatchError(path, `existing item ${i} is not an object`);
    return item;
  });

  // `$patch` items act on the list itself and are not items.
  const items: { readonly item: JsonObject; readonly path: string }[] = [];
  let replace = false;
  for (const [i, item] of patch.entries()) {
    const p = `${path}[${i}]`;
    if (!isObject(item))
      throw new StrategicMergePatchError(p, `expected an object carrying the merge key "${key}"`);
    if (!Object.hasOwn(item, key) && !Object.hasOwn(item, DIRECTIVE))
      throw new StrategicMergePatchError(p, `missing the merge key "${key}"`);
    if (!Object.hasOwn(item, DIRECTIVE)) {
      items.push({ item, path: p });
      continue;
    }
    const directive = item[DIRECTIVE];
    if (directive === 'delete') {
      if (!Object.hasOwn(item, key))
        throw new StrategicMergePatchError(p, `"$patch": "delete" needs the merge key "${key}"`);
      base = base.filter((existing) => !sameValue(existing[key], item[key]));
    } else if (directive === 'replace') {
      replace = true;
    } else {
      throw new StrategicMergePatchError(
        fieldPath(p, DIRECTIVE),
        `unknown directive ${JSON.stringify(directive)}; a list item takes "delete" or "replace"`,
      );
    }
  }

  if (replace) return items.map(({ item, path: p }) => mergeMap({}, item, at, p));

  base.forEach((existing, i) => {
    if (!Object.hasOwn(existing, key))
      throw new StrategicMergePatchError(path, `existing item ${i} lacks the merge key "${key}"`);
  });
  const serverOrder = [...base];
  for (const { item, path: p } of items) {
    const index = base.findIndex((existing) => sameValue(existing[key], item[key]));
    const existing = base[index];
    if (existing === undefined) base.push(mergeMap({}, item, at, p));
    else base[index] = mergeMap(existing, item, at, p);
  }

  const patchOrder = items.map(({ item }) => item);
  const inPatch = (existing: JsonObject) => patchOrder.some((item) => sameValue(item[key], existing[key]));
  return normalizeOrder(
    base.filter(inPatch),
    base.filter((existing) => !inPatch(existing)),
    patchOrder,
    serverOrder,
    (item) => keyOf(item, key, path),
  );
}

type Identity = (item: JsonValue) => JsonValue;

/**
 * apimachinery's normalizeElementOrder: patch items sorted by `patchOrder`, the others by
 * `serverOrder`, then interleaved, an existing item going first only when it stood before the next
 * patch item in `serverOrder`. So an item new to the list lands ahead of the existing items that
 * follow the last matched one: a lone new container goes first, not last.
 */
function normalizeOrder(
  patchItems: readonly JsonValue[],
  serverOnly: readonly JsonValue[],
  patchOrder: readonly JsonValue[],
  serverOrder: readonly JsonValue[],
  id: Identity,
): JsonValue[] {
  const position = (order: readonly JsonValue[], item: JsonValue): number => {
    const wanted = id(item);
    return order.findIndex((other) => sameValue(id(other), wanted));
  };
  const sortBy = (items: readonly JsonValue[], order: readonly JsonValue[]): JsonValue[] =>
    items
      .map((item, i) => ({ item, i, rank: position(order, item) }))
      .sort((a, b) => a.rank - b.rank || a.i - b.i)
      .map(({ item }) => item);

  const left = sortBy(serverOnly, serverOrder);
  const right = sortBy(patchItems, patchOrder);
  const out: JsonValue[] = [];
  let i = 0;
  let j = 0;
  for (;;) {
    const l = left[i];
    const r = right[j];
    if (l === undefined && r === undefined) return out;
    let takeLeft = r === undefined;
    if (l !== undefined && r !== undefined) {
      const li = position(serverOrder, l);
      const ri = position(serverOrder, r);
      takeLeft = li >= 0 && ri >= 0 && li < ri;
    }
    if (takeLeft && l !== undefined) {
      out.push(l);
      i++;
    } else if (r !== undefined) {
      out.push(r);
      j++;
    }
  }
}

function applyRetainKeys(original: JsonObject, patch: JsonObject, path: string): void {
  if (!Object.hasOwn(patch, RETAIN_KEYS)) return;
  const p = fieldPath(path, RETAIN_KEYS);
  const listed = patch[RETAIN_KEYS];
  if (!Array.isArray(listed)) throw new StrategicMergePatchError(p, 'expected a list of field names');
  const keep = new Set<string>();
  for (const name of listed) {
    if (typeof name !== 'string') throw new StrategicMergePatchError(p, 'expected a list of field names');
    keep.add(name);
  }
  for (const [key, value] of Object.entries(patch)) {
    if (key === RETAIN_KEYS || value === null) continue;
    if (key.startsWith(DELETE_FROM_PRIMITIVE_LIST) || key.startsWith(SET_ELEMENT_ORDER)) continue;
    if (!keep.has(key))
      throw new StrategicMergePatchError(p, `the patch sets "${key}", which $retainKeys does not list`);
  }
  for (const key of Object.keys(original)) if (!keep.has(key)) Reflect.deleteProperty(original, key);
}

function deleteFromPrimitiveList(
  original: JsonObject,
  directiveKey: string,
  value: JsonValue,
  at: Cursor,
  path: string,
): void {
  const p = fieldPath(path, directiveKey);
  const field = directiveKey.slice(DELETE_FROM_PRIMITIVE_LIST.length);
  if (field === '') throw new StrategicMergePatchError(p, 'names no field');
  if (!Array.isArray(value)) throw new StrategicMergePatchError(p, 'expected a list of values to delete');
  const strategy = strategyOf(childOf(at, field));
  if (strategy?.strategy !== 'merge' || strategy.key !== undefined)
    throw new StrategicMergePatchError(p, `"${field}" is not a list merged as a set of primitives`);
  const current = own(original, field);
  // Nothing to delete from; apimachinery would store the deletion list as the field instead.
  if (!Array.isArray(current)) return;
  putOwn(
    original,
    field,
    current.filter((item) => !value.some((gone) => sameValue(gone, item))),
  );
}

/** Applies `$setElementOrder/<field>` with the patch's own `<field>`; returns the field's name. */
function applySetElementOrder(
  original: JsonObject,
  patch: JsonObject,
  directiveKey: string,
  order: JsonValue,
  at: Cursor,
  path: string,
): string {
  const p = fieldPath(path, directiveKey);
  const field = directiveKey.slice(SET_ELEMENT_ORDER.length);
  if (field === '') throw new StrategicMergePatchError(p, 'names no field');
  if (!Array.isArray(order)) throw new StrategicMergePatchError(p, 'expected a list');
  const fieldAt = childOf(at, field);
  const key = mergeKeyOf(fieldAt);
  const fp = fieldPath(path, field);
  const id: Identity = key === undefined ? (item) => item : (item) => keyOf(item, key, fp);
  order.forEach((item, i) => {
    if (key !== undefined) keyOf(item, key, `${p}[${i}]`);
  });

  const currentList = own(original, field);
  const patchList = own(patch, field);
  if (currentList !== undefined && !Array.isArray(currentList))
    throw new StrategicMergePatchError(fp, `the existing value is not a list for ${directiveKey} to order`);
  if (patchList !== undefined && !Array.isArray(patchList))
    throw new StrategicMergePatchError(fp, `expected a list alongside ${directiveKey}`);
  if (patchList !== undefined) checkPatchAgainstOrder(patchList, order, field, id, p);

  let merged: JsonValue;
  if (patchList === undefined) {
    if (currentList === undefined) return field;
    merged = currentList;
  } else {
    merged =
      currentList === undefined
        ? materialize(patchList, fieldAt, fp)
        : mergeValue(currentList, patchList, fieldAt, fp);
  }
  // Merging two lists always yields a list; this only narrows the type.
  if (!Array.isArray(merged)) return field;

  const inOrder = (item: JsonValue) => {
    const wanted = id(item);
    return order.some((other) => sameValue(id(other), wanted));
  };
  putOwn(
    original,
    field,
    normalizeOrder(
      merged.filter(inOrder),
      merged.filter((item) => !inOrder(item)),
      order,
      currentList ?? [],
      id,
    ),
  );
  return field;
}

/** The patch's items, deletions aside, must appear in `$setElementOrder` in the same order. */
function checkPatchAgainstOrder(
  patchList: readonly JsonValue[],
  order: readonly JsonValue[],
  field: string,
  id: Identity,
  path: string,
): void {
  if (order.length === 0) return;
  const items = patchList.filter((item) => !(isObject(item) && Object.hasOwn(item, DIRECTIVE)));
  let i = 0;
  for (const wanted of order) {
    const item = items[i];
    if (item === undefined) return;
    if (sameValue(id(item), id(wanted))) i++;
  }
  if (i < items.length)
    throw new StrategicMergePatchError(
      path,
      `"${field}" in the patch has items that this list leaves out or puts in another order`,
    );
}

function keyOf(item: JsonValue, key: string, path: string): JsonValue {
  const value = isObject(item) ? own(item, key) : undefined;
  if (value === undefined) throw new StrategicMergePatchError(path, `an item lacks the merge key "${key}"`);
  return value;
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A shallow copy; spreading defines own data properties, so `__proto__` stays an ordinary key. */
function copyOf(source: JsonObject): JsonObject {
  return { ...source };
}

function sameValue(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  return canonical(a) === canonical(b);
}

function canonical(value: JsonValue): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (!isObject(value)) return JSON.stringify(value);
  const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(',')}}`;
}

function fieldPath(path: string, key: string): string {
  if (/^[A-Za-z_$][\w$]*$/.test(key)) return path === '' ? key : `${path}.${key}`;
  return `${path}[${JSON.stringify(key)}]`;
}

function describe(value: JsonValue): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'a list' : `a ${typeof value}`;
}
