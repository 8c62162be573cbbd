/**
 * Node rules through the real API server: node status updates are amplified as the node's
 * ratio annotation says, and a bad ratio is refused naming the resource.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kubectl, uniqueSuffix, waitFor } from '../harness/cluster.js';
import { freshOperator } from '../harness/operator.js';

const RATIO = 'node.koordinator.sh/resource-amplification-ratio';

describe('node rules', () => {
  it('amplifies node status and refuses a ratio below 1', async (t) => {
    await freshOperator(t);
    const name = `node-${uniqueSuffix()}`;
    await kubectl(
      ['create', '-f', '-'],
      `apiVersion: v1\nkind: Node\nmetadata:\n  name: ${name}\n  annotations:\n    ${RATIO}: '{"cpu": 1.5}'\n`,
    );
    t.after(async () => {
      await kubectl(['delete', 'node', name, '--wait=false']).catch(() => undefined);
    });

    const status = await waitFor('an amplified status', async () => {
      await kubectl([
        'patch',
        'node',
        name,
        '--subresource=status',
        '--type=merge',
        '-p',
        '{"status":{"capacity":{"cpu":"1","memory":"8Gi"},"allocatable":{"cpu":"1","memory":"8Gi"}}}',
      ]);
      const { stdout } = await kubectl(['get', 'node', name, '-o', 'json']);
      const stored = JSON.parse(stdout) as {
        metadata: { annotations: Record<string, string> };
        status: { allocatable: Record<string, string> };
      };
      return stored.status.allocatable.cpu === '1500m' ? stored : undefined;
    });
    assert.equal(status.status.allocatable.memory, '8Gi');
    assert.equal(
      status.metadata.annotations['node.koordinator.sh/raw-allocatable'],
      '{"cpu":"1","memory":"8Gi"}',
    );

    await assert.rejects(
      kubectl(['annotate', 'node', name, '--overwrite', `${RATIO}={"cpu": 0.5}`]),
      (error: { stderr?: string }) => {
        assert.match(error.stderr ?? '', /denied the request: .*\.cpu: ratio 0\.5 must be at least 1/);
        return true;
      },
    );
  });
});
