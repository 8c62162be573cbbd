import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FieldPath } from '../../../../../webhook/rules/shared/field-errors.js';
import { list, map, struct } from '../../../../../webhook/util/go-decode/composites.js';
import { type Decoder, type Decoding, TEXT_DIALECT } from '../../../../../webhook/util/go-decode/decoding.js';
import { decodeJsonText } from '../../../../../webhook/util/go-decode/entry-points.js';
import { parseJsonText } from '../../../../../webhook/util/go-decode/json-text.js';
import {
  goAnyObject,
  goBool,
  goDuration,
  goFloat64,
  goInt32,
  goInt64,
  goIntOrString,
  goQuantityNanos,
  goString,
} from '../../../../../webhook/util/go-decode/scalars.js';
import { tagged } from '../../../../../webhook/util/go-decode/tags.js';

interface Outcome<T> {
  value: T | undefined;
  typeErrors: string[];
  tagErrors: string[];
}

function decode<T>(decoder: Decoder<T>, text: string): Outcome<T> {
  const parsed = parseJsonText(text);
  assert.ok(parsed.ok);
  const out: Decoding = { dialect: TEXT_DIALECT, typeErrors: [], tagErrors: [] };
  const value = decoder(parsed.value, FieldPath.of('f'), out);
  return {
    value,
    typeErrors: out.typeErrors.map(String),
    tagErrors: out.tagErrors.map(String),
  };
}

/** The one field `v` of a struct, so tags run. */
function field<T>(decoder: Decoder<T>, text: string): Outcome<T> {
  const outcome = decode(struct({ v: decoder }), `{"v": ${text}}`);
  return { ...outcome, value: outcome.value?.v };
}

