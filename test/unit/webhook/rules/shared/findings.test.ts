import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  aggregate,
  decisionOf,
  firstRefusal,
  headed,
  INVALID,
  findings,
  PASSED,
  warnings,
  type Findings,
} from '../../../../../webhook/rules/shared/findings.js';
import { atField, FieldPath, required } from '../../../../../webhook/rules/shared/field-errors.js';

const NAME = required(FieldPath.of('metadata', 'name'), 'name is required');
const MAX = atField(FieldPath.of('spec', 'max'), "q quota.Spec.Max's value < 0, in dimensions :[cpu]");

describe('aggregate', () => {
  it('shows one error alone and several in brackets, without exact duplicates', () => {
    assert.equal(aggregate([NAME]), 'metadata.name: Required value: name is required');
    assert.equal(
      aggregate([NAME, MAX, NAME]),
      "[metadata.name: Required value: name is required, spec.max: q quota.Spec.Max's value < 0, in dimensions :[cpu]]",
    );
  });
});

describe('headed', () => {
  it('puts one "  - " line per error under the heading, with no trailing newline', () => {
    assert.equal(
      headed('validation failed')([NAME, MAX]),
      "validation failed:\n  - metadata.name: Required value: name is required\n  - spec.max: q quota.Spec.Max's value < 0, in dimensions :[cpu]",
    );
  });
});

describe('firstRefusal', () => {
  it('stops at the first check with errors, keeping the warnings of every check that ran', () => {
    const ran: string[] = [];
    const check =
      (name: string, found: Findings): (() => Findings) =>
      () => {
        ran.push(name);
        return found;
      };
    const found = firstRefusal([
      check('a', warnings('from a')),
      check('b', findings([NAME], ['from b'])),
      check('c', findings([MAX], ['from c'])),
    ]);
    assert.deepEqual(ran, ['a', 'b']);
    assert.deepEqual(found, { errors: [NAME], warnings: ['from a', 'from b'] });
  });

  it('passes with every warning when no check finds an error', () => {
    assert.deepEqual(firstRefusal([() => warnings('w1'), () => PASSED, () => warnings('w2')]), {
      errors: [],
      warnings: ['w1', 'w2'],
    });
  });
});

describe('decisionOf', () => {
  it('allows what passed, with its warnings if any', () => {
    assert.deepEqual(decisionOf(PASSED), { allowed: true });
    assert.deepEqual(decisionOf(warnings('look again')), { allowed: true, warnings: ['look again'] });
  });

  it('refuses errors with 400 BadRequest and their aggregate, keeping the warnings', () => {
    assert.deepEqual(decisionOf(findings([NAME], ['look again'])), {
      allowed: false,
      code: 400,
      message: 'metadata.name: Required value: name is required',
      reason: 'BadRequest',
      warnings: ['look again'],
    });
  });

  it('renders the errors as told, and answers with the status it is given', () => {
    assert.deepEqual(decisionOf(findings([NAME]), headed('ConfigMap a/b is not valid'), INVALID), {
      allowed: false,
      code: 422,
      message: 'ConfigMap a/b is not valid:\n  - metadata.name: Required value: name is required',
      reason: 'Invalid',
    });
  });
});
