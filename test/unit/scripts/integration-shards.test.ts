/** planIntegration: the integration suite's files in the order the clusters side by side take them. */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  DEFAULT_SECONDS,
  EXCLUSIVE,
  FILE_SECONDS,
  planIntegration,
} from '../../../scripts/integration-shards.js';

const files = [
  'test/integration/absent-crd.test.ts',
  'test/integration/replicas.test.ts',
  'test/integration/scale.test.ts',
  'test/integration/stalled-watches.test.ts',
  'test/integration/operator-lifecycle.test.ts',
  'test/integration/gpu-class.test.ts',
  'test/integration/slo-config.test.ts',
];
const seconds = (file: string): number =>
  FILE_SECONDS[file.slice(file.lastIndexOf('/') + 1)] ?? DEFAULT_SECONDS;

describe('planIntegration', () => {
  it('runs every file once: the replica tests alone after the rest, the others longest first', () => {
    const plan = planIntegration(files);
    assert.deepEqual(plan.exclusive, ['test/integration/replicas.test.ts']);
    assert.deepEqual([...plan.queue, ...plan.exclusive].sort(), [...files].sort());
    assert.deepEqual(plan.queue.slice(0, 3), [
      'test/integration/stalled-watches.test.ts',
      'test/integration/scale.test.ts',
      'test/integration/operator-lifecycle.test.ts',
    ]);
    for (let index = 1; index < plan.queue.length; index++)
      assert.ok(
        seconds(plan.queue[index - 1] ?? '') >= seconds(plan.queue[index] ?? ''),
        plan.queue.join(', '),
      );
    // Files of one figure keep the order of their names, so that a run is repeatable.
    assert.deepEqual(plan.queue.slice(-3), [
      'test/integration/absent-crd.test.ts',
      'test/integration/gpu-class.test.ts',
      'test/integration/slo-config.test.ts',
    ]);
  });

  it('queues nothing exclusive, and keeps the exclusive files apart when they are all there is', () => {
    assert.deepEqual(planIntegration(['test/integration/gpu-class.test.ts']), {
      queue: ['test/integration/gpu-class.test.ts'],
      exclusive: [],
    });
    assert.deepEqual(planIntegration(['test/integration/replicas.test.ts']), {
      queue: [],
      exclusive: ['test/integration/replicas.test.ts'],
    });
  });

  it('has a figure only for files that exist', () => {
    const present = new Set(readdirSync(new URL('../../integration/', import.meta.url)));
    for (const name of [...Object.keys(FILE_SECONDS), ...EXCLUSIVE])
      assert.ok(present.has(name), `${name} is in integration-shards.ts but not in test/integration`);
  });
});
