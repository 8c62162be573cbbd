import type { JsonValue } from '../../admission/types.js';
import type { JsonNode } from './json-text.js';

type JsonObjectValue = { readonly [key: string]: JsonValue };

const NULL: JsonNode = { kind: 'null' };

/**
 * A parsed value seen as a JsonNode, without copying it: a container's children are made one at a
 * time as a decoder walks them, so what no decoder looks at (a free-form field, the metadata the
 * rules skip) costs nothing, and a list of 200,000 items is never held twice. A number's text is
 * its shortest decimal form, which is the literal's for every integer below 1e21. Containers are
 * class instances rather than object literals of closures: a review walks hundreds of nodes, and
 * a closure made per node costs an allocation each (and a defineProperty each under tsx).
 */
export function parsedNode(value: JsonValue): JsonNode {
  if (value === null) return NULL;
  switch (typeof value) {
    case 'boolean':
      return { kind: 'boolean', value };
    case 'number':
      return { kind: 'number', text: String(value) };
    case 'string':
      return { kind: 'string', value };
  }
  return Array.isArray(value) ? new ParsedArray(value) : new ParsedObject(value);
}

class ParsedArray implements Iterable<JsonNode> {
  readonly kind = 'array';
  constructor(private readonly values: readonly JsonValue[]) {}

  get items(): Iterable<JsonNode> {
    return this;
  }

  *[Symbol.iterator](): Generator<JsonNode> {
    for (const value of this.values) yield parsedNode(value);
  }
}

class ParsedObject implements Iterable<readonly [string, JsonNode]> {
  readonly kind = 'object';
  constructor(private readonly object: JsonObjectValue) {}

  get entries(): Iterable<readonly [string, JsonNode]> {
    return this;
  }

  *[Symbol.iterator](): Generator<readonly [string, JsonNode]> {
    for (const key of Object.keys(this.object)) yield [key, parsedNode(this.object[key] ?? null)];
  }

  /** Keys of a parsed object are unique: JSON.parse kept the last of repeated ones. */
  lookup(key: string): JsonNode | undefined {
    return Object.hasOwn(this.object, key) ? parsedNode(this.object[key] ?? null) : undefined;
  }
}
