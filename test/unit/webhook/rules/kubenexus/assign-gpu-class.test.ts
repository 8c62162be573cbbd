import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AdmissionRequest, Decision, KubeObject } from '../../../../../webhook/admission/types.js';
import { jsonPatch } from '../../../../../webhook/admission/response.js';
import { assignGpuClass } from '../../../../../webhook/rules/kubenexus/assign-gpu-class.js';
import { readTierMapping, type TierMapping } from '../../../../../webhook/rules/kubenexus/tier-mapping.js';
import { deepFreeze } from '../../../../harness/deep-freeze.js';
import { stateSnapshot } from '../../../../harness/state.js';

function pod(spec: Record<string, unknown>, labels: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'team', labels },
    spec,
  } as KubeObject;
}

const gpuContainer = (resources: Record<string, unknown>): Record<string, unknown> => ({
  name: 'main',
  image: 'cuda',
  resources,
});

function review(object: KubeObject, namespace = 'team'): AdmissionRequest {
  return {
    uid: 'u',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    namespace,
    operation: 'CREATE',
    userInfo: {},
    object,
    oldObject: null,
    dryRun: false,
  };
}

function decide(object: KubeObject, tier: string | undefined, mapping?: TierMapping): Decision {
  const labels: Record<string, string> = tier === undefined ? {} : { 'tenant.kubenexus.io/tier': tier };
  const state = stateSnapshot({
    namespaces: [{ name: 'team', labels }],
    ...(mapping ? { gpuTierMapping: mapping } : {}),
  });
  return assignGpuClass(review(object), state);
}

function patchOf(decision: Decision, original: KubeObject): unknown {
  assert.equal(decision.allowed, true);
  return decision.allowed && decision.mutated ? jsonPatch(original, decision.mutated) : [];
}

const limitsGpu = pod({ containers: [gpuContainer({ limits: { 'nvidia.com/gpu': '1' } })] });

