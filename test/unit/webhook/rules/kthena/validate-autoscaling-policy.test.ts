import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type {
  AdmissionRequest,
  Decision,
  JsonObject,
  JsonValue,
  KubeObject,
} from '../../../../../webhook/admission/types.js';
import { validateAutoscalingPolicy } from '../../../../../webhook/rules/kthena/validate-autoscaling-policy.js';
import { stateSnapshot } from '../../../../harness/state.js';
import { admissionRequest } from '../../../../harness/requests.js';

function policy(spec: JsonObject): KubeObject {
  return {
    apiVersion: 'registry.volcano.sh/v1alpha1',
    kind: 'AutoscalingPolicy',
    metadata: { name: 'qps-policy', namespace: 'ml' },
    spec,
  };
}

const metric = (metricName: string, targetValue: JsonValue = '100'): JsonObject => ({
  metricName,
  targetValue,
});

function request(
  object: KubeObject | null,
  operation: AdmissionRequest['operation'] = 'CREATE',
): AdmissionRequest {
  return admissionRequest({
    group: 'registry.volcano.sh',
    version: 'v1alpha1',
    kind: 'AutoscalingPolicy',
    resource: 'autoscalingpolicies',
    namespace: 'ml',
    operation,
    object,
  });
}

const state = stateSnapshot();
const decide = (object: KubeObject): Decision => validateAutoscalingPolicy(request(object), state);

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

/** A behavior with one window set at `path` (scaleDown, scaleUp.stablePolicy, scaleUp.panicPolicy). */
function behaviorWith(part: 'scaleDown' | 'stablePolicy' | 'panicPolicy', fields: JsonObject): JsonObject {
  if (part === 'scaleDown') return { scaleDown: fields };
  return { scaleUp: { [part]: fields } };
}

