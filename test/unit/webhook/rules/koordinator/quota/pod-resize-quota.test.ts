import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type {
  AdmissionRequest,
  Decision,
  JsonObject,
  KubeObject,
} from '../../../../../../webhook/admission/types.js';
import { podResizeValidator } from '../../../../../../webhook/rules/koordinator/quota/pod-resize-quota.js';
import { podRequests } from '../../../../../../webhook/rules/koordinator/quota/pod-requests.js';
import { quotaView } from '../../../../../../webhook/rules/koordinator/quota/quota-view.js';
import { parseQuantity } from '../../../../../../webhook/util/quantity.js';
import { stateSnapshot, type StateFixture } from '../../../../../harness/state.js';
import { admissionRequest } from '../../../../../harness/requests.js';

const validate = podResizeValidator({ quotaAdmission: true });

function pod(cpu: string, status?: KubeObject['status']): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'team' },
    spec: { containers: [{ name: 'c', resources: { requests: { cpu }, limits: { cpu } } }] },
    ...(status ? { status } : {}),
  };
}

function resize(to: KubeObject, from: KubeObject, subResource = 'resize'): AdmissionRequest {
  return admissionRequest({
    kind: 'Pod',
    resource: 'pods',
    ...(subResource ? { subResource } : {}),
    namespace: 'team',
    name: 'p',
    operation: 'UPDATE',
    object: to,
    oldObject: from,
  });
}

/** The namespace `team`'s own 2-CPU quota; the pod p counted at `counted`, beside 1 CPU of other pods. */
function state(counted: string | undefined, extra: StateFixture = {}) {
  const others = parseQuantity('1');
  return stateSnapshot({
    elasticQuotas: [
      quotaView({ metadata: { name: 'team', namespace: 'team' }, spec: { max: { cpu: '2' }, min: {} } }),
    ],
    quotaUsed: { team: { cpu: others + (counted ? parseQuantity(counted) : 0n) } },
    ...(counted
      ? { podUsage: { 'team/p': { quota: 'team', requests: { cpu: parseQuantity(counted) } } } }
      : {}),
    ...extra,
  });
}

function message(decision: Decision): string {
  assert.equal(decision.allowed, false, 'expected a refusal');
  return decision.allowed ? '' : decision.message;
}

describe('podResizeValidator', () => {
  it('refuses a 500m pod resized to 1500m beside a 1-CPU pod in a 2-CPU quota, with Koordinator’s message', () => {
    assert.equal(
      message(validate(resize(pod('1500m'), pod('500m')), state('500m'))),
      'spec.containers[*].resources.requests: exceeded quota: team/team, requested: cpu=1500m, used: cpu=1, limited: cpu=2',
    );
  });

  it('admits a resize that fits and reserves the new size, which the ledger counts by its growth', () => {
    const decision = validate(resize(pod('1'), pod('500m')), state('500m'));
    assert.equal(decision.allowed, true);
    assert.deepEqual(decision.reserve, {
      key: 'team/p',
      quota: 'team',
      requests: new Map([['cpu', parseQuantity('1')]]),
    });
  });

  it('never refuses a shrink, even in a quota already past its max', () => {
    const over = stateSnapshot({
      elasticQuotas: [
        quotaView({ metadata: { name: 'team', namespace: 'team' }, spec: { max: { cpu: '2' }, min: {} } }),
      ],
      quotaUsed: { team: { cpu: parseQuantity('5') } },
      podUsage: { 'team/p': { quota: 'team', requests: { cpu: parseQuantity('2') } } },
    });
    const decision = validate(resize(pod('1'), pod('2')), over);
    assert.equal(decision.allowed, true);
    assert.equal(decision.reserve, undefined);
  });

  it('counts a shrink the kubelet has not actuated at the larger allocation, as ResourceQuota does', () => {
    const allocated = {
      containerStatuses: [
        { name: 'c', allocatedResources: { cpu: '1500m' }, resources: { requests: { cpu: '1500m' } } },
      ],
    };
    const decision = validate(resize(pod('500m', allocated), pod('1500m', allocated)), state('1500m'));
    assert.equal(decision.allowed, true);
    assert.equal(decision.reserve, undefined);
  });

  it('fits the new size beside everything counted when the watch has not seen the pod yet', () => {
    assert.equal(
      message(validate(resize(pod('1500m'), pod('500m')), state(undefined))),
      'spec.containers[*].resources.requests: exceeded quota: team/team, requested: cpu=1500m, used: cpu=1, limited: cpu=2',
    );
  });

  it('lets pass what no quota governs: the default quota, a quota counting nothing, a plain update, the gate off', () => {
    const free = stateSnapshot({ quotaUsed: {} });
    assert.equal(validate(resize(pod('8'), pod('1')), free).allowed, true);
    const podsOnly = state('500m', {
      elasticQuotas: [
        quotaView({ metadata: { name: 'team', namespace: 'team' }, spec: { max: { pods: '2' }, min: {} } }),
      ],
    });
    assert.equal(validate(resize(pod('8'), pod('1')), podsOnly).allowed, true);
    assert.equal(validate(resize(pod('8'), pod('500m'), ''), state('500m')).allowed, true);
    assert.equal(
      podResizeValidator({ quotaAdmission: false })(resize(pod('8'), pod('500m')), state('500m')).allowed,
      true,
    );
  });
});

describe('podRequests following the status', () => {
  const resized = (conditions: JsonObject[] = []): KubeObject => ({
    ...pod('500m'),
    status: {
      conditions,
      containerStatuses: [
        { name: 'c', allocatedResources: { cpu: '2' }, resources: { requests: { cpu: '1' } } },
      ],
    },
  });

  it('takes the largest of spec, actuated and allocated per container', () => {
    assert.equal(podRequests(resized(), undefined, { followStatus: true }).get('cpu'), parseQuantity('2'));
    assert.equal(podRequests(resized()).get('cpu'), parseQuantity('500m'));
  });

  it('leaves the spec out when the kubelet found the resize infeasible', () => {
    const infeasible = resized([{ type: 'PodResizePending', status: 'True', reason: 'Infeasible' }]);
    const pod = infeasible;
    (pod.spec as { containers: { resources: unknown }[] }).containers[0]!.resources = {
      requests: { cpu: '4' },
    };
    assert.equal(podRequests(pod, undefined, { followStatus: true }).get('cpu'), parseQuantity('2'));
  });
});
