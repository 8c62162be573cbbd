/**
 * A JSON parser that keeps what `JSON.parse` throws away and Go's `encoding/json` looks at: the
 * literal text of each number (Go refuses `1.0` or `1e2` for an int64 field, and reads integers
 * beyond 2^53 exactly) and the order of an object's keys (Go matches keys to fields
 * case-insensitively, the last match winning). Syntax errors read like Go's, with a position.
 */
import { goQuote } from '../go-quote.js';
import { failure, success, type Result } from '../result.js';

/**
 * A JSON value with its number literals and key order. A container's children are iterables, not
 * arrays, so that a parsed value can be seen as a JsonNode without copying it (go-decode's
 * `decodeParsed`); the parser's own nodes hold arrays.
 */
export type JsonNode =
  | { kind: 'null' }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'number'; text: string }
  | { kind: 'string'; value: string }
  | { kind: 'array'; items: Iterable<JsonNode> }
  | {
      kind: 'object';
      entries: Iterable<readonly [string, JsonNode]>;
      /**
       * The value of one key, where keys are unique (a parsed object's are): lets a struct read its
       * fields without walking every key, the metadata and free-form parts included.
       */
      readonly lookup?: (key: string) => JsonNode | undefined;
    };

/** Why a text was not read: Go's syntax error, or valid JSON larger than this server reads. */
export interface JsonTextProblem {
  readonly message: string;
  readonly tooLarge: boolean;
}

// Go allows 10000 levels; recursion this deep in JS risks the stack, and no real config nests past a few.
const MAX_DEPTH = 1000;
/**
 * Entries one object or array may hold: room for a node strategy per host of a very large
 * cluster, while a 200,000-item list (which costs more than a review may) is refused unread.
 */
export const MAX_ENTRIES = 50_000;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

class SyntaxProblem extends Error {}
class TooLarge extends Error {}

