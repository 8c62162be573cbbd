/**
 * Kthena's Model, AutoscalingPolicy and AutoscalingPolicyBinding rules through the real API
 * server, with the project's CRDs: defaults read back, refusals reaching kubectl with Kthena's
 * messages, and every handler shown to be called (the upstream chart wired them wrongly).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { installCrds, kubectl, testNamespace, waitFor } from '../harness/cluster.js';
import { freshOperator, logsMatching } from '../harness/operator.js';

const CRDS = [
  'models.registry.volcano.sh',
  'autoscalingpolicies.registry.volcano.sh',
  'autoscalingpolicybindings.registry.volcano.sh',
];

function model(name: string, backend: string, extraSpec = ''): string {
  return `apiVersion: registry.volcano.sh/v1alpha1
kind: Model
metadata:
  name: ${name}
spec:
${extraSpec}  backends:
  - name: b0
    type: vLLM
    modelURI: hf://org/model
${backend}`;
}

const POLICY = `apiVersion: registry.volcano.sh/v1alpha1
kind: AutoscalingPolicy
metadata:
  name: qps-policy
spec:
  metrics:
  - metricName: qps
    targetValue: "100"
`;

function binding(policy: string): string {
  return `apiVersion: registry.volcano.sh/v1alpha1
kind: AutoscalingPolicyBinding
metadata:
  name: bind-${policy}
spec:
  policyRef:
    name: ${policy}
  scalingConfiguration:
    target:
      targetRef:
        kind: ModelServing
        name: llama
    minReplicas: 1
    maxReplicas: 3
`;
}

async function expectRefusal(namespace: string, yaml: string, message: RegExp): Promise<void> {
  await assert.rejects(kubectl(['apply', '-n', namespace, '-f', '-'], yaml), (error: { stderr?: string }) => {
    assert.match(error.stderr ?? '', message);
    return true;
  });
}

describe('Kthena models', () => {
  it('defaults and validates Models, AutoscalingPolicies and bindings with Kthena’s messages', async (t) => {
    await installCrds(...CRDS);
    const { operator } = await freshOperator(t);
    const namespace = await testNamespace(t, 'models');

    // A valid Model with model-level autoscaling gets Kthena's defaults.
    await kubectl(
      ['apply', '-n', namespace, '-f', '-'],
      model(
        'llama',
        `    minReplicas: 1
    maxReplicas: 3
    scalingCost: 10
    workers:
    - {type: server, image: "vllm/vllm-openai:v0.10.0", replicas: 1, pods: 1}
`,
        `  autoscalingPolicy:
    metrics:
    - {metricName: qps, targetValue: "100"}
`,
      ),
    );
    const { stdout } = await kubectl([
      'get',
      'models.registry.volcano.sh',
      '-n',
      namespace,
      'llama',
      '-o',
      'json',
    ]);
    const stored = JSON.parse(stdout) as {
      spec: { costExpansionRatePercent?: number; backends: { scaleToZeroGracePeriod?: string }[] };
    };
    assert.equal(stored.spec.costExpansionRatePercent, 200);
    assert.equal(stored.spec.backends[0]?.scaleToZeroGracePeriod, '30s');

    await expectRefusal(
      namespace,
      model(
        'bounds',
        `    minReplicas: 5
    maxReplicas: 3
    workers:
    - {type: server, image: "vllm/vllm-openai:v0.10.0", replicas: 1, pods: 1}
`,
      ),
      /denied the request: validation failed:\n\s+- spec\.backends\[0\]\.minReplicas: Invalid value: 5: minReplicas cannot be greater than maxReplicas/,
    );
    await expectRefusal(
      namespace,
      model(
        'workers',
        `    minReplicas: 1
    maxReplicas: 1
    workers:
    - {type: prefill, image: "vllm/vllm-openai:v0.10.0", replicas: 1, pods: 1}
`,
      ),
      /spec\.backends\[0\]\.workers\[0\]\.type: Invalid value: "prefill": If backend type is 'vLLM', the worker type must be 'server'/,
    );

    // AutoscalingPolicy: defaults, and a refusal.
    await kubectl(['apply', '-n', namespace, '-f', '-'], POLICY);
    const { stdout: policyOut } = await kubectl([
      'get',
      'autoscalingpolicies.registry.volcano.sh',
      '-n',
      namespace,
      'qps-policy',
      '-o',
      'jsonpath={.spec.behavior.scaleDown.stabilizationWindow}',
    ]);
    assert.equal(policyOut, '5m0s');
    await expectRefusal(
      namespace,
      POLICY.replace('qps-policy', 'dupes').replace(
        '    targetValue: "100"\n',
        '    targetValue: "100"\n  - metricName: qps\n    targetValue: "5"\n',
      ),
      /duplicate metric name/,
    );

    // A binding to a missing policy is refused; once the policy exists (the watch sees it), accepted.
    await expectRefusal(
      namespace,
      binding('missing-policy'),
      /autoscaling policy resource missing-policy does not exist/,
    );
    await waitFor('the binding to its existing policy to be admitted', () =>
      kubectl(['apply', '-n', namespace, '-f', '-'], binding('qps-policy')),
    );

    const called = new Set(logsMatching(operator, /admission decision/).map((line) => String(line.webhook)));
    for (const webhook of [
      'mutate-model.admission-operator.io',
      'validate-model.admission-operator.io',
      'mutate-registry-autoscalingpolicy.admission-operator.io',
      'validate-registry-autoscalingpolicy.admission-operator.io',
      'validate-autoscalingpolicybinding.admission-operator.io',
    ]) {
      assert.ok(called.has(webhook), `the API server never called ${webhook}`);
    }
  });
});
