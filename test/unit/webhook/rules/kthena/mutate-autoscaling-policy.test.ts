import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fastJsonPatch from 'fast-json-patch';
import type {
  AdmissionRequest,
  Decision,
  JsonObject,
  KubeObject,
} from '../../../../../webhook/admission/types.js';
import { jsonPatch } from '../../../../../webhook/admission/response.js';
import { mutateAutoscalingPolicy } from '../../../../../webhook/rules/kthena/mutate-autoscaling-policy.js';
import { validateAutoscalingPolicy } from '../../../../../webhook/rules/kthena/validate-autoscaling-policy.js';
import { stateSnapshot } from '../../../../harness/state.js';
import { admissionRequest } from '../../../../harness/requests.js';

const METRICS = [{ metricName: 'qps', targetValue: '100' }];

function policy(spec: JsonObject | null): KubeObject {
  return {
    apiVersion: 'registry.volcano.sh/v1alpha1',
    kind: 'AutoscalingPolicy',
    metadata: { name: 'qps-policy', namespace: 'ml' },
    ...(spec ? { spec } : {}),
  };
}

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
const decide = (object: KubeObject): Decision => mutateAutoscalingPolicy(request(object), state);

// Kthena's defaults, as its patches carry them (docs/rules/mutate-registry-volcano-sh-v1alpha1-autoscalingpolicy.md).
const SCALE_DOWN = {
  instances: 0,
  percent: 100,
  period: '1m0s',
  selectPolicy: 'Or',
  stabilizationWindow: '5m0s',
};
const STABLE = { instances: 4, percent: 100, period: '1m0s', selectPolicy: 'Or', stabilizationWindow: '0s' };
const PANIC = { percent: 0, period: '0s', panicThresholdPercent: 200, panicModeHold: '0s' };
const SCALE_UP = { stablePolicy: STABLE, panicPolicy: PANIC };
const BEHAVIOR = { scaleUp: SCALE_UP, scaleDown: SCALE_DOWN };

/** What the CRD schema fills into a present StablePolicy before admission (a fresh copy each time). */
const crdStable = (): JsonObject => ({ instances: 1, percent: 100, period: '15s', selectPolicy: 'Or' });
/** What the CRD schema fills into a present PanicPolicy (period is required). */
const crdPanic = (): JsonObject => ({
  percent: 1000,
  period: '10s',
  panicThresholdPercent: 200,
  panicModeHold: '60s',
});

function mutatedOf(decision: Decision): KubeObject {
  assert.ok(decision.allowed, decision.allowed ? '' : decision.message);
  assert.ok(decision.mutated, 'expected a mutation');
  return decision.mutated;
}

/** The patch the server would send, ordered by path (its order is fast-json-patch's, not Kthena's). */
function patchOf(original: KubeObject, decision: Decision): fastJsonPatch.Operation[] {
  return jsonPatch(original, mutatedOf(decision)).sort((a, b) => a.path.localeCompare(b.path));
}

const behaviorOf = (object: KubeObject): unknown => (object.spec as JsonObject).behavior;

function assertUnchanged(decision: Decision): void {
  assert.ok(decision.allowed, decision.allowed ? '' : decision.message);
  assert.equal(decision.mutated, undefined);
}

