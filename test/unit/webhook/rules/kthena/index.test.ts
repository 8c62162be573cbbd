import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as kthena from '../../../../../webhook/rules/kthena/index.js';

describe('kthena rules index', () => {
  it('exports exactly the seven rules the webhook table wires', () => {
    assert.deepEqual(Object.keys(kthena).sort(), [
      'mutateModelBooster',
      'mutateWorkloadAutoscalingPolicy',
      'validateModelBooster',
      'validateModelRoute',
      'validateModelServer',
      'validateModelServing',
      'validateWorkloadAutoscalingPolicy',
    ]);
    for (const rule of Object.values(kthena)) assert.equal(typeof rule, 'function');
  });
});
