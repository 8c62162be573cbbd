import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JsonValue } from '../../../../../webhook/admission/types.js';
import { FieldPath } from '../../../../../webhook/rules/shared/field-errors.js';
import { list, map, struct } from '../../../../../webhook/util/go-decode/composites.js';
import {
  type Decoder,
  type Decoding,
  PARSED_DIALECT,
} from '../../../../../webhook/util/go-decode/decoding.js';
import { decodeParsed } from '../../../../../webhook/util/go-decode/entry-points.js';
import { parsedNode } from '../../../../../webhook/util/go-decode/parsed-node.js';
import type { JsonNode } from '../../../../../webhook/util/go-decode/json-text.js';
import {
  goAnyJson,
  goBool,
  goDuration,
  goInt32 as int32,
  goInt64 as int64,
  goQuantity as quantity,
  goString,
  goTime,
  goUint32 as uint32,
} from '../../../../../webhook/util/go-decode/scalars.js';

function decode<T>(
  decoder: Decoder<T>,
  value: JsonValue | undefined,
): { value: T | undefined; errors: string[] } {
  const out: Decoding = { dialect: PARSED_DIALECT, typeErrors: [], tagErrors: [] };
  const decoded = decoder(value === undefined ? undefined : parsedNode(value), FieldPath.of('f'), out);
  return { value: decoded, errors: out.typeErrors.map((error) => error.toString()) };
}

/** A node back as the value it was parsed from. */
function plain(node: JsonNode | undefined): JsonValue | undefined {
  if (node === undefined) return undefined;
  switch (node.kind) {
    case 'null':
      return null;
    case 'number':
      return Number(node.text);
    case 'array':
      return Array.from(node.items, (item) => plain(item) ?? null);
    case 'object':
      return Object.fromEntries(Array.from(node.entries, ([key, value]) => [key, plain(value) ?? null]));
    default:
      return node.value;
  }
}

