import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type JsonNode,
  MAX_ENTRIES,
  nodeText,
  parseJsonText,
} from '../../../../../webhook/util/go-decode/json-text.js';

function parsed(text: string): JsonNode {
  const result = parseJsonText(text);
  assert.ok(result.ok, result.ok ? '' : result.error.message);
  return result.value;
}

function error(text: string): string {
  const result = parseJsonText(text);
  assert.ok(!result.ok, `${text} should not parse`);
  return result.error.message;
}

describe('parseJsonText', () => {
  it('keeps number literals as written', () => {
    assert.deepEqual(parsed('[1, 1.0, 1e2, -0, 9223372036854775807]'), {
      kind: 'array',
      items: ['1', '1.0', '1e2', '-0', '9223372036854775807'].map((text) => ({ kind: 'number', text })),
    });
  });

  it('keeps every key in order, duplicates included', () => {
    assert.deepEqual(parsed('{"b": true, "a": null, "b": "x"}'), {
      kind: 'object',
      entries: [
        ['b', { kind: 'boolean', value: true }],
        ['a', { kind: 'null' }],
        ['b', { kind: 'string', value: 'x' }],
      ],
    });
  });

  it('decodes string escapes', () => {
    assert.deepEqual(parsed(String.raw`"a\"\\\/\b\f\n\r\t\u00e9"`), {
      kind: 'string',
      value: 'a"\\/\b\f\n\r\té',
    });
  });

  it('refuses an empty or truncated document as Go does', () => {
    assert.equal(error(''), 'unexpected end of JSON input');
    assert.equal(error('   '), 'unexpected end of JSON input');
    assert.equal(error('{"a": 1'), 'unexpected end of JSON input');
    assert.equal(error('"abc'), 'unexpected end of JSON input');
  });

  it('names the bad character and where it is', () => {
    assert.equal(
      error('{"a": tru}'),
      "invalid character '}' in literal true (expecting 'e') (line 1, column 10)",
    );
    assert.equal(
      error('{\n  "a": x\n}'),
      "invalid character 'x' looking for beginning of value (line 2, column 8)",
    );
    assert.equal(
      error('{"a": 1,}'),
      "invalid character '}' looking for beginning of object key string (line 1, column 9)",
    );
    assert.equal(error('[1 2]'), "invalid character '2' after array element (line 1, column 4)");
    assert.equal(error('{"a" 1}'), "invalid character '1' after object key (line 1, column 6)");
    assert.equal(
      error('{"a": 1 "b": 2}'),
      "invalid character '\"' after object key:value pair (line 1, column 9)",
    );
    assert.equal(error('{} x'), "invalid character 'x' after top-level value (line 1, column 4)");
  });

  it('refuses what JSON forbids and JavaScript might allow', () => {
    assert.match(error('01'), /after top-level value/);
    assert.match(error('+1'), /looking for beginning of value/);
    assert.match(error('.5'), /looking for beginning of value/);
    assert.match(error("'a'"), /invalid character '\\'' looking for beginning of value/);
    assert.match(error('"a\tb"'), /in string literal/);
    assert.match(error(String.raw`"\x41"`), /in string escape code/);
    assert.match(error(String.raw`"\u12g4"`), /in \\u hexadecimal character escape/);
    assert.match(error('\ufeff{}'), /looking for beginning of value/);
    assert.match(error('NaN'), /looking for beginning of value/);
  });

  it('stops at a nesting depth no config needs instead of exhausting the stack', () => {
    assert.match(error('['.repeat(5000)), /exceeded max depth of 1000/);
    assert.equal(parsed(`${'['.repeat(999)}${']'.repeat(999)}`).kind, 'array');
  });
});

describe('nodeText', () => {
  it('renders short values as JSON and elides long containers', () => {
    assert.equal(nodeText(parsed('{"a": [1, 2.50]}')), '{"a":[1,2.50]}');
    assert.equal(nodeText(parsed(`{"a": "${'x'.repeat(50)}"}`)), '{…}');
    assert.equal(nodeText(parsed(`[${'1,'.repeat(30)}1]`)), '[…]');
  });
});

describe('parseJsonText bounds', () => {
  it(`refuses an array or object of more than ${MAX_ENTRIES} entries, as too large rather than invalid`, () => {
    const list = parseJsonText(JSON.stringify({ a: Array.from({ length: MAX_ENTRIES + 1 }, () => 1) }));
    assert.equal(list.ok, false);
    assert.equal(!list.ok && list.error.tooLarge, true);
    assert.match(
      !list.ok ? list.error.message : '',
      /^an array of more than 50000 entries \(line 1, column \d+\)/,
    );
    const map = parseJsonText(
      JSON.stringify(Object.fromEntries(Array.from({ length: MAX_ENTRIES + 1 }, (_, i) => [`k${i}`, i]))),
    );
    assert.match(!map.ok ? map.error.message : '', /^an object of more than 50000 entries/);
    assert.equal(parseJsonText(JSON.stringify(Array.from({ length: MAX_ENTRIES }, () => 1))).ok, true);
  });
});
