/**
 * The whole path a user sees: kubectl → kube-apiserver → our HTTPS server (verified with the
 * caBundle the operator wrote) → a rule → the decision back in kubectl's output. The rules here
 * are test entries served by the real operator; the product's own rules arrive with their issues.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import { pino } from 'pino';
import { parseOptions, type OperatorOptions } from '../../operator/config/options.js';
import { runOperator } from '../../operator/operator.js';
import { freePorts } from '../../scripts/cluster/control-plane.js';
import { allow, deny, mutate } from '../../webhook/admission/decisions.js';
import type { WebhookEntry } from '../../webhook/table.js';
import { clientVerificationArgs, clusterKubeConfig, kubectl, testNamespace } from '../harness/cluster.js';
import { cleanConfigurationsAfter, stopBeforeCleanup, waitForPublishedSecret } from '../harness/operator.js';

const DENY_LABEL = 'admission-operator.test/deny';
const MUTATE_LABEL = 'admission-operator.test/mutate';

function testEntry(
  overrides: Pick<WebhookEntry, 'name' | 'path' | 'type' | 'handler' | 'objectSelector'>,
): WebhookEntry {
  return {
    resourceRules: [
      {
        apiGroups: [''],
        apiVersions: ['v1'],
        resources: ['configmaps'],
        operations: ['CREATE'],
        scope: 'Namespaced',
      },
    ],
    failurePolicy: 'Fail',
    timeoutSeconds: 10,
    namespaceSelector: {},
    matchConditions: [],
    featureGate: 'ConfigMapValidatingWebhook',
    ...(overrides.type === 'mutating' ? { reinvocationPolicy: 'Never' as const } : {}),
    ...overrides,
  };
}

const entries: WebhookEntry[] = [
  testEntry({
    name: 'deny-test.admission-operator.io',
    path: '/test-deny',
    type: 'validating',
    objectSelector: { matchLabels: { [DENY_LABEL]: 'true' } },
    handler: () =>
      deny(
        `metadata.labels[${DENY_LABEL}]: Forbidden: ConfigMaps with this label are refused (rule: test-deny)`,
      ),
  }),
  testEntry({
    name: 'mutate-test.admission-operator.io',
    path: '/test-mutate',
    type: 'mutating',
    objectSelector: { matchLabels: { [MUTATE_LABEL]: 'true' } },
    handler: (request) => {
      const object = structuredClone(request.object!);
      object.data = { ...((object.data ?? {}) as Record<string, string>), mutated: 'by admission-operator' };
      return mutate(object);
    },
  }),
  testEntry({
    name: 'allow-test.admission-operator.io',
    path: '/test-allow',
    type: 'validating',
    objectSelector: { matchLabels: { [MUTATE_LABEL]: 'true' } },
    handler: () => allow(['checked by the test rule']),
  }),
];

describe('admission through the real API server', () => {
  it('brings a denial to kubectl with our message, applies a mutation and passes warnings on', async (t) => {
    cleanConfigurationsAfter(t);
    const operatorNamespace = await testNamespace(t, 'op');
    const namespace = await testNamespace(t, 'cm');
    const [port] = await freePorts(1);
    const parsed = parseOptions(
      [
        `--namespace=${operatorNamespace}`,
        `--port=${port}`,
        '--bind-address=127.0.0.1',
        ...(await clientVerificationArgs()),
      ],
      {},
    );
    assert.equal(parsed.help, false);
    const options = (parsed as { options: OperatorOptions }).options;
    const kubeConfig = await clusterKubeConfig();
    const operator = await runOperator(
      options,
      kubeConfig,
      { mode: 'url', host: '127.0.0.1', port: port! },
      pino({ level: 'silent' }),
      { webhooks: entries },
    );
    stopBeforeCleanup(t, () => operator.stop());
    await waitForPublishedSecret(operatorNamespace);

    const denied = kubectl(
      ['create', '-n', namespace, '-f', '-'],
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: refused\n  labels:\n    ${DENY_LABEL}: "true"\n`,
    );
    await assert.rejects(denied, (error: { stderr?: string }) => {
      assert.match(
        error.stderr ?? '',
        /admission webhook "deny-test\.admission-operator\.io" denied the request: metadata\.labels\[admission-operator\.test\/deny\]: Forbidden: ConfigMaps with this label are refused \(rule: test-deny\)/,
      );
      return true;
    });

    const created = await kubectl(
      ['create', '-n', namespace, '-f', '-'],
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: changed\n  labels:\n    ${MUTATE_LABEL}: "true"\ndata:\n  own: value\n`,
    );
    assert.match(created.stderr, /Warning: checked by the test rule/);
    const stored = await kubeConfig
      .makeApiClient(CoreV1Api)
      .readNamespacedConfigMap({ namespace, name: 'changed' });
    assert.deepEqual(stored.data, { own: 'value', mutated: 'by admission-operator' });
  });
});