describe('Go JSON decoders', () => {
  it('treats null as absent, as Go does for pointers (the API server prunes nulls anyway)', () => {
    for (const decoder of [
      goString,
      goBool,
      int32,
      goDuration,
      quantity,
      goTime,
      struct({}),
      list(int32, 0),
      map(int32),
    ]) {
      assert.deepEqual(decode(decoder as Decoder<unknown>, null), { value: undefined, errors: [] });
      assert.deepEqual(decode(decoder as Decoder<unknown>, undefined), { value: undefined, errors: [] });
    }
  });

  it('decodes strings and booleans, refusing other JSON types', () => {
    assert.deepEqual(decode(goString, 'x'), { value: 'x', errors: [] });
    assert.deepEqual(decode(goString, 3).errors, ['f: Invalid value: 3: must be a string']);
    assert.deepEqual(decode(goBool, true), { value: true, errors: [] });
    assert.deepEqual(decode(goBool, 'true').errors, ['f: Invalid value: "true": must be a boolean']);
    // A container is named by its JSON type rather than dumped.
    assert.deepEqual(decode(goString, { a: 1 }).errors, ['f: Invalid value: "object": must be a string']);
    assert.deepEqual(decode(goString, [1]).errors, ['f: Invalid value: "array": must be a string']);
  });

  it('holds int32, uint32 and int64 to their Go ranges', () => {
    const int32Problem = 'must be an int32 (a whole number from -2147483648 to 2147483647)';
    assert.deepEqual(decode(int32, 2147483647), { value: 2147483647, errors: [] });
    assert.deepEqual(decode(int32, -2147483648), { value: -2147483648, errors: [] });
    assert.deepEqual(decode(int32, 2147483648).errors, [`f: Invalid value: 2147483648: ${int32Problem}`]);
    assert.deepEqual(decode(int32, 1.5).errors, [`f: Invalid value: 1.5: ${int32Problem}`]);
    assert.deepEqual(decode(int32, '3').errors, [`f: Invalid value: "3": ${int32Problem}`]);
    assert.deepEqual(decode(uint32, 4294967295), { value: 4294967295, errors: [] });
    assert.deepEqual(decode(uint32, -1).errors, [
      'f: Invalid value: -1: must be a uint32 (a whole number from 0 to 4294967295)',
    ]);
    assert.deepEqual(decode(int64, 2 ** 53), { value: 2n ** 53n, errors: [] });
    assert.equal(decode(int64, 2 ** 64).errors.length, 1);
  });

  it('parses Go durations and names the problem with a bad one', () => {
    assert.deepEqual(decode(goDuration, '1m30s'), { value: { text: '1m30s', ms: 90_000 }, errors: [] });
    assert.deepEqual(decode(goDuration, '-5s').value, { text: '-5s', ms: -5000 });
    assert.deepEqual(decode(goDuration, '1d').errors, [
      'f: Invalid value: "1d": must be a duration such as "30s" or "1m30s": unknown unit "d" in duration "1d"',
    ]);
    assert.deepEqual(decode(goDuration, '').errors, [
      'f: Invalid value: "": must be a duration such as "30s" or "1m30s": invalid duration ""',
    ]);
    assert.deepEqual(decode(goDuration, 30).errors, [
      'f: Invalid value: 30: must be a duration string such as "30s" or "1m30s"',
    ]);
    // Past what an int64 of nanoseconds holds, Go refuses the text.
    assert.deepEqual(decode(goDuration, '2562047h').errors, []);
    assert.deepEqual(decode(goDuration, '2562048h').errors, [
      'f: Invalid value: "2562048h": must be a duration such as "30s" or "1m30s": invalid duration "2562048h"',
    ]);
  });

  it('parses quantities, as strings or bare numbers', () => {
    assert.equal(decode(quantity, '500m').value?.sign, 1);
    assert.equal(decode(quantity, 2).value?.text, '2');
    assert.deepEqual(decode(quantity, 'two').errors, [
      'f: Invalid value: "two": must be a quantity such as "500m", "2Gi" or 3: quantities must match the regular expression \'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\'',
    ]);
    assert.deepEqual(decode(quantity, true).errors, [
      'f: Invalid value: true: must be a quantity such as "500m", "2Gi" or 3',
    ]);
  });

  it('checks RFC 3339 times', () => {
    for (const good of [
      '2025-09-23T10:00:00Z',
      '2024-02-29T23:59:59.123456+08:00',
      '2025-01-01T00:00:00-05:30',
    ]) {
      assert.deepEqual(decode(goTime, good).errors, [], good);
    }
    for (const bad of [
      'yesterday',
      '2025-09-23',
      '2025-02-29T00:00:00Z',
      '2025-13-01T00:00:00Z',
      '2025-01-01T24:00:00Z',
      '2025-01-01 00:00:00Z',
    ]) {
      assert.equal(decode(goTime, bad).errors.length, 1, bad);
    }
  });

  it('takes any JSON for a free-form field', () => {
    const free = decode(goAnyJson, { gpu: [1, 'x'] });
    assert.deepEqual({ ...free, value: plain(free.value) }, { value: { gpu: [1, 'x'] }, errors: [] });
    assert.deepEqual(plain(decode(goAnyJson, 'text').value), 'text');
  });

  it('decodes known struct fields, ignores unknown ones, and drops absent ones', () => {
    const decoder = struct({ name: goString, count: int32, inner: struct({ flag: goBool }) });
    assert.deepEqual(decode(decoder, { name: 'a', extra: 'ignored', inner: {} }), {
      value: { name: 'a', inner: {} },
      errors: [],
    });
    assert.deepEqual(decode(decoder, 'scalar').errors, ['f: Invalid value: "scalar": must be an object']);
    assert.deepEqual(decode(decoder, []).errors, ['f: Invalid value: "array": must be an object']);
  });

  it('reports every malformed field, in document order, with its full path', () => {
    const decoder = struct({
      items: list(struct({ count: int32, labels: map(goString) }), {}),
      window: goDuration,
    });
    const result = decode(decoder, {
      items: [{ count: 'x' }, { count: 1, labels: { ok: 'y', 'app.kubernetes.io/name': 7 } }],
      window: 'soon',
    });
    assert.deepEqual(result.errors, [
      'f.items[0].count: Invalid value: "x": must be an int32 (a whole number from -2147483648 to 2147483647)',
      'f.items[1].labels[app.kubernetes.io/name]: Invalid value: 7: must be a string',
      'f.window: Invalid value: "soon": must be a duration such as "30s" or "1m30s": invalid duration "soon"',
    ]);
  });

  it("gives a null list element the element type's zero value, keeping indexes", () => {
    assert.deepEqual(decode(list(struct({ a: int32 }), {}), [null, { a: 1 }]).value, [{}, { a: 1 }]);
    assert.deepEqual(decode(list(goString, ''), ['x', null]).value, ['x', '']);
    assert.deepEqual(decode(list(goString, ''), { a: 1 }).errors, [
      'f: Invalid value: "object": must be a list',
    ]);
  });

  it('keeps map keys as they are, even ones that look like prototype keys', () => {
    const decoded = decode(map(goString), JSON.parse('{"__proto__":"x","a":"b"}') as JsonValue).value;
    assert.equal(decoded?.get('__proto__'), 'x');
    assert.equal(decoded?.get('a'), 'b');
  });

  it('decodeParsed returns the value only when nothing was malformed', () => {
    const decoder = struct({ spec: struct({ n: int32 }) });
    assert.deepEqual(decodeParsed({ spec: { n: 1 } }, decoder, FieldPath.root()), {
      ok: true,
      value: { spec: { n: 1 } },
    });
    const failed = decodeParsed({ spec: { n: 'one' } }, decoder, FieldPath.root());
    assert.ok(!failed.ok);
    assert.deepEqual(
      failed.error.map((error) => error.toString()),
      ['spec.n: Invalid value: "one": must be an int32 (a whole number from -2147483648 to 2147483647)'],
    );
  });
});
