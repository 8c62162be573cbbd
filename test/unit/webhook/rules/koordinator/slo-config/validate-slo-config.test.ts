import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Decision, KubeObject, Operation } from '../../../../../../webhook/admission/types.js';
import {
  type NodeLabels,
  sloConfigValidator,
} from '../../../../../../webhook/rules/koordinator/slo-config/validate-slo-config.js';
import type { StateSnapshot } from '../../../../../../webhook/state.js';
import { admissionRequest } from '../../../../../harness/requests.js';
import { stateSnapshot } from '../../../../../harness/state.js';
import { sloConfigProblemTexts } from '../../../../../harness/slo-config.js';

const NAMESPACE = 'koordinator-system';
const NAME = 'slo-controller-config';
const HEADER = `ConfigMap ${NAMESPACE}/${NAME} is not a valid SLO configuration:`;

function configMap(data: Record<string, string>, name = NAME, namespace = NAMESPACE): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data };
}

function review(
  operation: Operation,
  data: Record<string, string> | null,
  oldData: Record<string, string> | null = null,
  target: { name?: string; namespace?: string } = {},
): Parameters<ReturnType<typeof sloConfigValidator>>[0] {
  const name = target.name ?? NAME;
  const namespace = target.namespace ?? NAMESPACE;
  return admissionRequest({
    kind: 'ConfigMap',
    resource: 'configmaps',
    operation,
    namespace,
    name,
    object: data ? configMap(data, name, namespace) : null,
    oldObject: oldData ? configMap(oldData, name, namespace) : null,
  });
}

const rule = sloConfigValidator({ namespace: NAMESPACE, name: NAME });
const state = stateSnapshot();

function refusal(decision: Decision): string {
  assert.ok(!decision.allowed, 'expected a refusal');
  assert.equal(decision.code, 400);
  assert.equal(decision.reason, 'BadRequest');
  return decision.message;
}

const INVALID_THRESHOLD = JSON.stringify({ clusterStrategy: { memoryEvictThresholdPercent: 120 } });
const THRESHOLD_PROBLEM =
  'data[resource-threshold-config]: clusterStrategy.memoryEvictThresholdPercent: Invalid value: 120: must be at most 100';

const twoStrategies = (key: 'nodeStrategies' | 'nodeConfigs' = 'nodeStrategies'): string =>
  JSON.stringify({
    [key]: [
      { name: 'gpu', nodeSelector: { matchLabels: { gpu: 'true' } } },
      { name: 'zone-a', nodeSelector: { matchLabels: { zone: 'a' } } },
    ],
  });

