import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AdmissionRequest, Decision, KubeObject } from '../../../../../../webhook/admission/types.js';
import { podMutator } from '../../../../../../webhook/rules/koordinator/pod/mutate-pod.js';
import { deepFreeze } from '../../../../../harness/deep-freeze.js';
import { stateSnapshot } from '../../../../../harness/state.js';
import { admissionRequest } from '../../../../../harness/requests.js';

const mutatePod = podMutator({
  roll: () => 0,
  skipMutatingResources: false,
  skipExtendedResourceSpec: false,
  multiQuotaTree: false,
  skipDeviceResourceSpec: false,
});
const state = stateSnapshot();
const SPEC = 'node.koordinator.sh/extended-resource-spec';

function pod(containers: Record<string, unknown>[], annotations: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'team', annotations },
    spec: { containers },
  } as KubeObject;
}

/** Every pod under review is frozen: the mutator must copy what it changes, never write to it. */
function review(object: KubeObject, operation: 'CREATE' | 'UPDATE' = 'CREATE'): AdmissionRequest {
  deepFreeze(object);
  return admissionRequest({
    kind: 'Pod',
    resource: 'pods',
    namespace: 'team',
    operation,
    object,
    oldObject: operation === 'UPDATE' ? object : null,
  });
}

function mutated(decision: Decision): KubeObject {
  assert.ok(decision.allowed && decision.mutated, JSON.stringify(decision));
  return decision.mutated;
}

const resources = (
  object: KubeObject,
  index = 0,
): { requests?: Record<string, string>; limits?: Record<string, string> } =>
  (object.spec as { containers: { resources: object }[] }).containers[index]?.resources ?? {};

