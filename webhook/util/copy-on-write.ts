/**
 * An object under review changed by several steps without copying what they leave alone. The
 * first write under a map or list copies it (shallowly), and every map or list above it, once;
 * everything else stays shared with the original. The original is never written to, and the
 * admission diff skips every shared subtree by reference: a pod of 2,000 containers that gains one
 * annotation costs a copy of its metadata, not of the pod, and a pod nothing changes costs nothing.
 */
import type { JsonObject, JsonValue } from '../admission/types.js';

/** A map key, or an index into a list. */
export type PathSegment = string | number;

const isMap = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export class CopyOnWrite<T extends JsonObject = JsonObject> {
  /** The maps and lists this draft made itself, which later writes may change in place. */
  private readonly owned = new WeakSet<object>();
  private root: T;

  /**
   * `current` may already differ from `original` (a step that builds its result by sharing, such
   * as a colocation profile); nothing in it is assumed to be private, so it is copied on write too.
   */
  constructor(
    readonly original: T,
    current: T = original,
  ) {
    this.root = current;
  }

  /** The object as the steps so far left it: `original` itself while nothing changed. */
  get current(): T {
    return this.root;
  }

  get changed(): boolean {
    return this.root !== this.original;
  }

  /** Replaces the whole object with one a step built by sharing (see the constructor). */
  replace(next: T): void {
    this.root = next;
  }

  /**
   * The map at `path`, writable. A map or list on the way that is missing, or is of the other
   * kind, becomes an empty one, as a Go handler that creates the maps it needs would leave it. A
   * list index on the way must point into an existing list: steps index only lists they have read.
   */
  mapAt(...path: PathSegment[]): JsonObject {
    return this.walk(path, 'map') as JsonObject;
  }

  /** The list at `path`, writable; missing or not a list, it becomes an empty one. */
  listAt(...path: PathSegment[]): JsonValue[] {
    return this.walk(path, 'list') as JsonValue[];
  }

  private walk(path: readonly PathSegment[], last: 'map' | 'list'): JsonObject | JsonValue[] {
    let node: JsonObject | JsonValue[] = this.writableRoot();
    for (let position = 0; position < path.length; position += 1) {
      const next = path[position + 1];
      const want = next === undefined ? last : typeof next === 'number' ? 'list' : 'map';
      node = this.writableChild(node, path[position] as PathSegment, want);
    }
    return node;
  }

  private writableRoot(): JsonObject {
    if (!this.owned.has(this.root)) {
      this.root = { ...this.root };
      this.owned.add(this.root);
    }
    return this.root;
  }

  /** The child at `segment` of a node this draft owns, made writable as a `want`. */
  private writableChild(
    parent: JsonObject | JsonValue[],
    segment: PathSegment,
    want: 'map' | 'list',
  ): JsonObject | JsonValue[] {
    if (typeof segment === 'number' && !(Array.isArray(parent) && segment >= 0 && segment < parent.length)) {
      throw new RangeError(`copy-on-write: no list item ${segment} to write under`);
    }
    const child = (parent as Record<PathSegment, JsonValue | undefined>)[segment];
    let writable: JsonObject | JsonValue[];
    if (want === 'list' && Array.isArray(child)) {
      if (this.owned.has(child)) return child;
      writable = child.slice();
    } else if (want === 'map' && isMap(child)) {
      if (this.owned.has(child)) return child;
      writable = { ...child };
    } else {
      writable = want === 'map' ? {} : [];
    }
    this.owned.add(writable);
    (parent as Record<PathSegment, JsonValue>)[segment] = writable;
    return writable;
  }
}
