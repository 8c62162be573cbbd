import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { podResizeReach } from '../../../../../../webhook/rules/koordinator/pod/validate-pod-resize-reach.js';
import { quotaView } from '../../../../../../webhook/rules/koordinator/quota/quota-view.js';
import { stateSnapshot } from '../../../../../harness/state.js';

const quota = (name: string, namespace: string, max: Record<string, string>, annotations = {}) =>
  quotaView({ metadata: { name, namespace, annotations }, spec: { max, min: {} } });

describe('the reach of /validate-pod-resize', () => {
  const state = stateSnapshot({
    elasticQuotas: [
      quota('team', 'team', { cpu: '2' }),
      quota('pods-only', 'pods-only', { pods: '10' }),
      quota(
        'shared',
        'quotas',
        { memory: '8Gi' },
        { 'quota.scheduling.koordinator.sh/namespaces': '["bound"]' },
      ),
    ],
  });

  it('sends the resizes of labelled pods anywhere and of every pod where quota admission counts a namespace’s quota', () => {
    const reach = podResizeReach({ quotaAdmission: true })(state);
    assert.deepEqual(reach.anywhere, [
      {
        cel: "has(object.metadata.labels) && 'quota.scheduling.koordinator.sh/name' in object.metadata.labels",
      },
    ]);
    assert.equal(reach.within.length, 1);
    const names = reach.within[0]?.namespaces;
    assert.ok(names && 'names' in names);
    assert.deepEqual([...names.names].sort(), ['bound', 'team']);
  });

  it('sends nothing with quota admission off', () => {
    assert.deepEqual(podResizeReach({ quotaAdmission: false })(state), { anywhere: [], within: [] });
  });
});