describe('mutateAutoscalingPolicy', () => {
  it('(1) a policy without behavior gets the whole default behavior in one add', () => {
    const original = policy({ tolerancePercent: 10, metrics: METRICS });
    const decision = decide(original);
    assert.deepEqual(patchOf(original, decision), [{ op: 'add', path: '/spec/behavior', value: BEHAVIOR }]);
    assert.deepEqual(decision.audit, { action: 'defaulted', fields: '/spec/behavior' });
  });

  it('(1) an empty behavior (every part at its Go zero value) is replaced whole', () => {
    const behaviors: JsonObject[] = [
      {},
      { scaleUp: {}, scaleDown: {} },
      { scaleUp: { stablePolicy: { selectPolicy: '' }, panicPolicy: { period: '0s' } } },
      { scaleDown: { period: null } },
    ];
    for (const behavior of behaviors) {
      const mutated = mutatedOf(decide(policy({ metrics: METRICS, behavior })));
      assert.deepEqual(behaviorOf(mutated), BEHAVIOR, JSON.stringify(behavior));
    }
  });

  it('(2)+(3) a CRD-defaulted scaleDown gets only the literal "5m" window, and a missing scaleUp its default', () => {
    const original = policy({ metrics: METRICS, behavior: { scaleDown: crdStable() } });
    assert.deepEqual(patchOf(original, decide(original)), [
      { op: 'add', path: '/spec/behavior/scaleDown/stabilizationWindow', value: '5m' },
      { op: 'add', path: '/spec/behavior/scaleUp', value: SCALE_UP },
    ]);
  });

  it('(2) an empty scaleDown next to a set scaleUp is replaced by its default', () => {
    const original = policy({
      metrics: METRICS,
      behavior: {
        scaleUp: { stablePolicy: { ...crdStable(), stabilizationWindow: '1m' }, panicPolicy: crdPanic() },
      },
    });
    assert.deepEqual(patchOf(original, decide(original)), [
      { op: 'add', path: '/spec/behavior/scaleDown', value: SCALE_DOWN },
    ]);
  });

  it('(2) keeps a scaleDown window that is set', () => {
    const original = policy({
      metrics: METRICS,
      behavior: {
        scaleDown: { ...crdStable(), stabilizationWindow: '2m' },
        scaleUp: { stablePolicy: { ...crdStable(), stabilizationWindow: '0s' }, panicPolicy: crdPanic() },
      },
    });
    assertUnchanged(decide(original));
  });

  it('(4) a set stable policy without a window gets "0s"; (5) a missing panic policy its default', () => {
    const original = policy({
      metrics: METRICS,
      behavior: {
        scaleDown: { ...crdStable(), stabilizationWindow: '5m' },
        scaleUp: { stablePolicy: crdStable() },
      },
    });
    assert.deepEqual(patchOf(original, decide(original)), [
      { op: 'add', path: '/spec/behavior/scaleUp/panicPolicy', value: PANIC },
      { op: 'add', path: '/spec/behavior/scaleUp/stablePolicy/stabilizationWindow', value: '0s' },
    ]);
  });

  it('(4) an empty stable policy next to a set panic policy is replaced by its default', () => {
    const original = policy({
      metrics: METRICS,
      behavior: {
        scaleDown: { ...crdStable(), stabilizationWindow: '5m' },
        scaleUp: { panicPolicy: crdPanic() },
      },
    });
    assert.deepEqual(patchOf(original, decide(original)), [
      { op: 'add', path: '/spec/behavior/scaleUp/stablePolicy', value: STABLE },
    ]);
  });

  it('follows Kthena in every step, in order, for a partly set behavior', () => {
    const original = policy({
      metrics: METRICS,
      behavior: { scaleDown: { instances: 2 }, scaleUp: { stablePolicy: { percent: 50 }, panicPolicy: {} } },
    });
    const decision = decide(original);
    assert.deepEqual(behaviorOf(mutatedOf(decision)), {
      scaleDown: { instances: 2, stabilizationWindow: '5m' },
      scaleUp: { stablePolicy: { percent: 50, stabilizationWindow: '0s' }, panicPolicy: PANIC },
    });
    assert.equal(
      decision.audit?.fields,
      '/spec/behavior/scaleDown/stabilizationWindow,/spec/behavior/scaleUp/stablePolicy/stabilizationWindow,/spec/behavior/scaleUp/panicPolicy',
    );
  });

  it('counts a pointer set to zero as set (instances: 0), but a zero plain duration as unset (panic period)', () => {
    const original = policy({
      metrics: METRICS,
      behavior: {
        scaleDown: { instances: 0, stabilizationWindow: '5m' },
        scaleUp: { stablePolicy: { instances: 0, stabilizationWindow: '0s' }, panicPolicy: { period: '0s' } },
      },
    });
    assert.deepEqual(patchOf(original, decide(original)), [
      { op: 'add', path: '/spec/behavior/scaleUp/panicPolicy/panicModeHold', value: '0s' },
      { op: 'add', path: '/spec/behavior/scaleUp/panicPolicy/panicThresholdPercent', value: 200 },
      { op: 'add', path: '/spec/behavior/scaleUp/panicPolicy/percent', value: 0 },
    ]);
  });

  it('leaves a policy it already defaulted unchanged (Kthena: the patch null), so reinvocation is a no-op', () => {
    const decision = decide(policy({ metrics: METRICS }));
    assertUnchanged(decide(mutatedOf(decision)));
  });

  it('in a cluster, the CRD-defaulted parts are kept and only windows are added', () => {
    const original = policy({
      metrics: METRICS,
      behavior: { scaleDown: crdStable(), scaleUp: { stablePolicy: crdStable(), panicPolicy: crdPanic() } },
    });
    assert.deepEqual(patchOf(original, decide(original)), [
      { op: 'add', path: '/spec/behavior/scaleDown/stabilizationWindow', value: '5m' },
      { op: 'add', path: '/spec/behavior/scaleUp/stablePolicy/stabilizationWindow', value: '0s' },
    ]);
  });

  it('produces what the validator then accepts', () => {
    const mutated = mutatedOf(decide(policy({ metrics: METRICS })));
    const validated = validateAutoscalingPolicy(request(mutated), state);
    assert.ok(validated.allowed, validated.allowed ? '' : validated.message);
  });

  it('creates a missing spec rather than failing to apply its patch', () => {
    const mutated = mutatedOf(decide(policy(null)));
    assert.deepEqual(mutated.spec, { behavior: BEHAVIOR });
  });

  it('leaves the request object untouched', () => {
    const original = policy({ metrics: METRICS, behavior: { scaleDown: crdStable() } });
    const before = structuredClone(original);
    decide(original);
    assert.deepEqual(original, before);
  });

  it('refuses a malformed policy, as Kthena fails to decode it', () => {
    const decision = decide(
      policy({ metrics: METRICS, behavior: { scaleDown: { stabilizationWindow: 300 } } }),
    );
    assert.ok(!decision.allowed);
    assert.equal(decision.code, 400);
    assert.equal(
      decision.message,
      'failed to decode object:\n' +
        '  - spec.behavior.scaleDown.stabilizationWindow: Invalid value: 300: must be a duration string such as "30s" or "1m30s"',
    );
  });

  it('allows DELETE and requests without an object', () => {
    assertUnchanged(mutateAutoscalingPolicy(request(null, 'DELETE'), state));
    assertUnchanged(mutateAutoscalingPolicy(request(null), state));
  });
});