describe('podMutator: extended resource spec', () => {
  it('records batch resources of each container', () => {
    const batch = { 'kubernetes.io/batch-cpu': '1000', 'kubernetes.io/batch-memory': '4Gi' };
    const result = mutated(
      mutatePod(
        review(pod([{ name: 'test-container-a', resources: { requests: batch, limits: batch } }])),
        state,
      ),
    );
    assert.equal(
      (result.metadata.annotations as Record<string, string>)[SPEC],
      '{"containers":{"test-container-a":{"limits":{"kubernetes.io/batch-cpu":"1k","kubernetes.io/batch-memory":"4Gi"},"requests":{"kubernetes.io/batch-cpu":"1k","kubernetes.io/batch-memory":"4Gi"}}}}',
    );
  });

  it('rewrites a stale annotation of a pod without batch resources to {} (Koordinator’s behaviour)', () => {
    const result = mutated(
      mutatePod(review(pod([{ name: 'c' }], { [SPEC]: '{"containers":{"x":{}}}' })), state),
    );
    assert.equal((result.metadata.annotations as Record<string, string>)[SPEC], '{}');
  });

  it('reads the current annotation as Koordinator does: a key it has no field for is ignored, whatever its name', () => {
    const batch = { 'kubernetes.io/batch-cpu': '1k' };
    const list = '{"kubernetes.io/batch-cpu":"1k"}';
    const unchanged: [Record<string, unknown>[], string][] = [
      [[{ name: 'c' }], '{"__proto__":"1"}'],
      [[{ name: 'c' }], '{"constructor":{},"containers":null}'],
      [
        [{ name: 'c', resources: { requests: batch, limits: batch } }],
        `{"__proto__":[],"containers":{"c":{"toString":1,"limits":${list},"requests":${list}}}}`,
      ],
      // Go matches a field's name ignoring case.
      [
        [{ name: 'c', resources: { requests: batch, limits: batch } }],
        `{"Containers":{"c":{"Limits":${list},"REQUESTS":${list}}}}`,
      ],
    ];
    for (const [containers, text] of unchanged) {
      const decision = mutatePod(review(pod(containers, { [SPEC]: text })), state);
      assert.ok(decision.allowed && decision.mutated === undefined, `${text}: ${JSON.stringify(decision)}`);
    }
    // A container name is a key of a map: kept, whatever it is.
    const named = mutated(
      mutatePod(
        review(pod([{ name: '__proto__', resources: { requests: batch } }], { [SPEC]: '{}' })),
        state,
      ),
    );
    assert.equal(
      (named.metadata.annotations as Record<string, string>)[SPEC],
      `{"containers":{"__proto__":{"requests":${list}}}}`,
    );
  });

  it('leaves an annotation that is not JSON alone, with a warning naming it', () => {
    const decision = mutatePod(review(pod([{ name: 'c' }], { [SPEC]: '{' })), state);
    // Nothing else changes either, so the pod is allowed as it came.
    assert.ok(decision.allowed && !decision.mutated);
    assert.deepEqual(decision.warnings, [
      'metadata.annotations[node.koordinator.sh/extended-resource-spec]: failed to get current extended resource spec: not valid JSON; the node.koordinator.sh/extended-resource-spec annotation was not updated',
    ]);
    assert.deepEqual(decision.audit, { action: 'skipped', reason: 'invalid-annotation' });
  });

  // Go's json.Unmarshal refuses nesting past 10,000 levels, so Koordinator cannot read such an
  // annotation either; it is left alone like any other annotation that is not a spec.
  it('leaves an annotation nested deeper than any spec alone, with a warning, without walking it', () => {
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    const batch = { 'kubernetes.io/batch-cpu': '1' };
    const decision = mutatePod(
      review(pod([{ name: 'c', resources: { requests: batch } }], { [SPEC]: deep })),
      state,
    );
    assert.ok(decision.allowed && !decision.mutated);
    assert.deepEqual(decision.warnings, [
      'metadata.annotations[node.koordinator.sh/extended-resource-spec]: failed to get current extended resource spec: not valid JSON; the node.koordinator.sh/extended-resource-spec annotation was not updated',
    ]);
  });

  for (const value of ['1e50000000', '1e1000000000', '-1e50000000', 'lots', '1'.repeat(100_000)]) {
    it(`skips the annotation with a warning for batch-cpu ${value.slice(0, 20)}`, () => {
      const requests = { 'kubernetes.io/batch-cpu': value };
      const decision = mutatePod(review(pod([{ name: 'c', resources: { requests } }])), state);
      assert.ok(decision.allowed);
      assert.equal(decision.mutated?.metadata.annotations?.[SPEC as never], undefined);
      assert.equal(decision.warnings?.length, 1);
      assert.match(
        decision.warnings?.[0] ?? '',
        /^spec\.containers\[0\]\.resources\.requests\[kubernetes\.io\/batch-cpu\]: ".{1,64}" is (too large|not a quantity).*; the node\.koordinator\.sh\/extended-resource-spec annotation was not updated$/,
      );
      assert.deepEqual(decision.audit, { action: 'skipped', reason: 'invalid-quantity' });
    });
  }

  it('skips the annotation for a batch quantity that is a JSON object', () => {
    const requests = { 'kubernetes.io/batch-memory': { huge: true } };
    const decision = mutatePod(review(pod([{ name: 'c', resources: { requests } }])), state);
    assert.ok(decision.allowed);
    assert.match(
      decision.warnings?.[0] ?? '',
      /requests\[kubernetes\.io\/batch-memory\]: must be a quantity string, got a JSON object/,
    );
  });
});