describe('validateAutoscalingPolicy', () => {
  it('allows a valid policy (what the CRD defaults and the mutator leave)', () => {
    assertAllowed(
      decide(
        policy({
          tolerancePercent: 10,
          metrics: [metric('qps', '100'), metric('latency', '250m'), metric('kv', 3), metric('mem', '1.5Gi')],
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
              stabilizationWindow: '5m',
            },
          },
        }),
      ),
    );
  });

  it('allows DELETE and requests without an object', () => {
    assertAllowed(validateAutoscalingPolicy(request(null, 'DELETE'), state));
    assertAllowed(validateAutoscalingPolicy(request(null), state));
  });

  describe('metrics', () => {
    it('refuses a target value that is not greater than 0', () => {
      assert.deepEqual(errorsOf(decide(policy({ metrics: [metric('qps', '-100m')] }))), [
        'spec.metrics[0].targetValue: Invalid value: "-100m": metric target value must be greater than 0 and not equal to infinity',
      ]);
      assert.deepEqual(
        errorsOf(decide(policy({ metrics: [metric('a', '0'), metric('b', 0), metric('c', -2)] }))),
        [
          'spec.metrics[0].targetValue: Invalid value: "0": metric target value must be greater than 0 and not equal to infinity',
          'spec.metrics[1].targetValue: Invalid value: "0": metric target value must be greater than 0 and not equal to infinity',
          'spec.metrics[2].targetValue: Invalid value: "-2": metric target value must be greater than 0 and not equal to infinity',
        ],
      );
    });

    it('treats an absent target value as Go’s zero quantity', () => {
      assert.deepEqual(errorsOf(decide(policy({ metrics: [{ metricName: 'qps' }] }))), [
        'spec.metrics[0].targetValue: Invalid value: "0": metric target value must be greater than 0 and not equal to infinity',
      ]);
    });

    it('refuses a target Go reads as infinite, but not a tiny positive one', () => {
      assert.deepEqual(errorsOf(decide(policy({ metrics: [metric('qps', '1e400')] }))), [
        'spec.metrics[0].targetValue: Invalid value: "1e400": metric target value must be greater than 0 and not equal to infinity',
      ]);
      assertAllowed(decide(policy({ metrics: [metric('qps', '1e-20'), metric('b', '1n')] })));
    });

    it('refuses a duplicate metric name at each repeat, compared exactly', () => {
      const decision = decide(
        policy({
          metrics: [metric('qps'), metric('QPS'), metric('qps'), metric('qps'), metric(''), metric('')],
        }),
      );
      assert.deepEqual(errorsOf(decision), [
        'spec.metrics[2].metricName: Invalid value: "qps": duplicate metric name qps is not allowed',
        'spec.metrics[3].metricName: Invalid value: "qps": duplicate metric name qps is not allowed',
        'spec.metrics[5].metricName: Invalid value: "": duplicate metric name  is not allowed',
      ]);
    });

    it('reports the target before the name within one metric', () => {
      assert.deepEqual(errorsOf(decide(policy({ metrics: [metric('qps'), metric('qps', '-1')] }))), [
        'spec.metrics[1].targetValue: Invalid value: "-1": metric target value must be greater than 0 and not equal to infinity',
        'spec.metrics[1].metricName: Invalid value: "qps": duplicate metric name qps is not allowed',
      ]);
    });
  });

  describe('windows (0 to 30 minutes, inclusive; shown as Go durations, unquoted)', () => {
    const stableCases: [part: 'scaleDown' | 'stablePolicy', prefix: string][] = [
      ['scaleDown', 'spec.behavior.scaleDown'],
      ['stablePolicy', 'spec.behavior.scaleUp.stablePolicy'],
    ];
    for (const [part, prefix] of stableCases) {
      it(`${prefix}: period and stabilization window`, () => {
        const decision = decide(
          policy({
            metrics: [metric('qps')],
            behavior: behaviorWith(part, { period: '-1m', stabilizationWindow: '35m' }),
          }),
        );
        assert.deepEqual(errorsOf(decision), [
          `${prefix}.period: Invalid value: -1m0s: stable policy period must be between 0 and 30 minutes`,
          `${prefix}.stabilizationWindow: Invalid value: 35m0s: stable policy stabilization window must be between 0 and 30 minutes`,
        ]);
        assert.deepEqual(
          errorsOf(
            decide(
              policy({
                metrics: [metric('qps')],
                behavior: behaviorWith(part, { period: '30m0.000000001s' }),
              }),
            ),
          ),
          [
            `${prefix}.period: Invalid value: 30m0.000000001s: stable policy period must be between 0 and 30 minutes`,
          ],
        );
        for (const window of ['0s', '30m', '1800s', '15s']) {
          assertAllowed(
            decide(
              policy({
                metrics: [metric('qps')],
                behavior: behaviorWith(part, { period: window, stabilizationWindow: window }),
              }),
            ),
          );
        }
      });
    }

    it('spec.behavior.scaleUp.panicPolicy: period and panic mode hold', () => {
      const decision = decide(
        policy({
          metrics: [metric('qps')],
          behavior: behaviorWith('panicPolicy', { period: '45m', panicModeHold: '-5s' }),
        }),
      );
      assert.deepEqual(errorsOf(decision), [
        'spec.behavior.scaleUp.panicPolicy.period: Invalid value: 45m0s: panic policy period must be between 0 and 30 minutes',
        'spec.behavior.scaleUp.panicPolicy.panicModeHold: Invalid value: -5s: panic policy panic mode hold must be between 0 and 30 minutes',
      ]);
      assert.deepEqual(
        errorsOf(
          decide(
            policy({ metrics: [metric('qps')], behavior: behaviorWith('panicPolicy', { period: '-1ns' }) }),
          ),
        ),
        [
          'spec.behavior.scaleUp.panicPolicy.period: Invalid value: -1ns: panic policy period must be between 0 and 30 minutes',
        ],
      );
      // An absent period is a zero Duration, which passes.
      assertAllowed(
        decide(policy({ metrics: [metric('qps')], behavior: behaviorWith('panicPolicy', { percent: 10 }) })),
      );
    });
  });

  it('leaves percentages, instances, tolerance, select policy and an empty metric list to the CRD', () => {
    assertAllowed(
      decide(
        policy({
          tolerancePercent: 500,
          metrics: [],
          behavior: {
            scaleDown: { instances: -3, percent: 5000, selectPolicy: 'Xor' },
            scaleUp: { panicPolicy: { period: '10s', panicThresholdPercent: 5, percent: -1 } },
          },
        }),
      ),
    );
    assertAllowed(decide(policy({})));
  });

  it('accumulates errors in Kthena order: metrics, scaleDown, scaleUp.stablePolicy, scaleUp.panicPolicy', () => {
    const decision = decide(
      policy({
        metrics: [metric('qps', '0'), metric('qps')],
        behavior: {
          scaleUp: {
            panicPolicy: { period: '31m', panicModeHold: '31m' },
            stablePolicy: { stabilizationWindow: '-1s', period: '1h' },
          },
          scaleDown: { stabilizationWindow: '40m', period: '-30s' },
        },
      }),
    );
    assert.equal(
      decision.allowed ? '' : decision.message,
      [
        'validation failed:',
        '  - spec.metrics[0].targetValue: Invalid value: "0": metric target value must be greater than 0 and not equal to infinity',
        '  - spec.metrics[1].metricName: Invalid value: "qps": duplicate metric name qps is not allowed',
        '  - spec.behavior.scaleDown.period: Invalid value: -30s: stable policy period must be between 0 and 30 minutes',
        '  - spec.behavior.scaleDown.stabilizationWindow: Invalid value: 40m0s: stable policy stabilization window must be between 0 and 30 minutes',
        '  - spec.behavior.scaleUp.stablePolicy.period: Invalid value: 1h0m0s: stable policy period must be between 0 and 30 minutes',
        '  - spec.behavior.scaleUp.stablePolicy.stabilizationWindow: Invalid value: -1s: stable policy stabilization window must be between 0 and 30 minutes',
        '  - spec.behavior.scaleUp.panicPolicy.period: Invalid value: 31m0s: panic policy period must be between 0 and 30 minutes',
        '  - spec.behavior.scaleUp.panicPolicy.panicModeHold: Invalid value: 31m0s: panic policy panic mode hold must be between 0 and 30 minutes',
      ].join('\n'),
    );
  });

  describe('malformed policies (Kthena: "failed to decode object")', () => {
    it('names each bad quantity, duration or integer', () => {
      const decision = decide(
        policy({
          tolerancePercent: '10',
          metrics: [metric('qps', 'lots'), { metricName: 7, targetValue: { value: 1 } }],
          behavior: { scaleDown: { period: 'soon', instances: 2.5 }, scaleUp: 'fast' },
        }),
      );
      assert.ok(!decision.allowed);
      assert.equal(decision.code, 400);
      assert.equal(
        decision.message,
        [
          'failed to decode object:',
          '  - spec.tolerancePercent: Invalid value: "10": must be an int32 (a whole number from -2147483648 to 2147483647)',
          '  - spec.metrics[0].targetValue: Invalid value: "lots": must be a quantity such as "500m", "2Gi" or 3: quantities must match the regular expression \'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\'',
          '  - spec.metrics[1].metricName: Invalid value: 7: must be a string',
          '  - spec.metrics[1].targetValue: Invalid value: "object": must be a quantity such as "500m", "2Gi" or 3',
          '  - spec.behavior.scaleUp: Invalid value: "fast": must be an object',
          '  - spec.behavior.scaleDown.instances: Invalid value: 2.5: must be an int32 (a whole number from -2147483648 to 2147483647)',
          '  - spec.behavior.scaleDown.period: Invalid value: "soon": must be a duration such as "30s" or "1m30s": invalid duration "soon"',
        ].join('\n'),
      );
    });
  });
});