describe('Go scalar types', () => {
  it('reads an int64 exactly, across its whole range', () => {
    assert.equal(decode(goInt64, '9223372036854775807').value, 9223372036854775807n);
    assert.equal(decode(goInt64, '-9223372036854775808').value, -9223372036854775808n);
    assert.equal(decode(goInt64, '-0').value, 0n);
  });

  it('refuses what Go refuses for an integer: fractions, exponents, strings, out of range', () => {
    for (const text of ['1.0', '1e2', '65.5', '"65"', 'true', '[]', '{}']) {
      assert.match(
        decode(goInt64, text).typeErrors[0] ?? '',
        /^f: Invalid value: .*: must be an integer \(int64\)$/,
        text,
      );
    }
    assert.deepEqual(decode(goInt64, '9223372036854775808').typeErrors, [
      'f: Invalid value: 9223372036854775808: must be an integer (int64) from -9223372036854775808 to 9223372036854775807',
    ]);
    assert.deepEqual(decode(goInt32, '2147483648').typeErrors, [
      'f: Invalid value: 2147483648: must be an integer (int32) from -2147483648 to 2147483647',
    ]);
    assert.equal(decode(goInt32, '-2147483648').value, -2147483648);
  });

  it('shows the offending value as written', () => {
    assert.deepEqual(decode(goInt64, '"65"').typeErrors, [
      'f: Invalid value: "65": must be an integer (int64)',
    ]);
    assert.deepEqual(decode(goInt64, '1.50').typeErrors, [
      'f: Invalid value: 1.50: must be an integer (int64)',
    ]);
    assert.deepEqual(decode(goInt64, '{"a":1}').typeErrors, [
      'f: Invalid value: {"a":1}: must be an integer (int64)',
    ]);
  });

  it('reads a float64 from any number, and refuses one out of range', () => {
    assert.equal(decode(goFloat64, '1').value, 1);
    assert.equal(decode(goFloat64, '1.5e0').value, 1.5);
    assert.deepEqual(decode(goFloat64, '"1.5"').typeErrors, ['f: Invalid value: "1.5": must be a number']);
    assert.deepEqual(decode(goFloat64, '1e400').typeErrors, [
      'f: Invalid value: 1e400: must be a number within float64 range',
    ]);
  });

  it('checks strings and booleans', () => {
    assert.equal(decode(goString, '"x"').value, 'x');
    assert.deepEqual(decode(goString, '1').typeErrors, ['f: Invalid value: 1: must be a string']);
    assert.equal(decode(goBool, 'false').value, false);
    assert.deepEqual(decode(goBool, '"true"').typeErrors, ['f: Invalid value: "true": must be a boolean']);
  });

  it('treats null as absent, as Go leaves a nil pointer', () => {
    for (const decoder of [
      goInt64,
      goFloat64,
      goString,
      goBool,
      goQuantityNanos,
      goIntOrString,
    ] as Decoder<unknown>[]) {
      assert.deepEqual(decode(decoder, 'null'), { value: undefined, typeErrors: [], tagErrors: [] });
    }
  });

  it('reads durations, quantities and int-or-strings', () => {
    assert.deepEqual(decode(goDuration, '"5m"').value, { text: '5m', ms: 300_000 });
    assert.deepEqual(decode(goDuration, '"5 minutes"').typeErrors, [
      'f: Invalid value: "5 minutes": must be a duration such as "5m" or "1h30m"',
    ]);
    assert.deepEqual(decode(goDuration, '300').typeErrors, [
      'f: Invalid value: 300: must be a duration string such as "5m"',
    ]);
    assert.equal(decode(goQuantityNanos, '"100M"').value, 100_000_000n * 1_000_000_000n);
    assert.equal(decode(goQuantityNanos, '" 1k "').value, 1000n * 1_000_000_000n);
    assert.equal(decode(goQuantityNanos, '1e3').value, 1000n * 1_000_000_000n);
    assert.deepEqual(decode(goQuantityNanos, '"100Mbps"').typeErrors, [
      'f: Invalid value: "100Mbps": must be a quantity such as "100M"',
    ]);
    assert.deepEqual(decode(goIntOrString, '10').value, { type: 'int', value: 10n });
    assert.deepEqual(decode(goIntOrString, '"10M"').value, { type: 'string', value: '10M' });
    assert.deepEqual(decode(goIntOrString, '10.5').typeErrors, [
      'f: Invalid value: 10.5: must be an integer (int32)',
    ]);
    assert.deepEqual(decode(goIntOrString, 'true').typeErrors, [
      'f: Invalid value: true: must be an integer or a string',
    ]);
    assert.deepEqual(decode(goAnyObject, '[1]').typeErrors, ['f: Invalid value: [1]: must be an object']);
  });
});

describe('Go structs, slices and maps', () => {
  const shape = struct({ enable: goBool, cpuPercent: goInt64, nested: struct({ name: goString }) });

  it('ignores unknown keys and reports every bad field, not the first', () => {
    const outcome = decode(shape, '{"unknown": [1], "enable": 1, "cpuPercent": "x", "nested": {"name": 2}}');
    assert.deepEqual(outcome.typeErrors, [
      'f.enable: Invalid value: 1: must be a boolean',
      'f.cpuPercent: Invalid value: "x": must be an integer (int64)',
      'f.nested.name: Invalid value: 2: must be a string',
    ]);
  });

  it('matches keys case-insensitively when no field has the exact name, the last match winning', () => {
    assert.deepEqual(decode(shape, '{"CPUPERCENT": 5}').value, { cpuPercent: 5n });
    assert.deepEqual(decode(shape, '{"cpuPercent": 5, "CpuPercent": 6}').value, { cpuPercent: 6n });
    assert.deepEqual(decode(shape, '{"CpuPercent": 6, "cpuPercent": 5}').value, { cpuPercent: 5n });
    assert.deepEqual(decode(shape, '{"cpuPercent": 5, "cpuPercent": null}').value, {});
    assert.deepEqual(decode(shape, '{"Enable": "yes"}').typeErrors, [
      'f.enable: Invalid value: "yes": must be a boolean',
    ]);
  });

  it('refuses a non-object where a struct goes', () => {
    assert.deepEqual(decode(shape, '[]').typeErrors, ['f: Invalid value: []: must be an object']);
    assert.deepEqual(decode(shape, '"s"').typeErrors, ['f: Invalid value: "s": must be an object']);
  });

  it('keeps list indexes through null elements', () => {
    const outcome = decode(list(goInt64), '[1, null, "x"]');
    assert.deepEqual(outcome.value, [1n, undefined, undefined]);
    assert.deepEqual(outcome.typeErrors, ['f[2]: Invalid value: "x": must be an integer (int64)']);
    assert.deepEqual(decode(list(goInt64), '{}').typeErrors, ['f: Invalid value: {}: must be a list']);
  });

  it('stores a null map entry as the zero value when there is one', () => {
    assert.deepEqual(
      [...(decode(map(goFloat64, 0), '{"cpu": null, "mem": 2}').value ?? [])],
      [
        ['cpu', 0],
        ['mem', 2],
      ],
    );
    assert.deepEqual([...(decode(map(goString), '{"a": null}').value ?? [])], []);
    assert.deepEqual(decode(map(goString), '{"a": 1}').typeErrors, [
      'f[a]: Invalid value: 1: must be a string',
    ]);
  });
});

