import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AdmissionRequest, Decision, KubeObject } from '../../../../../../webhook/admission/types.js';
import { amplifyNodeStatus } from '../../../../../../webhook/rules/koordinator/node/amplify-node-status.js';
import { nodeValidator } from '../../../../../../webhook/rules/koordinator/node/validate-node.js';
import { stateSnapshot } from '../../../../../harness/state.js';
import { admissionRequest } from '../../../../../harness/requests.js';

const RATIO = 'node.koordinator.sh/resource-amplification-ratio';
const RAW = 'node.koordinator.sh/raw-allocatable';

function node(annotations: Record<string, string>, allocatable: Record<string, string> | null): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'n1', annotations },
    ...(allocatable ? { status: { allocatable } } : {}),
  };
}

function statusUpdate(
  object: KubeObject,
  oldObject: KubeObject,
  operation: 'UPDATE' | 'CREATE' = 'UPDATE',
): AdmissionRequest {
  return admissionRequest({
    kind: 'Node',
    resource: 'nodes',
    subResource: 'status',
    operation,
    object,
    oldObject,
  });
}

const state = stateSnapshot();

function result(decision: Decision): {
  allocatable: Record<string, string>;
  annotations: Record<string, string>;
} {
  assert.ok(decision.allowed && decision.mutated, JSON.stringify(decision));
  return {
    allocatable: (decision.mutated.status as { allocatable: Record<string, string> }).allocatable,
    annotations: decision.mutated.metadata.annotations as Record<string, string>,
  };
}

describe('amplifyNodeStatus', () => {
  it('amplifies cpu 1000m by 1.5 to 1500m and records the raw allocatable', () => {
    const before = node({ [RATIO]: '{"cpu":1.5}' }, { cpu: '1000m', memory: '8Gi' });
    const { allocatable, annotations } = result(amplifyNodeStatus(statusUpdate(before, before), state));
    assert.equal(allocatable.cpu, '1500m');
    assert.equal(allocatable.memory, '8Gi');
    assert.equal(annotations[RAW], '{"cpu":"1","memory":"8Gi"}');
  });

  it('leaves allocatable alone for ratios of 0.5 and 1 but still records the raw value', () => {
    for (const ratio of ['{"cpu":0.5}', '{"cpu":1}']) {
      const before = node({ [RATIO]: ratio }, { cpu: '1' });
      const { allocatable, annotations } = result(amplifyNodeStatus(statusUpdate(before, before), state));
      assert.equal(allocatable.cpu, '1');
      assert.equal(annotations[RAW], '{"cpu":"1"}');
    }
  });

  it('amplifies from the recorded raw value when allocatable did not change', () => {
    const current = node({ [RATIO]: '{"cpu":2}', [RAW]: '{"cpu":"1"}' }, { cpu: '2' });
    const { allocatable } = result(amplifyNodeStatus(statusUpdate(current, current), state));
    assert.equal(allocatable.cpu, '2');
    const raw = node({ [RATIO]: '{"cpu":2}', [RAW]: '{"cpu":"1"}' }, { cpu: '1500m' });
    assert.equal(result(amplifyNodeStatus(statusUpdate(raw, raw), state)).allocatable.cpu, '2');
  });

  it('takes a new kubelet report as the real capacity', () => {
    const before = node({ [RATIO]: '{"memory":2}', [RAW]: '{"memory":"8Gi"}' }, { memory: '16Gi' });
    const after = node({ [RATIO]: '{"memory":2}', [RAW]: '{"memory":"8Gi"}' }, { memory: '10Gi' });
    const { allocatable, annotations } = result(amplifyNodeStatus(statusUpdate(after, before), state));
    assert.equal(allocatable.memory, '20Gi');
    assert.equal(annotations[RAW], '{"memory":"10Gi"}');
  });

  it('ignores resources other than cpu and memory', () => {
    const before = node({ [RATIO]: '{"eni":3}' }, { cpu: '1', eni: '2' });
    assert.equal(result(amplifyNodeStatus(statusUpdate(before, before), state)).allocatable.eni, '2');
  });

  it('drops the raw annotation once the ratio annotation is gone', () => {
    const before = node({ [RAW]: '{"cpu":"1"}', other: 'x' }, { cpu: '1' });
    assert.deepEqual(result(amplifyNodeStatus(statusUpdate(before, before), state)).annotations, {
      other: 'x',
    });
  });

  it('does nothing on CREATE or without allocatable', () => {
    const created = node({ [RATIO]: '{"cpu":2}' }, { cpu: '1' });
    assert.deepEqual(amplifyNodeStatus(statusUpdate(created, created, 'CREATE'), state), { allowed: true });
    const empty = node({ [RATIO]: '{"cpu":2}' }, null);
    assert.deepEqual(amplifyNodeStatus(statusUpdate(empty, empty), state), { allowed: true });
  });
});

