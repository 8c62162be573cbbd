import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JsonObject, KubeObject } from '../../../../../../webhook/admission/types.js';
import { applyMultiQuotaTreeAffinity } from '../../../../../../webhook/rules/koordinator/quota/multi-quota-tree-affinity.js';
import { CopyOnWrite } from '../../../../../../webhook/util/copy-on-write.js';
import { deepFreeze } from '../../../../../harness/deep-freeze.js';
import type { QuotaView } from '../../../../../../webhook/rules/koordinator/quota/quota-view.js';
import { stateSnapshot } from '../../../../../harness/state.js';
import type { StateSnapshot } from '../../../../../../webhook/state.js';

/** Runs the step on a frozen pod (so it must copy what it changes); returns whether it applied and the result. */
function pinned(
  object: KubeObject,
  namespace: string,
  snapshot: StateSnapshot,
): { applied: boolean; pod: KubeObject } {
  const draft = new CopyOnWrite(deepFreeze(object));
  return { applied: applyMultiQuotaTreeAffinity(draft, namespace, snapshot), pod: draft.current };
}

function quota(name: string, treeId: string, namespaces: string[] = []): QuotaView {
  return {
    namespace: 'quotas',
    name,
    parent: 'koordinator-root-quota',
    isParent: false,
    treeId,
    isRoot: false,
    allowForceUpdate: false,
    min: {},
    max: {},
    namespaces,
  };
}

const state = stateSnapshot({
  elasticQuotas: [quota('team-a', 'tree-1'), quota('bound', 'tree-1', ['ns-bound']), quota('flat', '')],
  elasticQuotaProfiles: [
    {
      namespace: 'b',
      name: 'second',
      treeId: 'tree-1',
      nodeSelector: { matchLabels: { pool: 'other' } },
    },
    {
      namespace: 'a',
      name: 'first',
      treeId: 'tree-1',
      nodeSelector: {
        matchLabels: { zone: 'z1', pool: 'gpu' },
        matchExpressions: [{ key: 'arch', operator: 'In', values: ['amd64'] }],
      },
    },
  ],
});

function pod(labels: Record<string, string>, spec: JsonObject = {}): KubeObject {
  return { metadata: { name: 'p', namespace: 'team-a', labels }, spec: { containers: [], ...spec } };
}

const TREE_1 = [
  { key: 'pool', operator: 'In', values: ['gpu'] },
  { key: 'zone', operator: 'In', values: ['z1'] },
  { key: 'arch', operator: 'In', values: ['amd64'] },
];

const required = (object: KubeObject): unknown =>
  (
    object.spec as {
      affinity?: { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: unknown } };
    }
  ).affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;

describe('multi-quota-tree node affinity', () => {
  it('pins a pod of a tree quota to the first profile’s nodes (namespace order), creating one term', () => {
    const object = pod({ 'quota.scheduling.koordinator.sh/name': 'team-a' });
    const objectResult = pinned(object, 'team-a', state);
    assert.equal(objectResult.applied, true);
    assert.deepEqual(required(objectResult.pod), { nodeSelectorTerms: [{ matchExpressions: TREE_1 }] });
  });

  it('adds the requirements to every existing term, since terms are ORed', () => {
    const object = pod(
      {},
      {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: 'a', operator: 'Exists' }] },
                { matchFields: [] },
              ],
            },
          },
        },
      },
    );
    const objectResult = pinned(object, 'team-a', state);
    assert.equal(objectResult.applied, true);
    assert.deepEqual(required(objectResult.pod), {
      nodeSelectorTerms: [
        { matchExpressions: [{ key: 'a', operator: 'Exists' }, ...TREE_1] },
        { matchFields: [], matchExpressions: TREE_1 },
      ],
    });
  });

  it('falls back to the namespace name, then to the quota bound to the namespace', () => {
    const byNamespaceName = pod({});
    assert.equal(pinned(byNamespaceName, 'team-a', state).applied, true);
    const byBinding = pod({});
    const byBindingResult = pinned(byBinding, 'ns-bound', state);
    assert.equal(byBindingResult.applied, true);
    assert.deepEqual(required(byBindingResult.pod), { nodeSelectorTerms: [{ matchExpressions: TREE_1 }] });
  });

  it('leaves pods alone without a quota, a tree, or a profile', () => {
    for (const [labels, namespace] of [
      [{}, 'nowhere'],
      [{ 'quota.scheduling.koordinator.sh/name': 'flat' }, 'x'],
    ] as const) {
      const object = pod(labels);
      const objectResult = pinned(object, namespace, state);
      assert.equal(objectResult.applied, false);
      assert.equal(required(objectResult.pod), undefined);
    }
    const noProfile = stateSnapshot({ elasticQuotas: [quota('lonely', 'tree-2')] });
    assert.equal(pinned(pod({}), 'lonely', noProfile).applied, false);
  });
});