describe('validator tags', () => {
  const percent = tagged(goInt64, 'min=0,max=100');

  it('checks min and max inclusively', () => {
    assert.deepEqual(field(percent, '0').tagErrors, []);
    assert.deepEqual(field(percent, '100').tagErrors, []);
    assert.deepEqual(field(percent, '-1').tagErrors, ['f.v: Invalid value: -1: must be at least 0']);
    assert.deepEqual(field(percent, '101').tagErrors, ['f.v: Invalid value: 101: must be at most 100']);
  });

  it('checks gt and lt strictly, with fractional bounds for floats', () => {
    const ratio = tagged(goFloat64, 'gt=0,max=1');
    assert.deepEqual(field(ratio, '0').tagErrors, ['f.v: Invalid value: 0: must be greater than 0']);
    assert.deepEqual(field(ratio, '0.0001').tagErrors, []);
    assert.deepEqual(field(ratio, '1').tagErrors, []);
    assert.deepEqual(field(ratio, '1.0001').tagErrors, ['f.v: Invalid value: 1.0001: must be at most 1']);
    const below = tagged(goFloat64, 'lt=2.5');
    assert.deepEqual(field(below, '2.4').tagErrors, []);
    assert.deepEqual(field(below, '2.5').tagErrors, ['f.v: Invalid value: 2.5: must be less than 2.5']);
  });

  it('is omitempty: absent and null skip the rules, an explicit 0 does not', () => {
    const positive = tagged(goInt64, 'gt=0');
    assert.deepEqual(decode(struct({ v: positive }), '{}').tagErrors, []);
    assert.deepEqual(field(positive, 'null').tagErrors, []);
    assert.deepEqual(field(positive, '0').tagErrors, ['f.v: Invalid value: 0: must be greater than 0']);
  });

  it('reports only the first failing rule of a field', () => {
    const both = tagged(goInt64, 'min=10,max=5');
    assert.deepEqual(field(both, '7').tagErrors, ['f.v: Invalid value: 7: must be at least 10']);
  });

  it('runs tags only on values that decoded', () => {
    assert.deepEqual(field(percent, '"200"'), {
      value: undefined,
      typeErrors: ['f.v: Invalid value: "200": must be an integer (int64)'],
      tagErrors: [],
    });
  });

  it('checks oneof on strings, skipping the empty string', () => {
    const qos = tagged(goString, 'oneof=LS BE');
    assert.deepEqual(field(qos, '"LS"').tagErrors, []);
    assert.deepEqual(field(qos, '""').tagErrors, []);
    assert.deepEqual(field(qos, '"ls"').tagErrors, ['f.v: Invalid value: "ls": must be one of LS, BE']);
  });

  it('checks tags on list and map elements', () => {
    assert.deepEqual(decode(list(percent), '[1, 200]').tagErrors, [
      'f[1]: Invalid value: 200: must be at most 100',
    ]);
    assert.deepEqual(decode(map(percent), '{"a": -5}').tagErrors, [
      'f[a]: Invalid value: -5: must be at least 0',
    ]);
  });

  describe('gtfield and ltfield', () => {
    const pair = struct({
      upper: tagged(goInt64, 'min=0,max=100,gtfield=lower'),
      lower: tagged(goInt64, 'min=0,max=100,ltfield=upper'),
    });
    const errors = (text: string): string[] => decode(pair, text).tagErrors;

    it('accepts both absent, and a strict order', () => {
      assert.deepEqual(errors('{}'), []);
      assert.deepEqual(errors('{"upper": 70, "lower": 60}'), []);
      assert.deepEqual(errors('{"upper": 1, "lower": 0}'), []);
    });

    it('refuses one set without the other, either way round', () => {
      assert.deepEqual(errors('{"lower": 60}'), [
        'f.lower: Invalid value: 60: must be less than upper, which must then be set too',
      ]);
      assert.deepEqual(errors('{"upper": 70}'), [
        'f.upper: Invalid value: 70: must be greater than lower, which must then be set too',
      ]);
      assert.deepEqual(errors('{"upper": 70, "lower": null}'), [
        'f.upper: Invalid value: 70: must be greater than lower, which must then be set too',
      ]);
    });

    it('refuses equal or inverted values on both fields, naming the other value', () => {
      assert.deepEqual(errors('{"upper": 70, "lower": 70}'), [
        'f.upper: Invalid value: 70: must be greater than lower (70)',
        'f.lower: Invalid value: 70: must be less than upper (70)',
      ]);
      assert.deepEqual(errors('{"upper": 70, "lower": 80}'), [
        'f.upper: Invalid value: 70: must be greater than lower (80)',
        'f.lower: Invalid value: 80: must be less than upper (70)',
      ]);
    });

    it('checks min and max before the other field', () => {
      assert.deepEqual(errors('{"upper": 120, "lower": 80}'), [
        'f.upper: Invalid value: 120: must be at most 100',
      ]);
    });

    it('treats a sibling with a type error as unset', () => {
      const outcome = decode(pair, '{"upper": 70, "lower": "60"}');
      assert.deepEqual(outcome.typeErrors, ['f.lower: Invalid value: "60": must be an integer (int64)']);
      assert.deepEqual(outcome.tagErrors, [
        'f.upper: Invalid value: 70: must be greater than lower, which must then be set too',
      ]);
    });
  });

  it('refuses a malformed tag when the shape is built', () => {
    assert.throws(() => tagged(goInt64, 'min=x'), /bad bound/);
    assert.throws(() => tagged(goInt64, 'required'), /unsupported validator tag/);
  });
});

