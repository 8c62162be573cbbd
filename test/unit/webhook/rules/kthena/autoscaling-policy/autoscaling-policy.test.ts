import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JsonObject, KubeObject } from '../../../../../../webhook/admission/types.js';
import { mutateWorkloadAutoscalingPolicy } from '../../../../../../webhook/rules/kthena/autoscaling-policy/mutate-autoscaling-policy.js';
import { validateWorkloadAutoscalingPolicy } from '../../../../../../webhook/rules/kthena/autoscaling-policy/validate-autoscaling-policy.js';
import { assertAllowed, decide, errorsOf, type KindOf } from '../serving-requests.js';

const POLICY: KindOf = { group: 'workload', kind: 'AutoscalingPolicy', resource: 'autoscalingpolicies' };

const policy = (spec: JsonObject): KubeObject => ({
  apiVersion: 'workload.serving.volcano.sh/v1alpha1',
  kind: 'AutoscalingPolicy',
  metadata: { name: 'test-policy', namespace: 'ml' },
  spec,
});
const homogeneous = {
  target: { targetRef: { kind: 'ModelServing', name: 'test-target' } },
  minReplicas: 1,
  maxReplicas: 10,
};
const metrics = [
  { name: 'cpu', targetValue: '80' },
  { name: 'memory', targetValue: '75' },
];
const validate = (spec: JsonObject): string[] =>
  errorsOf(decide(validateWorkloadAutoscalingPolicy, POLICY, policy(spec)));

describe('validateWorkloadAutoscalingPolicy (Kthena v1.0.0 autoscalingpolicy_validator.go)', () => {
  it('allows a homogeneous policy with metrics (TestValidateAutoscalingPolicy_NoErrors)', () => {
    assertAllowed(
      decide(
        validateWorkloadAutoscalingPolicy,
        POLICY,
        policy({ tolerancePercent: 10, metrics, homogeneousTarget: homogeneous }),
      ),
    );
  });

  it('lists every error of TestValidateAutoscalingPolicy_ErrorFormatting, in order', () => {
    assert.deepEqual(
      validate({
        tolerancePercent: 101,
        metrics: [
          { name: 'cpu', targetValue: '0' },
          { name: 'cpu', targetValue: '80' },
        ],
        behavior: {
          scaleDown: { instances: 1, period: '-1m', stabilizationWindow: '35m' },
          scaleUp: {
            stablePolicy: { instances: 2, period: '35m', stabilizationWindow: '-1s' },
            panicPolicy: { percent: 50, period: '35m', panicThresholdPercent: 99, panicModeHold: '-1m' },
          },
        },
      }),
      [
        'spec.metrics[0].targetValue: Invalid value: "0": metric target value must be greater than 0 and not equal to infinity',
        'spec.metrics[1].name: Invalid value: "cpu": duplicate metric name cpu is not allowed',
        'spec: Invalid value: 0: exactly one of homogeneousTarget, heterogeneousTarget, or disaggregatedTarget must be set',
        'spec.behavior.scaleDown.period: Invalid value: "-1m0s": stable policy period must be between 0 and 30 minutes',
        'spec.behavior.scaleDown.stabilizationWindow: Invalid value: "35m0s": stable policy stabilization window must be between 0 and 30 minutes',
        'spec.behavior.scaleUp.stablePolicy.period: Invalid value: "35m0s": stable policy period must be between 0 and 30 minutes',
        'spec.behavior.scaleUp.stablePolicy.stabilizationWindow: Invalid value: "-1s": stable policy stabilization window must be between 0 and 30 minutes',
        'spec.behavior.scaleUp.panicPolicy.period: Invalid value: "35m0s": panic policy period must be between 0 and 30 minutes',
        'spec.behavior.scaleUp.panicPolicy.panicModeHold: Invalid value: "-1m0s": panic policy panic mode hold must be between 0 and 30 minutes',
      ],
    );
  });

  it('shows a target quantity in its canonical form', () => {
    assert.deepEqual(
      validate({ metrics: [{ name: 'qps', targetValue: '-0.1' }], homogeneousTarget: homogeneous }),
      [
        'spec.metrics[0].targetValue: Invalid value: "-100m": metric target value must be greater than 0 and not equal to infinity',
      ],
    );
  });

  it('checks the targetRef of each heterogeneous param and wants metrics', () => {
    const params: JsonObject[] = [
      { target: { targetRef: { kind: 'Deployment', name: 'a' } }, minReplicas: 1, maxReplicas: 2 },
      { target: { targetRef: { kind: '' } }, minReplicas: 1, maxReplicas: 2 },
    ];
    assert.deepEqual(validate({ heterogeneousTarget: { params } }), [
      'spec.heterogeneousTarget.params[0].target.targetRef.kind: Invalid value: "Deployment": targetRef.kind must be ModelServing, but got Deployment',
      'spec.heterogeneousTarget.params[1].target.targetRef.name: Invalid value: "": targetRef.name must be set, but got empty',
      'spec.metrics: Required value: at least one metric must be set',
    ]);
  });

  it('refuses two targets at once, and none', () => {
    assert.deepEqual(validate({ metrics, homogeneousTarget: homogeneous, heterogeneousTarget: {} }), [
      'spec: Invalid value: 2: exactly one of homogeneousTarget, heterogeneousTarget, or disaggregatedTarget must be set',
    ]);
  });

  it('allows the disaggregated example of Kthena (prefill/decode with a ratio constraint)', () => {
    const role = (metric: string, min: number, max: number): JsonObject => ({
      minReplicas: min,
      maxReplicas: max,
      metrics: [{ name: metric, targetValue: '0.5' }],
      metricSources: { [metric]: { prometheus: { serverURL: 'http://prom:9090', query: 'sum(up)' } } },
    });
    assertAllowed(
      decide(
        validateWorkloadAutoscalingPolicy,
        POLICY,
        policy({
          disaggregatedTarget: {
            targetRef: { kind: 'ModelServing', name: 'pd' },
            roles: { prefill: role('prefill_rps', 1, 8), decode: role('decode_rps', 1, 16) },
            ratioConstraint: {
              numeratorRole: 'prefill',
              denominatorRole: 'decode',
              minRatio: '0.25',
              maxRatio: '1',
            },
          },
        }),
      ),
    );
  });

  it("checks each disaggregated role's bounds, metrics and metric sources", () => {
    assert.deepEqual(
      validate({
        disaggregatedTarget: {
          targetRef: { name: 'pd' },
          roles: {
            '': {},
            prefill: { minReplicas: 3, maxReplicas: 2 },
            decode: { minReplicas: 1, maxReplicas: 4, metrics: [{ name: 'rps', targetValue: '1' }] },
            fixed: { minReplicas: 2, maxReplicas: 2 },
            extra: {
              minReplicas: 1,
              maxReplicas: 4,
              metrics: [{ name: 'rps', targetValue: '1' }],
              metricSources: { rps: { pod: { port: 8080 } }, other: {} },
            },
          },
        },
      }),
      [
        'spec.disaggregatedTarget.roles: Invalid value: "": role name must refer to a ModelServing.spec.template.roles[].name and must not be empty',
        'spec.disaggregatedTarget.roles[prefill].minReplicas: Invalid value: 3: minReplicas must be <= maxReplicas',
        'spec.disaggregatedTarget.roles[prefill].metrics: Required value: metrics must be set on every non-fixed role when spec.metrics is empty',
        'spec.disaggregatedTarget.roles[decode].metricSources: Invalid value: 0: metricSources must be set on every non-fixed role when metrics are configured',
        'spec.disaggregatedTarget.roles[extra].metricSources[other]: Invalid value: "other": metricSources key must match an effective metric name',
      ],
    );
  });

  it('checks the ratio constraint: roles, order, scale-to-zero and achievability', () => {
    const roles = { p: { minReplicas: 0, maxReplicas: 1 }, d: { minReplicas: 4, maxReplicas: 4 } };
    assert.deepEqual(
      validate({
        metrics: [{ name: 'rps', targetValue: '1' }],
        disaggregatedTarget: {
          targetRef: { name: 'pd' },
          roles,
          ratioConstraint: { numeratorRole: 'p', denominatorRole: 'd', minRatio: '2', maxRatio: '1' },
        },
      }).filter((error) => error.includes('ratioConstraint')),
      [
        'spec.disaggregatedTarget.ratioConstraint.minRatio: Invalid value: "2": minRatio must be <= maxRatio',
        'spec.disaggregatedTarget.ratioConstraint: Invalid value: "scale-to-zero bounds": ratio roles must be scalable-to-zero together',
        'spec.disaggregatedTarget.ratioConstraint: Invalid value: "bounds": ratioConstraint is not achievable within role replica bounds',
      ],
    );
    assert.deepEqual(
      validate({
        disaggregatedTarget: {
          targetRef: { name: 'pd' },
          roles: { a: { minReplicas: 1, maxReplicas: 1 } },
          ratioConstraint: { numeratorRole: 'a', denominatorRole: 'a', minRatio: '0', maxRatio: '0' },
        },
      }),
      [
        'spec.disaggregatedTarget.ratioConstraint.denominatorRole: Invalid value: "a": numeratorRole and denominatorRole must differ',
        'spec.disaggregatedTarget.ratioConstraint: Invalid value: "ratio": minRatio must be >= 0 and maxRatio must be > 0',
      ],
    );
  });
});

