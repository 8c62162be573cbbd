import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FieldPath } from '../../../../../webhook/rules/shared/field-errors.js';
import { quantityAt } from '../../../../../webhook/rules/shared/quantity-at.js';

const NANO = 1_000_000_000n;

describe('quantityAt', () => {
  it('reads a number, and names the field of what it cannot read', () => {
    const path = FieldPath.of('spec', 'max').key('cpu');
    assert.deepEqual(quantityAt(2, path), { ok: true, value: 2n * NANO });
    assert.deepEqual(quantityAt('500m', path), { ok: true, value: 500_000_000n });
    const cases: [unknown, string][] = [
      [{}, 'spec.max[cpu]: must be a quantity string, got a JSON object'],
      [[], 'spec.max[cpu]: must be a quantity string, got a JSON array'],
      [true, 'spec.max[cpu]: must be a quantity string, got a boolean'],
      [null, 'spec.max[cpu]: must be a quantity string, got null'],
      ['lots', 'spec.max[cpu]: "lots" is not a quantity (e.g. 500m, 2, 1.5Gi, 1e3)'],
      [
        '1e50000000',
        'spec.max[cpu]: "1e50000000" is too large: quantities are bounded by 2^63-1 (9223372036854775807) units',
      ],
    ];
    for (const [value, message] of cases) {
      const read = quantityAt(value, path);
      assert.equal(read.ok ? 'read' : read.error.toString(), message);
    }
  });
});