describe('decodeJsonText', () => {
  const shape = struct({ percent: tagged(goInt64, 'max=100'), name: goString });
  const root = FieldPath.of('data').key('k').json();

  it('reports a syntax error at the field holding the text', () => {
    const decoded = decodeJsonText('{"percent": }', shape, root);
    assert.ok(!decoded.ok);
    assert.deepEqual(decoded.error.map(String), [
      "data[k]: not valid JSON: invalid character '}' looking for beginning of value (line 1, column 13)",
    ]);
  });

  it('fails with the type errors, and reports tag errors and unknown keys apart', () => {
    const typed = decodeJsonText('{"percent": "x"}', shape, root);
    assert.ok(!typed.ok);
    assert.deepEqual(typed.error.map(String), [
      'data[k]: percent: Invalid value: "x": must be an integer (int64)',
    ]);
    const report = { tagErrors: [], unknownFields: [] };
    const tags = decodeJsonText('{"percent": 101, "nmae": "a"}', shape, root, report);
    assert.deepEqual(tags, { ok: true, value: { percent: 101n } });
    assert.deepEqual(report.tagErrors.map(String), [
      'data[k]: percent: Invalid value: 101: must be at most 100',
    ]);
    assert.deepEqual(report.unknownFields.map(String), ['data[k]: nmae']);
  });

  it('decodes the document null to nothing', () => {
    assert.deepEqual(decodeJsonText('null', shape, root), { ok: true, value: undefined });
  });
});
