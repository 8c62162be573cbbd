/** planIntegration: the integration suite's files dealt among clusters run side by side. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_SECONDS, FILE_SECONDS, planIntegration } from '../../../scripts/integration-shards.js';

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
  it('runs every file once: the replica tests alone after the rest, the others dealt longest first', () => {
    const plan = planIntegration(files, 2);
    assert.deepEqual(plan.exclusive, ['test/integration/replicas.test.ts']);
    assert.deepEqual([...plan.shards.flat(), ...plan.exclusive].sort(), [...files].sort());
    // The two longest shared files go to different clusters.
    const shardOf = (name: string): number =>
      plan.shards.findIndex((shard) => shard.some((f) => f.endsWith(name)));
    assert.notEqual(shardOf('scale.test.ts'), shardOf('stalled-watches.test.ts'));
    // Balanced: no cluster has more than the longest file's time over another.
    const loads = plan.shards.map((shard) => shard.reduce((sum, file) => sum + seconds(file), 0));
    assert.ok(Math.max(...loads) - Math.min(...loads) <= 240, JSON.stringify(loads));
    for (const shard of plan.shards) assert.deepEqual(shard, [...shard].sort(), 'each shard in file order');
  });

  it('puts everything shared on one cluster when asked for one, and drops empty shards', () => {
    const one = planIntegration(files, 1);
    assert.equal(one.shards.length, 1);
    assert.equal(one.shards[0]?.length, files.length - 1);
    const many = planIntegration(['test/integration/gpu-class.test.ts'], 3);
    assert.deepEqual(many, { shards: [['test/integration/gpu-class.test.ts']], exclusive: [] });
    assert.deepEqual(planIntegration(['test/integration/replicas.test.ts'], 2), {
      shards: [],
      exclusive: ['test/integration/replicas.test.ts'],
    });
  });
});
