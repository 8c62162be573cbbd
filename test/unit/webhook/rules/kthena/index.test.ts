import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as kthena from '../../../../../webhook/rules/kthena/index.js';

describe('kthena rules index', () => {
  it('exports exactly the five rules the webhook table wires', () => {
    assert.deepEqual(Object.keys(kthena).sort(), [
      'mutateAutoscalingPolicy',
      'mutateModel',
      'validateAutoscalingPolicy',
      'validateAutoscalingPolicyBinding',
      'validateModel',
    ]);
    for (const rule of Object.values(kthena)) assert.equal(typeof rule, 'function');
  });
});