describe('sloConfigValidator', () => {
  it('allows a valid configuration on CREATE and UPDATE', () => {
    const data = {
      'colocation-config': JSON.stringify({ enable: true, cpuReclaimThresholdPercent: 60 }),
      'resource-threshold-config': JSON.stringify({
        clusterStrategy: { enable: true, memoryEvictThresholdPercent: 70, memoryEvictLowerPercent: 65 },
      }),
    };
    assert.deepEqual(rule(review('CREATE', data), state), { allowed: true });
    assert.deepEqual(rule(review('UPDATE', data, {}), state), { allowed: true });
  });

  it('refuses with code 400, a header and one line per problem', () => {
    const decision = rule(
      review('CREATE', {
        'colocation-config': '{"enable": tru}',
        'resource-threshold-config': JSON.stringify({
          clusterStrategy: { memoryEvictThresholdPercent: 70, memoryEvictLowerPercent: 80 },
        }),
      }),
      state,
    );
    assert.equal(
      refusal(decision),
      [
        HEADER,
        "  - data[colocation-config]: not valid JSON: invalid character '}' in literal true (expecting 'e') (line 1, column 15)",
        '  - data[resource-threshold-config]: clusterStrategy.memoryEvictThresholdPercent: Invalid value: 70: must be greater than memoryEvictLowerPercent (80)',
        '  - data[resource-threshold-config]: clusterStrategy.memoryEvictLowerPercent: Invalid value: 80: must be less than memoryEvictThresholdPercent (70)',
      ].join('\n'),
    );
  });

  it('names its own ConfigMap in the header', () => {
    const custom = sloConfigValidator({ namespace: 'koord', name: 'slo' });
    const decision = custom(
      review('CREATE', { 'resource-threshold-config': INVALID_THRESHOLD }, null, {
        namespace: 'koord',
        name: 'slo',
      }),
      state,
    );
    assert.ok(refusal(decision).startsWith('ConfigMap koord/slo is not a valid SLO configuration:\n'));
  });

  it('leaves every other ConfigMap alone', () => {
    const data = { 'resource-threshold-config': INVALID_THRESHOLD };
    assert.equal(rule(review('CREATE', data, null, { name: 'other' }), state).allowed, true);
    assert.equal(rule(review('CREATE', data, null, { namespace: 'default' }), state).allowed, true);
  });

  it('allows DELETE: the slo-controller falls back to its defaults', () => {
    assert.equal(
      rule(review('DELETE', null, { 'resource-threshold-config': INVALID_THRESHOLD }), state).allowed,
      true,
    );
  });

  it('checks every non-empty key on CREATE and skips empty ones', () => {
    assert.match(
      refusal(rule(review('CREATE', { 'resource-threshold-config': INVALID_THRESHOLD }), state)),
      /at most 100/,
    );
    assert.equal(
      rule(review('CREATE', { 'resource-threshold-config': '', 'colocation-config': '' }), state).allowed,
      true,
    );
  });

  it('skips a key whose value did not change, so a legacy invalid key does not block other edits', () => {
    const old = { 'resource-threshold-config': INVALID_THRESHOLD, 'cpu-burst-config': '{}' };
    const edited = {
      ...old,
      'cpu-burst-config': JSON.stringify({ clusterStrategy: { cpuBurstPercent: 500 } }),
    };
    assert.equal(rule(review('UPDATE', edited, old), state).allowed, true);
  });

  it('checks a key again as soon as it changes', () => {
    const old = { 'resource-threshold-config': INVALID_THRESHOLD };
    const edited = {
      'resource-threshold-config': JSON.stringify({
        clusterStrategy: { memoryEvictThresholdPercent: 120, enable: true },
      }),
    };
    assert.match(
      refusal(rule(review('UPDATE', edited, old), state)),
      /memoryEvictThresholdPercent: Invalid value: 120/,
    );
  });

  it('checks a key that was absent before', () => {
    assert.match(
      refusal(rule(review('UPDATE', { 'resource-threshold-config': INVALID_THRESHOLD }, {}), state)),
      /at most 100/,
    );
  });

  it('reports every problem across keys, each once', () => {
    const data = {
      'resource-threshold-config': JSON.stringify({
        clusterStrategy: { memoryEvictThresholdPercent: 120 },
        nodeStrategies: [
          { name: 'a', nodeSelector: { matchLabels: { p: 'x' } }, cpuSuppressThresholdPercent: 101 },
          { name: 'b', nodeSelector: { matchLabels: { p: 'x' } } },
          { name: 'c', nodeSelector: { matchLabels: { p: 'x' } } },
        ],
      }),
      'cpu-burst-config': JSON.stringify({ clusterStrategy: { cpuBurstPercent: 0 } }),
      'system-config': JSON.stringify({ clusterStrategy: { watermarkScaleFactor: '10' } }),
    };
    assert.deepEqual(sloConfigProblemTexts(data, null, []), [
      THRESHOLD_PROBLEM,
      'data[resource-threshold-config]: nodeStrategies[0].cpuSuppressThresholdPercent: Invalid value: 101: must be at most 100',
      'data[resource-threshold-config]: nodeStrategies [a b c] overlap: a node labelled {p=x} would match each of them; a node may match at most one (NodeStrategiesOverlap)',
      'data[system-config]: clusterStrategy.watermarkScaleFactor: Invalid value: "10": must be an integer (int64)',
      'data[cpu-burst-config]: clusterStrategy.cpuBurstPercent: Invalid value: 0: must be at least 1',
    ]);
  });

  it('reports only the decode errors of a key whose value Go could not unmarshal', () => {
    const data = {
      'resource-threshold-config': JSON.stringify({
        clusterStrategy: { memoryEvictThresholdPercent: 120, memoryEvictLowerPercent: '60' },
        nodeStrategies: [{ name: 'a' }],
      }),
    };
    assert.deepEqual(sloConfigProblemTexts(data, null, []), [
      'data[resource-threshold-config]: clusterStrategy.memoryEvictLowerPercent: Invalid value: "60": must be an integer (int64)',
    ]);
  });

  it('refuses a value that is not a JSON object, and accepts null (Go leaves the defaults)', () => {
    assert.deepEqual(sloConfigProblemTexts({ 'colocation-config': '[]', 'system-config': '"x"' }, null, []), [
      'data[colocation-config]: Invalid value: []: must be an object',
      'data[system-config]: Invalid value: "x": must be an object',
    ]);
    assert.deepEqual(sloConfigProblemTexts({ 'colocation-config': 'null' }, null, []), []);
  });

  it('warns about fields the slo-controller would ignore (likely typos), refused or not', () => {
    const typo = JSON.stringify({
      clusterStrategy: { cpuSupressThresholdPercent: 65, CPUSuppressMinPercent: 10 },
      nodeStrategies: [{ name: 'a', nodeSelector: { matchLabels: { a: 'b' } }, extra: 1 }],
    });
    const allowed = rule(review('CREATE', { 'resource-threshold-config': typo }), state);
    assert.equal(allowed.allowed, true);
    assert.deepEqual(allowed.warnings, [
      `ConfigMap ${NAMESPACE}/${NAME} data[resource-threshold-config]: clusterStrategy.cpuSupressThresholdPercent: unknown field, ignored by the slo-controller`,
      `ConfigMap ${NAMESPACE}/${NAME} data[resource-threshold-config]: nodeStrategies[0].extra: unknown field, ignored by the slo-controller`,
    ]);
    const both = JSON.stringify({ clusterStrategy: { memoryEvictThresholdPercent: 120, typo: true } });
    const refused = rule(review('CREATE', { 'resource-threshold-config': both }), state);
    refusal(refused);
    assert.match(refused.warnings?.[0] ?? '', /clusterStrategy\.typo: unknown field/);
    const extensions = JSON.stringify({ extensions: { anything: { goes: 1 } } });
    assert.equal(rule(review('CREATE', { 'colocation-config': extensions }), state).warnings, undefined);
  });

  it('ignores keys it does not know', () => {
    assert.deepEqual(sloConfigProblemTexts({ 'my-extension-config': '{not json' }, null, []), []);
  });

  it('does not run ProfileParamValid (off by default in Koordinator): names may be missing or repeated', () => {
    const data = {
      'cpu-burst-config': JSON.stringify({
        nodeStrategies: [
          { nodeSelector: { matchLabels: { p: 'x' } } },
          { name: 'same', nodeSelector: { matchLabels: { p: 'y' } } },
          { name: 'same', nodeSelector: { matchLabels: { p: 'z' } } },
        ],
      }),
    };
    assert.deepEqual(sloConfigProblemTexts(data, null, []), []);
  });

  it('refuses a config it cannot prove free of overlaps within its work bound', () => {
    // 100 disjoint strategies of 1,000 virtual nodes with 22 labels each: more work than the search
    // may do, and no overlap to show for it.
    const nodeStrategies = Array.from({ length: 100 }, (_, index) => ({
      name: `s${index}`,
      nodeSelector: {
        matchLabels: Object.fromEntries<string>([
          ['pool', `${index}`],
          ...Array.from({ length: 20 }, (_, label): [string, string] => [`l${label}`, 'x']),
        ]),
        matchExpressions: [
          { key: 'k', operator: 'In', values: Array.from({ length: 1000 }, (_, v) => `${v}`) },
        ],
      },
    }));
    const data = { 'cpu-burst-config': JSON.stringify({ nodeStrategies }) };
    assert.deepEqual(sloConfigProblemTexts(data, null, []), [
      'data[cpu-burst-config]: nodeStrategies: too many node strategies share labels to check them for overlaps in bounded time; split or simplify their nodeSelectors (NodeStrategiesOverlap)',
    ]);
  });

  it('names an unnamed overlapping strategy by its path', () => {
    const data = {
      'cpu-burst-config': JSON.stringify({
        nodeStrategies: [
          { nodeSelector: { matchLabels: { p: 'x' } } },
          { name: 'b', nodeSelector: { matchExpressions: [{ key: 'p', operator: 'Exists' }] } },
        ],
      }),
    };
    assert.deepEqual(sloConfigProblemTexts(data, null, []), [
      'data[cpu-burst-config]: nodeStrategies [nodeStrategies[0] b] overlap: a node labelled {p=x} would match each of them; a node may match at most one (NodeStrategiesOverlap)',
    ]);
  });
});