describe('podMutator: device resource spec', () => {
  const gpu = (requests: Record<string, string>, limits: Record<string, string> | undefined = requests) =>
    pod([{ name: 'c', resources: { requests, ...(limits ? { limits } : {}) } }]);

  it('splits koordinator.sh/gpu 200 into core 200, ratio 200 and shared 2', () => {
    const result = resources(mutated(mutatePod(review(gpu({ 'koordinator.sh/gpu': '200' })), state)));
    const expected = {
      'koordinator.sh/gpu-core': '200',
      'koordinator.sh/gpu-memory-ratio': '200',
      'koordinator.sh/gpu.shared': '2',
    };
    assert.deepEqual(result.requests, expected);
    assert.deepEqual(result.limits, expected);
  });

  it('derives gpu.shared from the memory ratio (50 → 1, 200 → 2) or the core count', () => {
    assert.equal(
      resources(mutated(mutatePod(review(gpu({ 'koordinator.sh/gpu-memory-ratio': '50' })), state)))
        .requests?.['koordinator.sh/gpu.shared'],
      '1',
    );
    assert.equal(
      resources(mutated(mutatePod(review(gpu({ 'koordinator.sh/gpu-memory-ratio': '200' })), state)))
        .requests?.['koordinator.sh/gpu.shared'],
      '2',
    );
    assert.equal(
      resources(mutated(mutatePod(review(gpu({ 'koordinator.sh/gpu-core': '300' })), state))).requests?.[
        'koordinator.sh/gpu.shared'
      ],
      '3',
    );
  });

  it('creates the limits map instead of crashing when a container only has requests', () => {
    const result = resources(
      mutated(mutatePod(review(gpu({ 'koordinator.sh/gpu': '100' }, undefined)), state)),
    );
    assert.equal(result.limits?.['koordinator.sh/gpu-core'], '100');
  });

  it('splits nothing, with a warning naming the field, when a GPU quantity cannot be read', () => {
    for (const [name, value] of [
      ['koordinator.sh/gpu', '1e50000000'],
      ['koordinator.sh/gpu-memory-ratio', '1e1000000000'],
      ['koordinator.sh/gpu-core', 'many'],
    ] as const) {
      const object = pod([
        { name: 'ok', resources: { requests: { 'koordinator.sh/gpu': '100' } } },
        { name: 'bad', resources: { requests: { [name]: value } } },
      ]);
      const decision = mutatePod(review(object), state);
      // Nothing half-done: the readable container is not split either, so the pod is allowed as it came.
      assert.ok(decision.allowed && !decision.mutated, JSON.stringify(decision));
      assert.equal(decision.warnings?.length, 1);
      assert.ok(
        decision.warnings?.[0]?.startsWith(`spec.containers[1].resources.requests[${name}]: "${value}" is `),
        decision.warnings?.[0],
      );
      assert.ok(decision.warnings?.[0]?.endsWith('; the GPU resources were not split'));
      assert.deepEqual(decision.audit, { action: 'skipped', reason: 'invalid-quantity' });
    }
  });

  it('leaves nvidia.com/gpu alone and does nothing on UPDATE', () => {
    const nvidia = gpu({ 'nvidia.com/gpu': '1' });
    assert.deepEqual(mutatePod(review(nvidia), state), { allowed: true });
    assert.deepEqual(mutatePod(review(gpu({ 'koordinator.sh/gpu': '100' }), 'UPDATE'), state), {
      allowed: true,
    });
  });
});

describe('podMutator: copies only what it changes', () => {
  it('allows a pod that no step changes as it came, without a copy or a patch', () => {
    const plain = pod([{ name: 'c', resources: { requests: { cpu: '1' } } }]);
    assert.deepEqual(mutatePod(review(plain), state), { allowed: true });
  });

  it('shares every container a GPU split leaves alone with the pod under review', () => {
    const object = pod([
      { name: 'cpu', resources: { requests: { cpu: '1' } } },
      { name: 'gpu', resources: { requests: { 'koordinator.sh/gpu': '100' } } },
    ]);
    const result = mutated(mutatePod(review(object), state));
    const containers = (result.spec as { containers: unknown[] }).containers;
    const before = (object.spec as { containers: unknown[] }).containers;
    assert.equal(containers[0], before[0]);
    assert.notEqual(containers[1], before[1]);
    assert.equal(result.metadata, object.metadata);
  });
});
