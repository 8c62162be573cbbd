/**
 * Maps keyed by what users choose (resource names, label and annotation keys, ConfigMap keys,
 * container, role and metric names, keys of JSON written into annotations) arrive as plain
 * objects, and a plain object answers for keys it does not hold: `constructor`, `toString` or
 * `hasOwnProperty` read Object.prototype's members, `key in map` finds them, and assigning
 * `map['__proto__']` replaces the prototype instead of adding an entry. In Go, which the rules
 * follow, each is only a key. So every read keyed by such a string is an own-property read, and
 * every write one defines an own property (as JSON.parse and object spread do).
 */

/** The entry `key` of `map` when the map itself holds it; never an inherited member. */
export function own<T>(map: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return map !== undefined && Object.hasOwn(map, key) ? map[key] : undefined;
}

/**
 * Sets the entry `key` of `map` as its own property, `__proto__` included (never its prototype).
 * Only `__proto__` is an accessor on Object.prototype; every other name is assigned as usual
 * (Object.prototype's other members are writable data, so assigning one adds an own entry), at
 * an assignment's cost.
 */
export function putOwn<T>(map: Record<string, T>, key: string, value: T): void {
  if (key === '__proto__')
    Object.defineProperty(map, key, { value, enumerable: true, writable: true, configurable: true });
  else map[key] = value;
}