describe('ExistNodeConfict: real nodes matching two strategies', () => {
  const NODES: NodeLabels[] = [
    { name: 'n1', labels: { gpu: 'true', zone: 'a' } },
    { name: 'n2', labels: { gpu: 'true', zone: 'b' } },
    { name: 'n3', labels: { zone: 'a' } },
  ];

  it('refuses a config under which a node matches two strategies, naming node, strategies and key', () => {
    assert.deepEqual(sloConfigProblemTexts({ 'cpu-burst-config': twoStrategies() }, null, NODES), [
      'data[cpu-burst-config]: node "n1" matches 2 nodeStrategies [gpu zone-a]; a node may match at most one (ExistNodeConfict)',
    ]);
  });

  it('checks the nodeConfigs of colocation-config and of the three extra keys', () => {
    for (const key of [
      'colocation-config',
      'host-application-config',
      'cpu-normalization-config',
      'resource-amplification-config',
    ]) {
      assert.deepEqual(sloConfigProblemTexts({ [key]: twoStrategies('nodeConfigs') }, null, NODES), [
        `data[${key}]: node "n1" matches 2 nodeConfigs [gpu zone-a]; a node may match at most one (ExistNodeConfict)`,
      ]);
    }
  });

  it('groups the nodes of one conflict, naming five and counting the rest', () => {
    const many = Array.from({ length: 8 }, (_, index) => ({
      name: `node-${index}`,
      labels: { gpu: 'true', zone: 'a' },
    }));
    assert.deepEqual(sloConfigProblemTexts({ 'system-config': twoStrategies() }, null, many), [
      'data[system-config]: nodes "node-0", "node-1", "node-2", "node-3", "node-4" and 3 more each match 2 nodeStrategies [gpu zone-a]; a node may match at most one (ExistNodeConfict)',
    ]);
  });

  it('checks only changed keys', () => {
    const data = { 'cpu-burst-config': twoStrategies() };
    assert.deepEqual(sloConfigProblemTexts(data, data, NODES), []);
  });

  it('does not read the node list unless a checked key has two strategies or more', () => {
    const untouchable: Iterable<NodeLabels> = {
      [Symbol.iterator]: () => {
        throw new Error('nodes read');
      },
    };
    const one = JSON.stringify({
      nodeStrategies: [{ name: 'a', nodeSelector: { matchLabels: { a: 'b' } } }],
    });
    assert.deepEqual(sloConfigProblemTexts({ 'cpu-burst-config': one }, null, untouchable), []);
    assert.throws(
      () => sloConfigProblemTexts({ 'cpu-burst-config': twoStrategies() }, null, untouchable),
      /nodes read/,
    );
  });

  it('skips a key whose selectors do not convert (Koordinator’s checker never initialises)', () => {
    const data = JSON.stringify({
      nodeStrategies: [
        { name: 'gpu', nodeSelector: { matchLabels: { gpu: 'true' } } },
        { name: 'bad', nodeSelector: { matchExpressions: [{ key: 'zone', operator: 'In' }] } },
      ],
    });
    assert.deepEqual(sloConfigProblemTexts({ 'cpu-burst-config': data }, null, NODES), [
      'data[cpu-burst-config]: nodeStrategies[1].nodeSelector.matchExpressions[0].values: Required value: operator In needs at least one value',
    ]);
  });

  it('reads the nodes from the state snapshot by default', () => {
    const withNodes = stateSnapshot({ nodes: NODES });
    const message = refusal(rule(review('CREATE', { 'cpu-burst-config': twoStrategies() }), withNodes));
    assert.match(message, /node "n1" matches 2 nodeStrategies \[gpu zone-a\]/);
  });

  it('takes the nodes from nodesOf when given', () => {
    const custom = sloConfigValidator({
      namespace: NAMESPACE,
      name: NAME,
      nodesOf: (_state: StateSnapshot) => [{ name: 'x', labels: { gpu: 'true', zone: 'a' } }],
    });
    assert.match(
      refusal(custom(review('CREATE', { 'cpu-burst-config': twoStrategies() }), state)),
      /node "x" matches/,
    );
  });

  it('passes --max-amplification-ratio on to resource-amplification-config', () => {
    const bounded = sloConfigValidator({ namespace: NAMESPACE, name: NAME, maxAmplificationRatio: 2 });
    const data = {
      'resource-amplification-config': JSON.stringify({ resourceAmplificationRatio: { cpu: 3 } }),
    };
    assert.match(
      refusal(bounded(review('CREATE', data), state)),
      /resourceAmplificationRatio\[cpu\]: Invalid value: 3: must be at most 2/,
    );
    assert.equal(rule(review('CREATE', data), state).allowed, true);
  });
});