describe('mutateWorkloadAutoscalingPolicy (Kthena v1.0.0 autoscalingpolicy_mutator.go)', () => {
  it('fills an empty behavior with the whole default', () => {
    const decision = decide(
      mutateWorkloadAutoscalingPolicy,
      POLICY,
      policy({ metrics, homogeneousTarget: homogeneous }),
    );
    assert.ok(decision.allowed && decision.mutated);
    assert.deepEqual(decision.mutated.spec, {
      metrics,
      homogeneousTarget: homogeneous,
      behavior: {
        scaleUp: {
          stablePolicy: {
            instances: 4,
            percent: 100,
            period: '1m0s',
            selectPolicy: 'Or',
            stabilizationWindow: '0s',
          },
          panicPolicy: { percent: 0, period: '0s', panicThresholdPercent: 200, panicModeHold: '0s' },
        },
        scaleDown: {
          instances: 0,
          percent: 100,
          period: '1m0s',
          selectPolicy: 'Or',
          stabilizationWindow: '5m0s',
        },
      },
    });
  });

  it('only adds the missing stabilization windows to parts that are set', () => {
    const behavior = {
      scaleDown: { percent: 50 },
      scaleUp: { stablePolicy: { instances: 2 }, panicPolicy: { period: '5s' } },
    };
    const decision = decide(mutateWorkloadAutoscalingPolicy, POLICY, policy({ behavior }));
    assert.ok(decision.allowed && decision.mutated);
    assert.deepEqual(decision.mutated.spec, {
      behavior: {
        scaleDown: { percent: 50, stabilizationWindow: '5m' },
        scaleUp: { stablePolicy: { instances: 2, stabilizationWindow: '0s' }, panicPolicy: { period: '5s' } },
      },
    });
  });
});
