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
import { mutateModel } from '../../../../../webhook/rules/kthena/mutate-model.js';
import { validateModel } from '../../../../../webhook/rules/kthena/validate-model.js';
import { stateSnapshot } from '../../../../harness/state.js';
import { admissionRequest } from '../../../../harness/requests.js';

function model(spec: JsonObject): KubeObject {
  return {
    apiVersion: 'registry.volcano.sh/v1alpha1',
    kind: 'Model',
    metadata: { name: 'llama', namespace: 'ml' },
    spec,
  };
}

function backend(name: string, overrides: JsonObject = {}): JsonObject {
  return {
    name,
    type: 'vLLM',
    modelURI: 'hf://org/model',
    minReplicas: 1,
    maxReplicas: 3,
    scalingCost: 10,
    workers: [{ type: 'server', image: 'vllm/vllm-openai:v0.10.0' }],
    ...overrides,
  };
}

const POLICY: JsonObject = { metrics: [{ metricName: 'qps', targetValue: '100' }] };

function request(
  object: KubeObject | null,
  operation: AdmissionRequest['operation'] = 'CREATE',
): AdmissionRequest {
  return admissionRequest({
    group: 'registry.volcano.sh',
    version: 'v1alpha1',
    kind: 'Model',
    resource: 'models',
    namespace: 'ml',
    operation,
    object,
  });
}

const state = stateSnapshot();
const decide = (object: KubeObject): Decision => mutateModel(request(object), state);

/** The patch the server would send, in a stable order (Kthena's order is random: compare as sets). */
function patchOf(original: KubeObject, decision: Decision): fastJsonPatch.Operation[] {
  assert.ok(decision.allowed, decision.allowed ? '' : decision.message);
  assert.ok(decision.mutated, 'expected a mutation');
  return jsonPatch(original, decision.mutated).sort((a, b) => a.path.localeCompare(b.path));
}

function assertUnchanged(decision: Decision): void {
  assert.ok(decision.allowed, decision.allowed ? '' : decision.message);
  assert.equal(decision.mutated, undefined);
}

describe('mutateModel', () => {
  it('defaults every missing scaleToZeroGracePeriod to 30s and costExpansionRatePercent to 200', () => {
    const original = model({
      autoscalingPolicy: POLICY,
      backends: [backend('b0'), backend('b1', { scaleToZeroGracePeriod: '45s' }), backend('b2')],
    });
    const decision = decide(original);
    assert.deepEqual(patchOf(original, decision), [
      { op: 'add', path: '/spec/backends/0/scaleToZeroGracePeriod', value: '30s' },
      { op: 'add', path: '/spec/backends/2/scaleToZeroGracePeriod', value: '30s' },
      { op: 'add', path: '/spec/costExpansionRatePercent', value: 200 },
    ]);
    assert.deepEqual(decision.audit, {
      action: 'defaulted',
      fields:
        'spec.backends[0].scaleToZeroGracePeriod,spec.backends[2].scaleToZeroGracePeriod,spec.costExpansionRatePercent',
    });
  });

  it('is triggered by any model-level policy object, even an empty one', () => {
    const original = model({
      autoscalingPolicy: {},
      costExpansionRatePercent: 120,
      backends: [backend('b0')],
    });
    assert.deepEqual(patchOf(original, decide(original)), [
      { op: 'add', path: '/spec/backends/0/scaleToZeroGracePeriod', value: '30s' },
    ]);
  });

  it('keeps values that are set, including a costExpansionRatePercent of 0 (Kthena: the patch [])', () => {
    assertUnchanged(
      decide(
        model({
          autoscalingPolicy: POLICY,
          costExpansionRatePercent: 0,
          backends: [backend('b0', { scaleToZeroGracePeriod: '0s' })],
        }),
      ),
    );
  });

  it('changes nothing without model-level autoscaling, even with backend-level policies', () => {
    assertUnchanged(decide(model({ backends: [backend('b0')] })));
    assertUnchanged(decide(model({ backends: [backend('b0', { autoscalingPolicy: POLICY })] })));
    assertUnchanged(decide(model({ autoscalingPolicy: null, backends: [backend('b0')] })));
  });

  it('replaces a null scaleToZeroGracePeriod', () => {
    const original = model({
      autoscalingPolicy: POLICY,
      costExpansionRatePercent: 200,
      backends: [backend('b0', { scaleToZeroGracePeriod: null })],
    });
    const decision = decide(original);
    assert.ok(decision.allowed && decision.mutated);
    assert.deepEqual(
      (decision.mutated.spec as { backends: JsonObject[] }).backends[0]?.scaleToZeroGracePeriod,
      '30s',
    );
  });

  it('handles a model-level policy with no backends', () => {
    const original = model({ autoscalingPolicy: POLICY });
    assert.deepEqual(patchOf(original, decide(original)), [
      { op: 'add', path: '/spec/costExpansionRatePercent', value: 200 },
    ]);
  });

  it('leaves the request object untouched', () => {
    const original = model({ autoscalingPolicy: POLICY, backends: [backend('b0')] });
    const before = structuredClone(original);
    decide(original);
    assert.deepEqual(original, before);
  });

  it('is idempotent, so reinvocation adds nothing', () => {
    const decision = decide(model({ autoscalingPolicy: POLICY, backends: [backend('b0'), backend('b1')] }));
    assert.ok(decision.allowed && decision.mutated);
    assertUnchanged(decide(decision.mutated));
  });

  it('produces what the validator then accepts', () => {
    const decision = decide(model({ autoscalingPolicy: POLICY, backends: [backend('b0'), backend('b1')] }));
    assert.ok(decision.allowed && decision.mutated);
    const validated = validateModel(request(decision.mutated), state);
    assert.ok(validated.allowed, validated.allowed ? '' : validated.message);
  });

  it('refuses a malformed model, as Kthena fails to decode it', () => {
    const decision = decide(
      model({ autoscalingPolicy: POLICY, backends: [backend('b0', { maxReplicas: 'three' })] }),
    );
    assert.ok(!decision.allowed);
    assert.equal(decision.code, 400);
    assert.equal(
      decision.message,
      'failed to decode object:\n' +
        '  - spec.backends[0].maxReplicas: Invalid value: "three": must be an int32 (a whole number from -2147483648 to 2147483647)',
    );
  });

  it('allows DELETE and requests without an object', () => {
    assertUnchanged(mutateModel(request(null, 'DELETE'), state));
    assertUnchanged(mutateModel(request(null), state));
  });
});
