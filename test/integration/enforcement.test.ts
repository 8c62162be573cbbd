/**
 * Enforcement per webhook through the real API server: a webhook in `warn` admits what it would
 * refuse and kubectl prints the refusal as a warning; in `dryrun` it admits silently and only the
 * metric moves; the operator's ConfigMap changes the enforcement at run time, and an invalid one
 * is refused when written.
 */
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { describe, it } from 'node:test';
import { kubectl, podReadyNamespace, waitFor } from '../harness/cluster.js';
import { freshOperator, httpGet } from '../harness/operator.js';

/** A BE pod without a batch priority: /validate-pod refuses the pair. */
const refusedPod = [
  'apiVersion: v1',
  'kind: Pod',
  'metadata:',
  '  generateName: enforce-',
  '  labels: {koordinator.sh/qosClass: BE}',
  'spec:',
  '  containers:',
  '  - {name: main, image: registry.invalid/app:1}',
  '',
].join('\n');
const REFUSAL = /koordinator\.sh\/qosClass=BE and priorityClass= cannot be used in combination/;

const operatorConfig = (namespace: string, enforcement: string): string =>
  [
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata: {name: admission-operator, namespace: ' + namespace + '}',
    'data:',
    `  enforcement: ${JSON.stringify(enforcement)}`,
    '',
  ].join('\n');

describe('enforcement per webhook', () => {
  it('warn admits with a warning, dryrun silently, and the ConfigMap switches back to deny', async (t) => {
    const { operator, namespace: operatorNamespace } = await freshOperator(t, {
      args: ['--enforcement=validate-pod=warn'],
    });
    const namespace = await podReadyNamespace(t, 'enforce');

    const warned = await kubectl(['create', '-n', namespace, '-f', '-'], refusedPod);
    assert.match(warned.stdout, /created/);
    assert.match(warned.stderr, /Warning: validate-pod would refuse this \(enforcement warn\): /);
    assert.match(warned.stderr, REFUSAL);

    await kubectl(['apply', '-f', '-'], operatorConfig(operatorNamespace, 'validate-pod=dryrun'));
    await waitFor('dryrun in force', async () => {
      const { body } = await httpGet(operator.metricsPort, '/metrics');
      return (
        /admission_webhook_enforcement\{webhook="validate-pod",action="dryrun"\} 1/.test(body) || undefined
      );
    });
    const silent = await kubectl(['create', '-n', namespace, '-f', '-'], refusedPod);
    assert.match(silent.stdout, /created/);
    assert.doesNotMatch(silent.stderr, /would refuse/);
    const { body } = await httpGet(operator.metricsPort, '/metrics');
    assert.match(
      body,
      /admission_decisions_total\{webhook="validate-pod\.admission-operator\.io",outcome="would-deny",enforcement="dryrun"\} 1/,
    );
    assert.match(
      body,
      /admission_decisions_total\{webhook="validate-pod\.admission-operator\.io",outcome="would-deny",enforcement="warn"\} 1/,
    );

    // A typo is refused when written; the dryrun stays in force.
    await assert.rejects(
      kubectl(['apply', '-f', '-'], operatorConfig(operatorNamespace, 'validate-pod=block')),
      (error: { stderr?: string }) => {
        assert.match(
          error.stderr ?? '',
          /data\.enforcement\.validate-pod: action must be one of deny, warn, dryrun, got "block"/,
        );
        return true;
      },
    );

    await kubectl(['apply', '-f', '-'], operatorConfig(operatorNamespace, 'validate-pod=deny'));
    const switched = performance.now();
    let attempts = 0;
    await waitFor('the next pod refused', async () => {
      attempts += 1;
      try {
        await kubectl(['create', '-n', namespace, '-f', '-'], refusedPod);
        return undefined;
      } catch (error) {
        assert.match((error as { stderr?: string }).stderr ?? '', REFUSAL);
        return true;
      }
    });
    t.diagnostic(
      `back to deny: refused ${Math.round(performance.now() - switched)} ms after the ConfigMap was written (${attempts} attempt(s))`,
    );
  });
});
