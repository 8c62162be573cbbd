import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sloConfigStrategyConflicts } from '../../../../../../webhook/rules/koordinator/slo-config/node-strategy-conflicts.js';

const strategies = (key: 'nodeStrategies' | 'nodeConfigs', extra: Record<string, unknown> = {}): string =>
  JSON.stringify({
    ...extra,
    [key]: [
      { name: 'gpu', nodeSelector: { matchLabels: { gpu: 'true' } } },
      {
        name: 'zone-a',
        nodeSelector: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] },
      },
      {
        name: 'not-b',
        nodeSelector: { matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['b'] }] },
      },
    ],
  });

describe('sloConfigStrategyConflicts', () => {
  it('names the node, the key and the strategies its labels match', () => {
    assert.equal(
      sloConfigStrategyConflicts({ 'resource-threshold-config': strategies('nodeStrategies') }, 'n1', {
        gpu: 'true',
        zone: 'b',
      }),
      undefined,
    );
    assert.equal(
      sloConfigStrategyConflicts({ 'resource-threshold-config': strategies('nodeStrategies') }, 'n1', {
        gpu: 'true',
      }),
      'node "n1" matches 2 node strategies of slo-controller-config data[resource-threshold-config]: [gpu not-b]; a node may match at most one',
    );
    assert.equal(
      sloConfigStrategyConflicts({ 'resource-threshold-config': strategies('nodeStrategies') }, 'n1', {
        gpu: 'true',
        zone: 'a',
      }),
      'node "n1" matches 3 node strategies of slo-controller-config data[resource-threshold-config]: [gpu zone-a not-b]; a node may match at most one',
    );
  });

  it('allows a node matching one strategy or none', () => {
    const data = { 'cpu-burst-config': strategies('nodeStrategies') };
    assert.equal(sloConfigStrategyConflicts(data, 'n1', { zone: 'b' }), undefined);
    assert.equal(sloConfigStrategyConflicts(data, 'n1', { zone: 'c' }), undefined);
  });

  it('allows anything when there is no ConfigMap or no key', () => {
    assert.equal(sloConfigStrategyConflicts(undefined, 'n1', { gpu: 'true' }), undefined);
    assert.equal(sloConfigStrategyConflicts({}, 'n1', { gpu: 'true' }), undefined);
    assert.equal(sloConfigStrategyConflicts({ 'cpu-burst-config': '' }, 'n1', { gpu: 'true' }), undefined);
  });

  it('consults every key with node strategies, Koordinator’s five and the three extra, joining conflicts', () => {
    const data = {
      'colocation-config': strategies('nodeConfigs'),
      'resource-threshold-config': strategies('nodeStrategies'),
      'resource-qos-config': strategies('nodeStrategies'),
      'system-config': strategies('nodeStrategies'),
      'cpu-burst-config': strategies('nodeStrategies'),
      'host-application-config': strategies('nodeConfigs'),
      'cpu-normalization-config': strategies('nodeConfigs'),
      'resource-amplification-config': strategies('nodeConfigs'),
    };
    const message = sloConfigStrategyConflicts(data, 'n1', { gpu: 'true' }) ?? '';
    assert.deepEqual(
      message
        .split('; a node may match at most one')
        .filter(Boolean)
        .map((part) => /data\[([a-z-]+)\]/.exec(part)?.[1]),
      Object.keys(data),
    );
  });

  it('skips keys that do not parse or decode, and keys whose selectors do not convert', () => {
    const badSelector = JSON.stringify({
      nodeStrategies: [
        { name: 'gpu', nodeSelector: { matchLabels: { gpu: 'true' } } },
        {
          name: 'all',
          nodeSelector: { matchExpressions: [{ key: 'gpu', operator: 'Exists', values: ['x'] }] },
        },
      ],
    });
    const data = {
      'colocation-config': '{',
      'resource-threshold-config': strategies('nodeStrategies', { clusterStrategy: { enable: 'yes' } }),
      'cpu-burst-config': badSelector,
      'system-config': JSON.stringify({
        nodeStrategies: [{ name: 'x' }, { name: 'y', nodeSelector: { matchLabels: { gpu: 'true' } } }],
      }),
    };
    assert.equal(sloConfigStrategyConflicts(data, 'n1', { gpu: 'true' }), undefined);
  });

  it('still consults a key whose values break bounds: only its init must succeed', () => {
    const data = {
      'cpu-burst-config': strategies('nodeStrategies', { clusterStrategy: { cpuBurstPercent: 0 } }),
    };
    assert.match(sloConfigStrategyConflicts(data, 'n1', { gpu: 'true' }) ?? '', /data\[cpu-burst-config\]/);
  });

  it('matches Exists, DoesNotExist and multi-valued In as the selectors say', () => {
    const data = {
      'system-config': JSON.stringify({
        nodeStrategies: [
          { name: 'has-gpu', nodeSelector: { matchExpressions: [{ key: 'gpu', operator: 'Exists' }] } },
          {
            name: 'no-gpu',
            nodeSelector: { matchExpressions: [{ key: 'gpu', operator: 'DoesNotExist' }] },
          },
          {
            name: 'pools',
            nodeSelector: { matchExpressions: [{ key: 'pool', operator: 'In', values: ['a', 'b'] }] },
          },
        ],
      }),
    };
    assert.equal(sloConfigStrategyConflicts(data, 'n1', { pool: 'c' }), undefined);
    assert.equal(sloConfigStrategyConflicts(data, 'n1', { pool: 'c', gpu: '' }), undefined);
    assert.equal(
      sloConfigStrategyConflicts(data, 'n1', { pool: 'b' }),
      'node "n1" matches 2 node strategies of slo-controller-config data[system-config]: [no-gpu pools]; a node may match at most one',
    );
    assert.equal(
      sloConfigStrategyConflicts(data, 'n1', { pool: 'a', gpu: 'x' }),
      'node "n1" matches 2 node strategies of slo-controller-config data[system-config]: [has-gpu pools]; a node may match at most one',
    );
  });

  it('decides against 16,000 strategies', () => {
    const data = {
      'cpu-burst-config': JSON.stringify({
        nodeStrategies: Array.from(
          { length: 16_000 },
          (_, index): { name: string; nodeSelector: unknown } => ({
            name: `host-${index}`,
            nodeSelector: { matchLabels: { 'kubernetes.io/hostname': `host-${index}` } },
          }),
        ).concat([
          { name: 'zone-a', nodeSelector: { matchLabels: { 'kubernetes.io/hostname': 'x', zone: 'a' } } },
        ]),
      }),
    };
    assert.equal(sloConfigStrategyConflicts(data, 'n1', { 'kubernetes.io/hostname': 'host-9' }), undefined);
    assert.equal(sloConfigStrategyConflicts(data, 'n1', { 'kubernetes.io/hostname': 'other' }), undefined);
    const both = { name: 'host-9', nodeSelector: { matchLabels: { zone: 'a' } } };
    const withBoth = {
      'cpu-burst-config': data['cpu-burst-config'].replace(/\]\}$/, `,${JSON.stringify(both)}]}`),
    };
    assert.equal(
      sloConfigStrategyConflicts(withBoth, 'n1', { 'kubernetes.io/hostname': 'host-9', zone: 'a' }),
      'node "n1" matches 2 node strategies of slo-controller-config data[cpu-burst-config]: [host-9 host-9]; a node may match at most one',
    );
  });
});
