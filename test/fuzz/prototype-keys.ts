/**
 * Keys a user may choose that a plain JavaScript object already answers for: `Object.prototype`'s
 * own names, and `__proto__`, which JSON.parse makes an own property but an assignment turns into
 * a change of prototype. In a Go map each is only a key; here each must be too. The fuzzer, the
 * property tests and the differential suite put them into every map-shaped field of a review:
 * objects in the review, and objects in the JSON or YAML that users write into strings.
 */
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import type { JsonObject, JsonValue } from '../../webhook/admission/types.js';

export const PROTOTYPE_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'hasOwnProperty',
  'toString',
  'valueOf',
  '__defineGetter__',
] as const;

export type PrototypeKey = (typeof PROTOTYPE_KEYS)[number];

type Segment = string | number;

/** Sets `key` as an own, enumerable property, as JSON.parse would (never through `__proto__`'s setter). */
export function putOwn(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `value`'s own entries (arrays by index), as JSON.stringify sees them. */
function entriesOf(value: object): [Segment, unknown][] {
  return Array.isArray(value) ? value.map((item, i): [Segment, unknown] => [i, item]) : Object.entries(value);
}

/** Paths of every map under `root` (root included), outermost first. */
function mapPaths(root: unknown, prefix: Segment[] = []): Segment[][] {
  const out: Segment[][] = [];
  const walk = (value: unknown, path: Segment[]): void => {
    if (typeof value !== 'object' || value === null) return;
    if (isMap(value)) out.push(path);
    for (const [key, child] of entriesOf(value)) walk(child, [...path, key]);
  };
  walk(root, prefix);
  return out;
}

function at(root: unknown, path: readonly Segment[]): unknown {
  let current = root;
  for (const segment of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = Object.hasOwn(current, segment) ? (current as Record<Segment, unknown>)[segment] : undefined;
  }
  return current;
}

/** A copy of `value` in which every map is built by putOwn: `__proto__` entries stay entries. */
function copy<T>(value: T): T {
  if (Array.isArray(value)) return value.map(copy) as T;
  if (!isMap(value)) return value;
  const out = {};
  for (const [key, item] of Object.entries(value)) putOwn(out, key, copy(item));
  return out as T;
}

/** What a string holds when it is a JSON object or list, or a YAML map (a ConfigMap's YAML file). */
function structuredText(text: string): { value: object; write: (value: object) => string } | undefined {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      const value: unknown = JSON.parse(text);
      if (typeof value === 'object' && value !== null) return { value, write: (v) => JSON.stringify(v) };
    } catch {
      return undefined;
    }
  }
  if (!text.includes('\n')) return undefined;
  try {
    const value: unknown = parseYaml(text);
    if (isMap(value)) return { value, write: (v) => stringifyYaml(v) };
  } catch {
    // Not YAML: no map inside.
  }
  return undefined;
}

/** One map of a review a key can be put into. */
export interface MapSite {
  /** Where, as `object.spec.max` or `object.metadata.annotations[k] (JSON) spec`. */
  where: string;
  /** A copy of the request with `key` put into this map. */
  withKey: (key: string) => JsonObject;
}

const show = (path: readonly Segment[]): string =>
  path.map((segment) => (typeof segment === 'number' ? `[${segment}]` : `.${segment}`)).join('');

/** A value like the map's others (the first one's), so the key reads as one more of its kind. */
function siblingValue(map: Record<string, unknown>): unknown {
  const first = Object.values(map)[0];
  return first === undefined ? '1' : copy(first);
}

/**
 * Every map of `request.object` and `request.oldObject`, and every map inside the JSON and YAML
 * their strings hold, each as a site a key can be put into.
 */
export function mapSites(request: JsonObject): MapSite[] {
  const sites: MapSite[] = [];
  for (const top of ['object', 'oldObject'] as const) {
    const root = request[top];
    if (!isMap(root)) continue;
    for (const path of mapPaths(root, [top])) {
      sites.push({
        where: show(path).slice(1),
        withKey: (key) => {
          const out = copy(request);
          const map = at(out, path) as Record<string, unknown>;
          putOwn(map, key, siblingValue(map));
          return out;
        },
      });
    }
    const strings: Segment[][] = [];
    const walk = (value: unknown, path: Segment[]): void => {
      if (typeof value === 'string') strings.push(path);
      else if (typeof value === 'object' && value !== null)
        for (const [key, child] of entriesOf(value)) walk(child, [...path, key]);
    };
    walk(root, [top]);
    for (const stringPath of strings) {
      const parsed = structuredText(at(request, stringPath) as string);
      if (!parsed) continue;
      for (const inner of mapPaths(parsed.value)) {
        sites.push({
          where: `${show(stringPath).slice(1)} (text)${show(inner)}`,
          withKey: (key) => {
            const out = copy(request);
            const value = copy(parsed.value);
            const map = at(value, inner) as Record<string, unknown>;
            putOwn(map, key, siblingValue(map));
            const holder = at(out, stringPath.slice(0, -1)) as Record<Segment, unknown>;
            holder[stringPath[stringPath.length - 1] as Segment] = parsed.write(value);
            return out;
          },
        });
      }
    }
  }
  return sites;
}

/** `value` (JSON) with `key` put into the map at `path`, as an own entry. */
export function withOwnKey(
  value: JsonValue,
  path: readonly Segment[],
  key: string,
  item: unknown,
): JsonValue {
  const out = copy(value);
  const map = at(out, path);
  if (isMap(map)) putOwn(map, key, item);
  return out;
}
