/**
 * Keys a user may choose that a plain JavaScript object already answers for: `Object.prototype`'s
 * own names, and `__proto__`, which JSON.parse makes an own property but an assignment turns into
 * a change of prototype. In a Go map each is only a key; here each must be too. The fuzzer, the
 * property tests and the differential suite put them into every map-shaped field of a review:
 * objects in the review, and objects in the JSON or YAML that users write into strings.
 */
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import type { JsonObject } from '../../webhook/admission/types.js';
import type { Rng } from './prng.js';

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

/** Longer strings are not read for maps: a hostile 1 MiB string is no user's JSON or YAML. */
const MAX_TEXT_CHARS = 64 * 1024;
/** Nor deeper values (the walks here recurse): the rules read JSON in strings to 64 levels. */
const MAX_TEXT_DEPTH = 64;

function nestedAtMost(root: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[root, 0]];
  for (let top = stack.pop(); top; top = stack.pop()) {
    const [value, depth] = top;
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= limit) return false;
    for (const child of Object.values(value)) stack.push([child, depth + 1]);
  }
  return true;
}

/** What a string holds when it is a JSON object or list, or a YAML map (a ConfigMap's YAML file). */
function structuredText(text: string): { value: object; write: (value: object) => string } | undefined {
  if (text.length > MAX_TEXT_CHARS) return undefined;
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      const value: unknown = JSON.parse(text);
      if (typeof value === 'object' && value !== null && nestedAtMost(value, MAX_TEXT_DEPTH))
        return { value, write: (v) => JSON.stringify(v) };
    } catch {
      return undefined;
    }
  }
  if (!text.includes('\n')) return undefined;
  try {
    const value: unknown = parseYaml(text);
    if (isMap(value) && nestedAtMost(value, MAX_TEXT_DEPTH)) return { value, write: (v) => stringifyYaml(v) };
  } catch {
    // Not YAML: no map inside.
  }
  return undefined;
}

/** One map of a review a key can be put into. */
export interface MapSite {
  /** Where, as `object.spec.max` or `object.metadata.annotations.k (text).spec`. */
  where: string;
  /** The field that holds the map (`max`, `labels`); '' for an item of a list. */
  field: string;
  /** Whether the map is in the JSON or YAML a string holds. */
  inText: boolean;
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
      const last = path[path.length - 1];
      sites.push({
        where: show(path).slice(1),
        field: typeof last === 'string' ? last : '',
        inText: false,
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
          field: typeof inner[inner.length - 1] === 'string' ? String(inner[inner.length - 1]) : '',
          inText: true,
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

/**
 * `request` with one of PROTOTYPE_KEYS put into one of its maps that `accept` takes, and a note
 * saying which; undefined when it has no such map.
 */
export function withDrawnKey(
  rng: Rng,
  request: JsonObject,
  accept: (site: MapSite) => boolean = () => true,
): { request: JsonObject; note: string } | undefined {
  const sites = mapSites(request).filter(accept);
  if (sites.length === 0) return undefined;
  const site = rng.pick(sites);
  const key = rng.pick(PROTOTYPE_KEYS);
  return { request: site.withKey(key), note: `${site.where}: key ${JSON.stringify(key)}` };
}