describe('amplifyNodeStatus: what it cannot read never refuses a heartbeat', () => {
  const unchanged = (decision: Decision, annotation: string): void => {
    assert.equal(decision.allowed, true, JSON.stringify(decision));
    assert.ok(decision.allowed && decision.mutated === undefined, 'the status update goes through as sent');
    assert.equal(decision.warnings?.length, 1);
    assert.ok(decision.warnings?.[0]?.startsWith(annotation), decision.warnings?.[0]);
    assert.ok(decision.warnings?.[0]?.endsWith('; node status not amplified'), decision.warnings?.[0]);
  };

  for (const raw of ['not json', '[1,2]', '"1"', 'null']) {
    it(`lets the update through when raw-allocatable is ${raw}`, () => {
      const before = node({ [RATIO]: '{"cpu":2}', [RAW]: raw }, { cpu: '1' });
      const decision = amplifyNodeStatus(statusUpdate(before, before), state);
      unchanged(decision, `metadata.annotations[${RAW}]: must be a JSON object of quantities`);
      assert.deepEqual(decision.audit, { action: 'skipped', reason: 'invalid-annotation' });
    });
  }

  // A value that is not a number fails Koordinator's map of floats whatever resource it is for.
  for (const ratio of ['not json', '[2]', '2', 'null', '{"cpu":"x"}', '{"eni":true}']) {
    it(`lets the update through when the ratio annotation is ${ratio}`, () => {
      const before = node({ [RATIO]: ratio }, { cpu: '1' });
      const decision = amplifyNodeStatus(statusUpdate(before, before), state);
      unchanged(decision, `metadata.annotations[${RATIO}]: must be a JSON object of ratios`);
      assert.deepEqual(decision.audit, { action: 'skipped', reason: 'invalid-annotation' });
    });
  }

  for (const quantity of ['1e50000000', 'lots', '{}']) {
    it(`lets the update through when the recorded raw cpu is ${quantity}`, () => {
      const value = quantity === '{}' ? {} : quantity;
      const before = node({ [RATIO]: '{"cpu":2}', [RAW]: JSON.stringify({ cpu: value }) }, { cpu: '1' });
      const decision = amplifyNodeStatus(statusUpdate(before, before), state);
      unchanged(decision, `metadata.annotations[${RAW}][cpu]: `);
      assert.deepEqual(decision.audit, { action: 'skipped', reason: 'invalid-quantity' });
    });
  }

  it('lets the update through when a ratio would take cpu past int64', () => {
    const before = node({ [RATIO]: '{"cpu":1e300}' }, { cpu: '1' });
    unchanged(
      amplifyNodeStatus(statusUpdate(before, before), state),
      `metadata.annotations[${RATIO}][cpu]: ratio 1e+300`,
    );
  });

  it('lets the update through when the kubelet reports a quantity past 2^63-1', () => {
    const before = node({ [RATIO]: '{"cpu":2}' }, { cpu: '1' });
    const after = node({ [RATIO]: '{"cpu":2}' }, { cpu: '1e50000000' });
    unchanged(
      amplifyNodeStatus(statusUpdate(after, before), state),
      'status.allocatable[cpu]: "1e50000000" is too large',
    );
  });
});

