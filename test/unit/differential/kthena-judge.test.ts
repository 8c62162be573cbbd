import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JsonObject } from '../../../webhook/admission/types.js';
import { judge } from '../../differential/kthena/judge.js';

const review: JsonObject = {
  request: { uid: 'u', object: { apiVersion: 'x/v1', kind: 'K', metadata: { name: 'n' }, spec: {} } },
};
const denial = (message: string, code?: number): JsonObject => ({
  response: { uid: 'u', allowed: false, status: { message, ...(code === undefined ? {} : { code }) } },
});
const kthena = (body: JsonObject) => ({ status: 200, body: JSON.stringify(body) });

describe('the Kthena differential judge', () => {
  it('reads Kthena’s code-less refusal as the API server does (400)', () => {
    const judged = judge(
      '/validate/modelbooster',
      review,
      denial('validation failed:\n  - a', 400),
      kthena(denial('validation failed:\n  - a')),
    );
    assert.deepEqual(judged.differences, []);
  });

  it('documents our named decode refusal against Kthena’s plain-text 400, and nothing else as it', () => {
    const theirs = { status: 400, body: 'failed to decode object: json: cannot unmarshal string\n' };
    const ours = denial('failed to decode object:\n  - spec.x: Invalid value: "a": must be an int32', 400);
    assert.equal(judge('/validate/modelbooster', review, ours, theirs).documented, 'decode-refusal');
    const allowed = { response: { uid: 'u', allowed: true } };
    assert.equal(judge('/validate/modelbooster', review, allowed, theirs).documented, undefined);
  });

  it('lets only errors about map entries change places', () => {
    const a = 'spec.disaggregatedTarget.roles[p].minReplicas: x';
    const b = 'spec.disaggregatedTarget.roles[d].minReplicas: y';
    const c = 'spec.behavior.scaleDown.period: z';
    const d = 'spec.metrics[0].name: w';
    const message = (...lines: string[]): string =>
      `validation failed:\n${lines.map((line) => `  - ${line}`).join('\n')}`;
    const moved = judge(
      '/validate/autoscalingpolicy',
      review,
      denial(message(a, b, c), 400),
      kthena(denial(message(b, a, c))),
    );
    assert.equal(moved.documented, 'map-order');
    const reordered = judge(
      '/validate/autoscalingpolicy',
      review,
      denial(message(d, c), 400),
      kthena(denial(message(c, d))),
    );
    assert.deepEqual(reordered.differences, ['message']);
    assert.equal(reordered.documented, undefined);
  });
});