describe('assignGpuClass', () => {
  for (const [tier, gpuClass] of [
    ['gold', 'h100'],
    ['silver', 'a100'],
    ['bronze', 'l4'],
    ['Gold', 'h100'],
    ['BRONZE', 'l4'],
    ['sIlVeR', 'a100'],
  ]) {
    it(`pins a ${tier} GPU pod to ${gpuClass}`, () => {
      const decision = decide(limitsGpu, tier);
      assert.deepEqual(patchOf(decision, limitsGpu), [
        { op: 'add', path: '/spec/nodeSelector', value: { 'gpu.nvidia.com/class': gpuClass } },
      ]);
      assert.deepEqual(decision.audit, { action: 'injected', tier: tier!.toLowerCase(), class: gpuClass });
    });
  }

  it('counts requests as well as limits, and init containers, for every GPU vendor', () => {
    for (const spec of [
      { containers: [gpuContainer({ requests: { 'amd.com/gpu': 2 } })] },
      { containers: [{ name: 'c' }], initContainers: [gpuContainer({ limits: { 'intel.com/gpu': '1' } })] },
    ]) {
      const decision = decide(pod(spec), 'bronze');
      assert.equal(decision.audit?.action, 'injected', JSON.stringify(spec));
    }
  });

  it('keeps an existing nodeSelector and adds the class to it', () => {
    const object = pod({
      nodeSelector: { zone: 'a' },
      containers: [gpuContainer({ limits: { 'nvidia.com/gpu': '1' } })],
    });
    assert.deepEqual(patchOf(decide(object, 'gold'), object), [
      { op: 'add', path: '/spec/nodeSelector/gpu.nvidia.com~1class', value: 'h100' },
    ]);
  });

  const several = (
    readTierMapping({ 'mapping.yaml': 'tiers:\n  bronze: [l4, a100]\n  gold: h100' }) as {
      value: TierMapping;
    }
  ).value;

  it('turns several classes into a required node-affinity term', () => {
    const decision = decide(limitsGpu, 'bronze', several);
    assert.ok(decision.allowed && decision.mutated);
    assert.deepEqual((decision.mutated.spec as Record<string, unknown>).affinity, {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'gpu.nvidia.com/class', operator: 'In', values: ['l4', 'a100'] }] },
          ],
        },
      },
    });
    assert.equal(decision.audit?.class, 'l4,a100');
  });

  it('adds the expression to every existing required term, so it holds whichever term matches', () => {
    const object = pod({
      containers: [gpuContainer({ limits: { 'nvidia.com/gpu': '1' } })],
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] },
              { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] },
            ],
          },
        },
      },
    });
    const decision = decide(object, 'bronze', several);
    assert.ok(decision.allowed && decision.mutated);
    const terms = (
      decision.mutated.spec as {
        affinity: {
          nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: unknown[] } };
        };
      }
    ).affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms;
    const gpu = { key: 'gpu.nvidia.com/class', operator: 'In', values: ['l4', 'a100'] };
    assert.deepEqual(terms, [
      { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }, gpu] },
      { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }], matchExpressions: [gpu] },
    ]);
  });

  it('never writes to the pod, and shares with it everything off the path to the change', () => {
    const make = (): KubeObject =>
      pod({
        containers: [gpuContainer({ limits: { 'nvidia.com/gpu': '1' } })],
        nodeSelector: { disk: 'ssd' },
        affinity: {
          podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [] },
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }],
            },
            preferredDuringSchedulingIgnoredDuringExecution: [],
          },
        },
      });
    const frozen = deepFreeze(make());
    const spec = frozen.spec as { containers: unknown; affinity: Record<string, Record<string, unknown>> };
    for (const [tier, mapping] of [
      ['gold', undefined],
      ['bronze', several],
    ] as const) {
      const decision = decide(frozen, tier, mapping);
      assert.ok(decision.allowed && decision.mutated);
      assert.equal(decision.mutated.metadata, frozen.metadata);
      const result = decision.mutated.spec as typeof spec;
      assert.equal(result.containers, spec.containers);
      if (tier === 'bronze') {
        assert.equal(result.affinity.podAntiAffinity, spec.affinity.podAntiAffinity);
        assert.equal(
          result.affinity.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution,
          spec.affinity.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution,
        );
      }
    }
    assert.deepEqual(frozen, make());
  });

  it('uses the workload-type override of the tier', () => {
    const mapping = (
      readTierMapping({
        'mapping.yaml': 'tiers:\n  gold: h100\nworkloadOverrides:\n  gold:\n    inference: [a100, h100]',
      }) as { value: TierMapping }
    ).value;
    const inference = pod(
      { containers: [gpuContainer({ limits: { 'nvidia.com/gpu': '1' } })] },
      { 'workload.kubenexus.io/type': 'inference' },
    );
    assert.equal(decide(inference, 'gold', mapping).audit?.class, 'a100,h100');
    const training = pod(
      { containers: [gpuContainer({ limits: { 'nvidia.com/gpu': '1' } })] },
      { 'workload.kubenexus.io/type': 'training' },
    );
    assert.equal(decide(training, 'gold', mapping).audit?.class, 'h100');
  });

  const skips: [string, KubeObject, string | undefined, string, RegExp | undefined][] = [
    [
      'no GPU is requested',
      pod({ containers: [gpuContainer({ limits: { cpu: '1' } })] }),
      'gold',
      'no-gpu',
      undefined,
    ],
    [
      'the GPU quantity is zero',
      pod({ containers: [gpuContainer({ limits: { 'nvidia.com/gpu': '0' } })] }),
      'gold',
      'no-gpu',
      undefined,
    ],
    [
      'the namespace has no tier',
      limitsGpu,
      undefined,
      'no-tier',
      /has no tenant\.kubenexus\.io\/tier label/,
    ],
    [
      'the tier is unknown',
      limitsGpu,
      'platinum',
      'unknown-tier',
      /tier "platinum" of namespace team is not in the gpu-tier-mapping/,
    ],
    [
      'the pod names its class in nodeSelector',
      pod({
        nodeSelector: { 'gpu.nvidia.com/class': 'a100' },
        containers: [gpuContainer({ limits: { 'nvidia.com/gpu': '1' } })],
      }),
      'gold',
      'user-override',
      undefined,
    ],
    [
      'the pod constrains the class in a preferred affinity term',
      pod({
        containers: [gpuContainer({ limits: { 'nvidia.com/gpu': '1' } })],
        affinity: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              {
                weight: 1,
                preference: {
                  matchExpressions: [{ key: 'gpu.nvidia.com/class', operator: 'In', values: ['l4'] }],
                },
              },
            ],
          },
        },
      }),
      'gold',
      'user-override',
      undefined,
    ],
  ];
  for (const [label, object, tier, reason, warning] of skips) {
    it(`skips when ${label}`, () => {
      const decision = decide(object, tier);
      assert.equal(decision.allowed, true);
      assert.equal(decision.allowed && decision.mutated, undefined);
      assert.equal(decision.audit?.reason, reason);
      if (warning) assert.match(decision.warnings?.[0] ?? '', warning);
      else assert.equal(decision.warnings, undefined);
    });
  }

  for (const value of ['1e50000000', '1e1000000000', 'lots', '9'.repeat(100_000)]) {
    it(`skips with a warning naming the field for a GPU amount of ${value.slice(0, 16)}`, () => {
      const object = pod({ containers: [gpuContainer({ limits: { 'nvidia.com/gpu': value } })] });
      const decision = decide(object, 'gold');
      assert.equal(decision.allowed, true);
      assert.equal(decision.allowed && decision.mutated, undefined);
      assert.deepEqual(decision.audit, { action: 'skipped', reason: 'invalid-quantity', tier: '' });
      const warning = decision.warnings?.[0] ?? '';
      assert.match(
        warning,
        /^GPU class not set: spec\.containers\[0\]\.resources\.limits\[nvidia\.com\/gpu\]: ".{1,64}" is (too large|not a quantity)/,
      );
      assert.ok(warning.length < 250, warning);
    });
  }

  it('skips with a warning when the namespace is not in the cache yet', () => {
    const decision = assignGpuClass(review(limitsGpu, 'new-ns'), stateSnapshot());
    assert.equal(decision.audit?.reason, 'unknown-namespace');
    assert.match(decision.warnings?.[0] ?? '', /namespace new-ns is not known/);
  });
});