describe('nodeValidator', () => {
  const validate = nodeValidator({ maxRatio: 10, sloConfigNamespace: 'koordinator-system' });
  const update = (annotations: Record<string, string>): Decision =>
    validate({ ...statusUpdate(node(annotations, null), node({}, null)), subResource: undefined }, state);

  it('accepts finite ratios from 1 to the bound', () => {
    assert.equal(update({ [RATIO]: '{"cpu":1.5,"memory":1}' }).allowed, true);
    assert.equal(update({}).allowed, true);
  });

  for (const [label, value, message] of [
    ['invalid JSON', '{cpu', /not valid JSON/],
    ['JSON nested 20,000 deep', `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`, /not valid JSON/],
    ['a list', '[1.5]', /must be a JSON object of ratios/],
    ['a ratio below 1', '{"cpu":0.5}', /\.cpu: ratio 0\.5 must be at least 1/],
    ['a ratio above the bound', '{"memory":12}', /\.memory: ratio 12 exceeds the maximum 10/],
    ['a ratio that is not a number', '{"cpu":"2"}', /\.cpu: ratio "2" must be a finite number/],
  ] as const) {
    it(`refuses ${label}, naming the resource`, () => {
      const decision = update({ [RATIO]: value });
      assert.ok(!decision.allowed);
      assert.match(decision.message, message);
    });
  }
});

describe('nodeValidator: slo-controller-config node strategies', () => {
  const validate = nodeValidator({ maxRatio: 10, sloConfigNamespace: 'koordinator-system' });
  const strategies = JSON.stringify({
    clusterStrategy: { enable: true },
    nodeStrategies: [
      { name: 'pool-a', nodeSelector: { matchLabels: { pool: 'a' } } },
      { name: 'gpu', nodeSelector: { matchExpressions: [{ key: 'gpu', operator: 'Exists' }] } },
    ],
  });
  const withConfig = stateSnapshot({
    configMaps: [
      {
        namespace: 'koordinator-system',
        name: 'slo-controller-config',
        uid: 'u',
        resourceVersion: '1',
        data: { 'resource-threshold-config': strategies },
      },
    ],
  });
  const labelled = (labels: Record<string, string>): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'n1', labels },
  });
  const review = (
    after: Record<string, string>,
    before: Record<string, string> | null,
    operation: 'UPDATE' | 'CREATE' = 'UPDATE',
  ): AdmissionRequest => ({
    ...statusUpdate(labelled(after), labelled(before ?? {}), operation),
    subResource: undefined,
    oldObject: before ? labelled(before) : null,
  });

  it('refuses a label change that puts the node under two strategies of one key, naming them', () => {
    const decision = validate(review({ pool: 'a', gpu: 'true' }, { pool: 'a' }), withConfig);
    assert.ok(!decision.allowed);
    assert.equal(
      decision.message,
      'node "n1" matches 2 node strategies of slo-controller-config data[resource-threshold-config]: [pool-a gpu]; a node may match at most one',
    );
  });

  it('allows one strategy, unchanged labels, no config, and warns on CREATE as Koordinator only logs', () => {
    assert.equal(validate(review({ pool: 'a' }, {}), withConfig).allowed, true);
    const unchanged = { pool: 'a', gpu: 'true' };
    assert.deepEqual(validate(review(unchanged, unchanged), withConfig), { allowed: true });
    assert.equal(validate(review({ pool: 'a', gpu: 'true' }, { pool: 'a' }), state).allowed, true);
    const created = validate(review({ pool: 'a', gpu: 'true' }, null, 'CREATE'), withConfig);
    assert.equal(created.allowed, true);
    assert.match(created.warnings?.[0] ?? '', /matches 2 node strategies/);
  });
});