/** Parses one JSON document (RFC 8259, as Go accepts it). */
export function parseJsonText(text: string): Result<JsonNode, JsonTextProblem> {
  let at = 0;

  const where = (offset: number): string => {
    const before = text.slice(0, offset);
    const line = before.split('\n').length;
    const column = offset - before.lastIndexOf('\n');
    return `line ${line}, column ${column}`;
  };
  const fail = (context: string): never => {
    if (at >= text.length) throw new SyntaxProblem('unexpected end of JSON input');
    const character = text.charAt(at);
    // Go's quoteChar: strconv.Quote's escaping, between single quotes.
    const shown =
      character === "'" ? "'\\''" : character === '"' ? `'"'` : `'${goQuote(character).slice(1, -1)}'`;
    throw new SyntaxProblem(`invalid character ${shown} ${context} (${where(at)})`);
  };
  const tooLarge = (what: string): never => {
    throw new TooLarge(
      `${what} of more than ${MAX_ENTRIES} entries (${where(at)}), more than any configuration needs`,
    );
  };
  const skipSpace = (): void => {
    for (;;) {
      const code = text.charCodeAt(at);
      // space, tab, line feed, carriage return (NaN past the end stops the loop)
      if (code !== 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) return;
      at++;
    }
  };
  const literal = (word: string, node: JsonNode): JsonNode => {
    for (const expected of word) {
      if (text.charAt(at) !== expected) fail(`in literal ${word} (expecting '${expected}')`);
      at++;
    }
    return node;
  };

  const parseString = (): string => {
    at++; // the opening quote
    let out = '';
    // Plain characters are taken a run at a time: one slice, not one concatenation per character.
    let run = at;
    for (;;) {
      if (at >= text.length) fail('in string literal');
      const code = text.charCodeAt(at);
      if (code === 0x22) {
        out += text.slice(run, at);
        at++;
        return out;
      }
      if (code < 0x20) fail('in string literal');
      if (code !== 0x5c) {
        at++;
        continue;
      }
      out += text.slice(run, at);
      at++;
      const escape = text.charAt(at);
      const simple = ESCAPES[escape];
      if (simple !== undefined) {
        out += simple;
        at++;
      } else if (escape === 'u') {
        at++;
        const hex = text.slice(at, at + 4);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
          at += /^[0-9a-fA-F]*/.exec(hex)?.[0].length ?? 0;
          fail('in \\u hexadecimal character escape');
        }
        out += String.fromCharCode(parseInt(hex, 16));
        at += 4;
      } else {
        fail('in string escape code');
      }
      run = at;
    }
  };

  const parseObject = (depth: number): JsonNode => {
    at++;
    const entries: [string, JsonNode][] = [];
    skipSpace();
    if (text.charAt(at) === '}') {
      at++;
      return { kind: 'object', entries };
    }
    for (;;) {
      skipSpace();
      if (text.charAt(at) !== '"') fail('looking for beginning of object key string');
      const key = parseString();
      skipSpace();
      if (text.charAt(at) !== ':') fail('after object key');
      at++;
      entries.push([key, parseValue(depth + 1)]);
      if (entries.length > MAX_ENTRIES) tooLarge('an object');
      skipSpace();
      const next = text.charAt(at);
      if (next !== ',' && next !== '}') fail('after object key:value pair');
      at++;
      if (next === '}') return { kind: 'object', entries };
    }
  };

  const parseArray = (depth: number): JsonNode => {
    at++;
    const items: JsonNode[] = [];
    skipSpace();
    if (text.charAt(at) === ']') {
      at++;
      return { kind: 'array', items };
    }
    for (;;) {
      items.push(parseValue(depth + 1));
      if (items.length > MAX_ENTRIES) tooLarge('an array');
      skipSpace();
      const next = text.charAt(at);
      if (next !== ',' && next !== ']') fail('after array element');
      at++;
      if (next === ']') return { kind: 'array', items };
    }
  };

  function parseValue(depth: number): JsonNode {
    if (depth > MAX_DEPTH) throw new SyntaxProblem(`exceeded max depth of ${MAX_DEPTH} (${where(at)})`);
    skipSpace();
    switch (text.charAt(at)) {
      case '{':
        return parseObject(depth);
      case '[':
        return parseArray(depth);
      case '"':
        return { kind: 'string', value: parseString() };
      case 't':
        return literal('true', { kind: 'boolean', value: true });
      case 'f':
        return literal('false', { kind: 'boolean', value: false });
      case 'n':
        return literal('null', { kind: 'null' });
      default: {
        NUMBER.lastIndex = at;
        const match = NUMBER.exec(text);
        if (!match) return fail('looking for beginning of value');
        at += match[0].length;
        return { kind: 'number', text: match[0] };
      }
    }
  }

  try {
    const value = parseValue(0);
    skipSpace();
    if (at < text.length) fail('after top-level value');
    return success(value);
  } catch (error) {
    if (error instanceof SyntaxProblem) return failure({ message: error.message, tooLarge: false });
    if (error instanceof TooLarge) return failure({ message: error.message, tooLarge: true });
    throw error;
  }
}

/** A short rendering of a node for messages: the JSON text, elided past `limit` characters. */
export function nodeText(node: JsonNode, limit = 40): string {
  const parts: string[] = [];
  // Rendering stops as soon as the text is past the limit: a node may be a megabyte of JSON.
  const complete = render(node, parts, { left: limit + 1 });
  const full = parts.join('');
  if (complete && full.length <= limit) return full;
  return node.kind === 'object' ? '{…}' : node.kind === 'array' ? '[…]' : `${full.slice(0, limit)}…`;
}

/** Appends the node's JSON text to `parts` while `budget` lasts; false when it ran out. */
function render(node: JsonNode, parts: string[], budget: { left: number }): boolean {
  const put = (text: string): boolean => {
    parts.push(text);
    budget.left -= text.length;
    return budget.left > 0;
  };
  switch (node.kind) {
    case 'null':
      return put('null');
    case 'boolean':
      return put(String(node.value));
    case 'number':
      return put(node.text);
    case 'string':
      return put(JSON.stringify(node.value.slice(0, budget.left + 1)));
    case 'array': {
      if (!put('[')) return false;
      let first = true;
      for (const item of node.items) {
        if (!first && !put(',')) return false;
        first = false;
        if (!render(item, parts, budget)) return false;
      }
      return put(']');
    }
    case 'object': {
      if (!put('{')) return false;
      let first = true;
      for (const [key, value] of node.entries) {
        if (!first && !put(',')) return false;
        first = false;
        if (!put(`${JSON.stringify(key.slice(0, budget.left + 1))}:`)) return false;
        if (!render(value, parts, budget)) return false;
      }
      return put('}');
    }
  }
}
