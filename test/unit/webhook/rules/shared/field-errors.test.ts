import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  FieldError,
  FieldPath,
  GoStringer,
  forbidden,
  internal,
  invalid,
  required,
} from '../../../../../webhook/rules/shared/field-errors.js';

describe('FieldPath', () => {
  it('joins fields with dots and puts indexes and keys in brackets, as Go does', () => {
    const path = FieldPath.of('spec', 'backends').index(0).child('workers').index(1).child('type');
    assert.equal(path.toString(), 'spec.backends[0].workers[1].type');
    assert.equal(
      FieldPath.of('data').key('mapping.yaml').child('tiers').toString(),
      'data[mapping.yaml].tiers',
    );
    assert.equal(FieldPath.of('spec').child('behavior', 'scaleUp').toString(), 'spec.behavior.scaleUp');
  });

  it('prints children of the root without a leading dot', () => {
    assert.equal(FieldPath.root().toString(), '');
    assert.equal(FieldPath.root().child('spec').toString(), 'spec');
    assert.equal(FieldPath.root().index(2).child('name').toString(), '[2].name');
  });

  it('is immutable', () => {
    const spec = FieldPath.of('spec');
    spec.child('a');
    assert.equal(spec.toString(), 'spec');
  });
});

describe('FieldError', () => {
  const path = FieldPath.of('spec', 'x');

  it('renders each type as apimachinery does', () => {
    assert.equal(required(path, 'must be set').toString(), 'spec.x: Required value: must be set');
    assert.equal(forbidden(path, 'not here').toString(), 'spec.x: Forbidden: not here');
    assert.equal(internal(path, new Error('boom')).toString(), 'spec.x: Internal error: boom');
    assert.equal(
      internal(path, 'resource name may not be empty').toString(),
      'spec.x: Internal error: resource name may not be empty',
    );
    assert.equal(invalid(path, 3, 'too big').toString(), 'spec.x: Invalid value: 3: too big');
  });

  it('leaves out an empty detail', () => {
    assert.equal(required(path, '').toString(), 'spec.x: Required value');
    assert.equal(invalid(path, true, '').toString(), 'spec.x: Invalid value: true');
  });

  it('renders bad values as Go prints them', () => {
    const body = (value: Parameters<typeof invalid>[1]): string => invalid(path, value, 'd').body();
    assert.equal(body('server'), 'Invalid value: "server": d');
    assert.equal(body(''), 'Invalid value: "": d');
    assert.equal(body(-2), 'Invalid value: -2: d');
    assert.equal(body(1.5), 'Invalid value: 1.5: d');
    assert.equal(body(2n ** 40n), 'Invalid value: 1099511627776: d');
    assert.equal(body(false), 'Invalid value: false: d');
    // A nil pointer: Go substitutes the string "null", which is then quoted.
    assert.equal(body(null), 'Invalid value: "null": d');
    assert.equal(body(undefined), 'Invalid value: "null": d');
    // A Stringer such as a time.Duration is printed unquoted.
    assert.equal(body(new GoStringer('35m0s')), 'Invalid value: 35m0s: d');
    assert.equal(body(new GoStringer('-1m0s')), 'Invalid value: -1m0s: d');
    assert.equal(body({ a: [1] }), 'Invalid value: {"a":[1]}: d');
  });

  it('keeps its parts for callers that inspect them', () => {
    const error = invalid(path, 'v', 'd');
    assert.ok(error instanceof FieldError);
    assert.equal(error.type, 'Invalid');
    assert.equal(error.field, path);
    assert.equal(error.badValue, 'v');
    assert.equal(error.detail, 'd');
  });
});

describe('FieldError: bounded values', () => {
  it('shows at most 64 characters of a long value, saying how much was cut', () => {
    const text = invalid(FieldPath.of('spec', 'x'), '9'.repeat(100_000), 'too long').toString();
    assert.ok(text.length < 140, text);
    assert.match(text, /^spec\.x: Invalid value: "9+…\(\d+ more chars\)": too long$/);
    const object = invalid(FieldPath.of('spec'), { a: 'b'.repeat(10_000) }, 'bad').toString();
    assert.ok(object.length < 120, object);
  });
});
