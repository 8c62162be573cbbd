import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type {
  AdmissionRequest,
  Decision,
  JsonObject,
  KubeObject,
} from '../../../../../webhook/admission/types.js';
import { validateAutoscalingPolicyBinding } from '../../../../../webhook/rules/kthena/validate-autoscaling-policy-binding.js';
import { stateSnapshot } from '../../../../harness/state.js';
import { admissionRequest } from '../../../../harness/requests.js';

const target: JsonObject = {
  targetRef: { kind: 'ModelInfer', name: 'llama-vllm' },
  metricEndpoint: { uri: '/metrics', port: 8100 },
};
const SCALING: JsonObject = { target, minReplicas: 1, maxReplicas: 4 };
const OPTIMIZER: JsonObject = {
  costExpansionRatePercent: 200,
  params: [{ target, cost: 10, minReplicas: 1, maxReplicas: 2 }],
};

function binding(spec: JsonObject, namespace: string | null = 'default'): KubeObject {
  return {
    apiVersion: 'registry.volcano.sh/v1alpha1',
    kind: 'AutoscalingPolicyBinding',
    metadata: { name: 'bind', ...(namespace === null ? {} : { namespace }) },
    spec,
  };
}

function request(
  object: KubeObject | null,
  namespace = 'default',
  operation: AdmissionRequest['operation'] = 'CREATE',
): AdmissionRequest {
  return admissionRequest({
    group: 'registry.volcano.sh',
    version: 'v1alpha1',
    kind: 'AutoscalingPolicyBinding',
    resource: 'autoscalingpolicybindings',
    namespace: namespace,
    operation,
    object,
  });
}

// As Kthena's own test fixture: one policy, default/dummy-policy.
const state = stateSnapshot({ autoscalingPolicies: [{ namespace: 'default', name: 'dummy-policy' }] });
const decide = (object: KubeObject, namespace = 'default'): Decision =>
  validateAutoscalingPolicyBinding(request(object, namespace), state);

function errorsOf(decision: Decision): string[] {
  assert.ok(!decision.allowed, 'expected a denial');
  assert.equal(decision.code, 400);
  const [head, ...lines] = decision.message.split('\n');
  assert.equal(head, 'validation failed:');
  return lines.map((line) => line.replace(/^ {2}- /, ''));
}

function assertAllowed(decision: Decision): void {
  assert.ok(decision.allowed, decision.allowed ? '' : decision.message);
}

