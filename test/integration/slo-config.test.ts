/**
 * Koordinator's slo-controller-config through the real API server: a bad edit is refused with the
 * key and the bound in the message, a good one is accepted, and deleting it is allowed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kubectl } from '../harness/cluster.js';
import { freshOperator } from '../harness/operator.js';

const NAMESPACE = 'koordinator-system';

function sloConfig(thresholds: string): string {
  return [
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    '  name: slo-controller-config',
    `  namespace: ${NAMESPACE}`,
    'data:',
    `  resource-threshold-config: '${thresholds}'`,
    '',
  ].join('\n');
}

describe('slo-controller-config', () => {
  it('refuses a threshold out of bounds, naming key, path and bound; accepts a good one; allows deletion', async (t) => {
    await freshOperator(t);
    await kubectl(['create', 'namespace', NAMESPACE]).catch(() => undefined);
    t.after(async () => {
      await kubectl(['delete', 'configmap', 'slo-controller-config', '-n', NAMESPACE, '--ignore-not-found']);
    });

    await assert.rejects(
      kubectl(
        ['apply', '-f', '-'],
        sloConfig('{"clusterStrategy":{"enable":true,"cpuSuppressThresholdPercent":120}}'),
      ),
      (error: { stderr?: string }) => {
        assert.match(
          error.stderr ?? '',
          /denied the request: ConfigMap koordinator-system\/slo-controller-config is not a valid SLO configuration:/,
        );
        assert.match(
          error.stderr ?? '',
          /data\[resource-threshold-config\]: clusterStrategy\.cpuSuppressThresholdPercent: Invalid value: 120: must be at most 100/,
        );
        return true;
      },
    );

    const good = sloConfig('{"clusterStrategy":{"enable":true,"cpuSuppressThresholdPercent":65}}');
    assert.match((await kubectl(['apply', '-f', '-'], good)).stdout, /created|configured/);

    // An edit that breaks an ordering is refused too, and the stored config stays as it was.
    await assert.rejects(
      kubectl(
        ['apply', '-f', '-'],
        sloConfig('{"clusterStrategy":{"memoryEvictThresholdPercent":60,"memoryEvictLowerPercent":70}}'),
      ),
      /memoryEvictLowerPercent: Invalid value: 70: must be less than memoryEvictThresholdPercent \(60\)/,
    );
    const { stdout } = await kubectl([
      'get',
      'configmap',
      'slo-controller-config',
      '-n',
      NAMESPACE,
      '-o',
      'json',
    ]);
    assert.match(stdout, /cpuSuppressThresholdPercent\\":65/);

    assert.match(
      (await kubectl(['delete', 'configmap', 'slo-controller-config', '-n', NAMESPACE])).stdout,
      /deleted/,
    );
  });
});
