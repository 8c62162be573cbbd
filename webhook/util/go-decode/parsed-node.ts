import type { JsonValue } from '../../admission/types.js';
import type { JsonNode } from './json-text.js';

const NULL: JsonNode = { kind: 'null' };

/**
 * A parsed value seen as a JsonNode, without copying it: a container's children are made one at a
 * time as a decoder walks them, so what no decoder looks at (a free-form field, the metadata the
 * rules skip) costs nothing, and a list of 200,000 items is never held twice. A number's text is
 * its shortest decimal form, which is the literal's for every integer below 1e21.
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
  if (Array.isArray(value)) return { kind: 'array', items: { [Symbol.iterator]: () => itemsOf(value) } };
  return { kind: 'object', entries: { [Symbol.iterator]: () => entriesOf(value) } };
}

function* itemsOf(values: readonly JsonValue[]): Generator<JsonNode> {
  for (const value of values) yield parsedNode(value);
}

function* entriesOf(object: { readonly [key: string]: JsonValue }): Generator<readonly [string, JsonNode]> {
  for (const key of Object.keys(object)) yield [key, parsedNode(object[key] ?? null)];
}