describe('validateAutoscalingPolicyBinding', () => {
  it('allows a binding with exactly one configuration and an existing policy', () => {
    assertAllowed(decide(binding({ policyRef: { name: 'dummy-policy' }, scalingConfiguration: SCALING })));
    assertAllowed(
      decide(binding({ policyRef: { name: 'dummy-policy' }, optimizerConfiguration: OPTIMIZER })),
    );
  });

  it('allows DELETE and requests without an object', () => {
    assertAllowed(validateAutoscalingPolicyBinding(request(null, 'default', 'DELETE'), state));
    assertAllowed(validateAutoscalingPolicyBinding(request(null), state));
  });

  // Kthena's own table (autoscaling_binding_validator_test.go), line for line.
  it('neither configuration set', () => {
    assert.deepEqual(errorsOf(decide(binding({ policyRef: { name: 'dummy-policy' } }))), [
      'spec.ScalingConfiguration: Required value: spec.ScalingConfiguration should be set if spec.OptimizerConfiguration does not exist',
    ]);
  });

  it('both configurations set', () => {
    assert.deepEqual(
      errorsOf(
        decide(
          binding({
            policyRef: { name: 'dummy-policy' },
            scalingConfiguration: SCALING,
            optimizerConfiguration: OPTIMIZER,
          }),
        ),
      ),
      [
        'spec.ScalingConfiguration: Forbidden: both spec.OptimizerConfiguration and spec.ScalingConfiguration can not be set at the same time',
      ],
    );
  });

  it('policy missing', () => {
    assert.deepEqual(
      errorsOf(
        decide(binding({ policyRef: { name: 'non-existent-policy' }, scalingConfiguration: SCALING })),
      ),
      [
        'spec.PolicyRef: Invalid value: "non-existent-policy": autoscaling policy resource non-existent-policy does not exist',
      ],
    );
  });

  it('counts an empty configuration object as set', () => {
    assertAllowed(decide(binding({ policyRef: { name: 'dummy-policy' }, scalingConfiguration: {} })));
    assert.equal(
      errorsOf(
        decide(
          binding({
            policyRef: { name: 'dummy-policy' },
            scalingConfiguration: {},
            optimizerConfiguration: {},
          }),
        ),
      ).length,
      1,
    );
  });

  it('reports the configuration error before the policy error', () => {
    assert.deepEqual(errorsOf(decide(binding({ policyRef: { name: 'gone' } }))), [
      'spec.ScalingConfiguration: Required value: spec.ScalingConfiguration should be set if spec.OptimizerConfiguration does not exist',
      'spec.PolicyRef: Invalid value: "gone": autoscaling policy resource gone does not exist',
    ]);
  });

  it("looks for the policy in the binding's own namespace", () => {
    assert.deepEqual(
      errorsOf(
        decide(
          binding({ policyRef: { name: 'dummy-policy' }, scalingConfiguration: SCALING }, 'team-a'),
          'team-a',
        ),
      ),
      [
        'spec.PolicyRef: Invalid value: "dummy-policy": autoscaling policy resource dummy-policy does not exist',
      ],
    );
    // The object's namespace is what Kthena reads, over the request's.
    assertAllowed(
      decide(
        binding({ policyRef: { name: 'dummy-policy' }, scalingConfiguration: SCALING }, 'default'),
        'team-a',
      ),
    );
  });

  it("falls back to the request's namespace when the object carries none", () => {
    assertAllowed(
      decide(
        binding({ policyRef: { name: 'dummy-policy' }, scalingConfiguration: SCALING }, null),
        'default',
      ),
    );
    assert.equal(
      errorsOf(
        decide(
          binding({ policyRef: { name: 'dummy-policy' }, scalingConfiguration: SCALING }, null),
          'team-a',
        ),
      ).length,
      1,
    );
  });

  it('reports an empty policy name as client-go refuses the GET, as an internal error', () => {
    const specs: JsonObject[] = [
      { scalingConfiguration: SCALING },
      { policyRef: {}, scalingConfiguration: SCALING },
      { policyRef: { name: '' }, scalingConfiguration: SCALING },
    ];
    for (const spec of specs) {
      assert.deepEqual(errorsOf(decide(binding(spec))), [
        'spec.PolicyRef: Internal error: resource name may not be empty',
      ]);
    }
  });

  it('does not check targets, replica bounds or costs (the CRD does)', () => {
    assertAllowed(
      decide(
        binding({
          policyRef: { name: 'dummy-policy' },
          scalingConfiguration: { target: {}, minReplicas: 9, maxReplicas: 1 },
        }),
      ),
    );
  });

  it('refuses a malformed binding, as Kthena fails to decode it', () => {
    const decision = decide(
      binding({
        policyRef: { name: 5 },
        scalingConfiguration: {
          target: { ...target, metricEndpoint: { port: '8100' }, additionalMatchLabels: { tier: true } },
          minReplicas: '1',
        },
      }),
    );
    assert.ok(!decision.allowed);
    assert.equal(decision.code, 400);
    assert.equal(
      decision.message,
      [
        'failed to decode object:',
        '  - spec.policyRef.name: Invalid value: 5: must be a string',
        '  - spec.scalingConfiguration.target.additionalMatchLabels[tier]: Invalid value: true: must be a string',
        '  - spec.scalingConfiguration.target.metricEndpoint.port: Invalid value: "8100": must be an int32 (a whole number from -2147483648 to 2147483647)',
        '  - spec.scalingConfiguration.minReplicas: Invalid value: "1": must be an int32 (a whole number from -2147483648 to 2147483647)',
      ].join('\n'),
    );
  });
});
