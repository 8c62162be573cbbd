/**
 * Koordinator's colocation checks on pods through the real API server.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kubectl, podReadyNamespace } from '../harness/cluster.js';
import { freshOperator } from '../harness/operator.js';

function pod(labels: Record<string, string>, cpu: string): string {
  const labelLines = Object.entries(labels).map(([key, value]) => `    ${key}: "${value}"`);
  return [
    'apiVersion: v1',
    'kind: Pod',
    'metadata:',
    '  generateName: colo-',
    '  labels:',
    ...labelLines,
    'spec:',
    '  containers:',
    `  - {name: main, image: registry.invalid/app:1, resources: {requests: {cpu: "${cpu}"}}}`,
    '',
  ].join('\n');
}

describe('colocation checks', () => {
  it('refuses a forbidden QoS × priority pair and fractional CPUs for LSR, admits a valid BE batch pod', async (t) => {
    await freshOperator(t);
    const namespace = await podReadyNamespace(t, 'colo');
    await assert.rejects(
      kubectl(['create', '-n', namespace, '-f', '-'], pod({ 'koordinator.sh/qosClass': 'BE' }, '1')),
      (error: { stderr?: string }) => {
        assert.match(
          error.stderr ?? '',
          /denied the request: Pod: Forbidden: koordinator\.sh\/qosClass=BE and priorityClass= cannot be used in combination/,
        );
        return true;
      },
    );
    await assert.rejects(
      kubectl(
        ['create', '-n', namespace, '-f', '-'],
        pod({ 'koordinator.sh/qosClass': 'LSR', 'koordinator.sh/priority-class': 'koord-prod' }, '1500m'),
      ),
      (error: { stderr?: string }) => {
        assert.match(error.stderr ?? '', /the requested CPUs of LSR Pod must be integer/);
        return true;
      },
    );
    const { stdout } = await kubectl(
      ['create', '-n', namespace, '-f', '-'],
      pod({ 'koordinator.sh/qosClass': 'BE', 'koordinator.sh/priority-class': 'koord-batch' }, '1'),
    );
    assert.match(stdout, /created/);
  });
});
