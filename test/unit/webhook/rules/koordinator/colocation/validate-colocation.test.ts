import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type {
  AdmissionRequest,
  Decision,
  JsonObject,
  KubeObject,
} from '../../../../../../webhook/admission/types.js';
import { podValidator } from '../../../../../../webhook/rules/koordinator/pod/validate-pod.js';
import { stateSnapshot } from '../../../../../harness/state.js';
import { admissionRequest } from '../../../../../harness/requests.js';

const validate = podValidator({
  skipValidatingPriority: false,
  quotaAdmission: true,
  quotaAdmissionOnUpdate: false,
  validateDeviceRequests: false,
  enhancedValidation: false,
  enhancedValidationNamespace: 'koordinator-system',
});
const state = stateSnapshot();

function pod(
  labels: Record<string, string>,
  requests: Record<string, string> = { cpu: '1' },
  extra: { priority?: number; annotations?: Record<string, string> } = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'p',
      namespace: 'team',
      labels,
      ...(extra.annotations ? { annotations: extra.annotations } : {}),
    },
    spec: {
      ...(extra.priority !== undefined ? { priority: extra.priority } : {}),
      containers: [{ name: 'c', resources: { requests } }],
    },
  };
}

function review(object: KubeObject, oldObject?: KubeObject): AdmissionRequest {
  return admissionRequest({
    kind: 'Pod',
    resource: 'pods',
    namespace: 'team',
    name: 'p',
    operation: oldObject ? 'UPDATE' : 'CREATE',
    object,
    oldObject: oldObject ?? null,
  });
}

function message(decision: Decision): string {
  assert.equal(decision.allowed, false, 'expected a refusal');
  return decision.allowed ? '' : decision.message;
}

const QOS = 'koordinator.sh/qosClass';
const PC = 'koordinator.sh/priority-class';

describe('pod colocation checks', () => {
  it('forbids the reserve-pod annotation', () => {
    assert.equal(
      message(
        validate(
          review(pod({}, {}, { annotations: { 'scheduling.koordinator.sh/reserve-pod': 'x' } })),
          state,
        ),
      ),
      'annotations.scheduling.koordinator.sh/reserve-pod: Forbidden: cannot set in annotations',
    );
  });

  it('requires QoS BE with batch resources', () => {
    assert.equal(
      message(validate(review(pod({ [PC]: 'koord-batch' }, { 'kubernetes.io/batch-cpu': '1000' })), state)),
      'labels.koordinator.sh/qosClass: Required value: must specify koordinator QoS BE with koordinator colocation resources',
    );
    assert.equal(
      validate(
        review(pod({ [QOS]: 'BE', [PC]: 'koord-batch' }, { 'kubernetes.io/batch-cpu': '1000' })),
        state,
      ).allowed,
      true,
    );
  });

  const pairs: [string, Record<string, string>, number | undefined, boolean][] = [
    ['BE without a priority', { [QOS]: 'BE' }, undefined, false],
    ['BE with koord-prod (by spec.priority)', { [QOS]: 'BE' }, 9500, false],
    ['BE with koord-batch', { [QOS]: 'BE', [PC]: 'koord-batch' }, undefined, true],
    ['BE with koord-mid (by spec.priority)', { [QOS]: 'BE' }, 7500, true],
    ['LSR with koord-prod', { [QOS]: 'LSR', [PC]: 'koord-prod' }, undefined, true],
    ['LSR with koord-mid', { [QOS]: 'LSR', [PC]: 'koord-mid' }, undefined, false],
    ['LSR without a priority', { [QOS]: 'LSR' }, undefined, false],
    ['LS with anything', { [QOS]: 'LS', [PC]: 'koord-free' }, undefined, true],
    [
      'an unknown priority-class label (no fallback to spec.priority)',
      { [QOS]: 'BE', [PC]: 'gold' },
      5500,
      false,
    ],
  ];
  for (const [label, labels, priority, allowed] of pairs) {
    it(`${allowed ? 'allows' : 'forbids'} ${label}`, () => {
      const decision = validate(
        review(pod(labels, { cpu: '2' }, priority === undefined ? {} : { priority })),
        state,
      );
      assert.equal(decision.allowed, allowed, JSON.stringify(decision));
      if (!allowed)
        assert.match(
          message(decision),
          /^Pod: Forbidden: koordinator\.sh\/qosClass=\w+ and priorityClass=[\w-]* cannot be used in combination$/,
        );
    });
  }

  it('requires whole CPUs for LSR and LSE', () => {
    assert.equal(
      message(validate(review(pod({ [QOS]: 'LSE' }, { cpu: '1500m' })), state)),
      'pod.spec.containers[*].resources.requests: Invalid value: "1500m": the requested CPUs of LSR Pod must be integer',
    );
    // The sum as Go prints it: in the format of its first term.
    assert.equal(
      message(validate(review(pod({ [QOS]: 'LSE' }, { cpu: '1500e-3' })), state)),
      'pod.spec.containers[*].resources.requests: Invalid value: "1500e-3": the requested CPUs of LSR Pod must be integer',
    );
    assert.equal(
      message(validate(review(pod({ [QOS]: 'LSE' }, { memory: '1Gi' })), state)),
      'pod.spec.containers[*].resources.requests: Required value: LSR Pod must declare the requested CPUs',
    );
  });

  it('reads an LSR pod’s CPUs at pod level where spec.resources sets them, as v1.8.0’s GetPodRequest does', () => {
    const podLevel = (cpu: string): KubeObject => {
      const object = pod({ [QOS]: 'LSR', [PC]: 'koord-prod' }, { memory: '1Gi' });
      return { ...object, spec: { ...(object.spec as JsonObject), resources: { requests: { cpu } } } };
    };
    assert.equal(validate(review(podLevel('2')), state).allowed, true);
    assert.equal(
      message(validate(review(podLevel('1500m')), state)),
      'pod.spec.containers[*].resources.requests: Invalid value: "1500m": the requested CPUs of LSR Pod must be integer',
    );
  });

  it('keeps QoS, priority class and sub-priority immutable, reporting every change together', () => {
    const before = pod({ [QOS]: 'LS', [PC]: 'koord-prod', 'koordinator.sh/priority': '1' });
    const after = pod({ [QOS]: 'BE', [PC]: 'koord-batch', 'koordinator.sh/priority': '2' });
    assert.equal(
      message(validate(review(after, before), state)),
      '[labels.koordinator.sh/qosClass: Invalid value: "BE": field is immutable, spec.priority: Invalid value: "koord-batch": field is immutable, labels.koordinator.sh/priority: Invalid value: "2": field is immutable]',
    );
    const relaxed = podValidator({
      skipValidatingPriority: true,
      quotaAdmission: true,
      quotaAdmissionOnUpdate: false,
      validateDeviceRequests: false,
      enhancedValidation: false,
      enhancedValidationNamespace: 'koordinator-system',
    });
    const subOnly = pod({ [QOS]: 'LS', [PC]: 'koord-prod', 'koordinator.sh/priority': '2' });
    assert.equal(relaxed(review(subOnly, before), state).allowed, true);
  });

  it('runs the quota checks after the colocation ones', () => {
    const quotaRefusal = validate(
      review(pod({ 'quota.scheduling.koordinator.sh/preemptible': 'true' }), pod({})),
      state,
    );
    assert.match(message(quotaRefusal), /Preemptible label is forbidden modify now\./);
  });

  it('marks a colocation refusal as the step colocation, with what the later steps decide without it', () => {
    const bePod = pod({ [QOS]: 'BE' });
    const alone = validate(review(bePod), state);
    assert.equal(alone.allowed, false);
    assert.ok(!alone.allowed && alone.step);
    assert.equal(alone.step.name, 'colocation');
    assert.deepEqual(alone.step.otherwise, { allowed: true });

    const alsoPreemptible = validate(
      review(
        pod({ [QOS]: 'BE', 'quota.scheduling.koordinator.sh/preemptible': 'true' }),
        pod({ [QOS]: 'BE' }),
      ),
      state,
    );
    assert.ok(!alsoPreemptible.allowed && alsoPreemptible.step);
    assert.match(message(alsoPreemptible.step.otherwise), /Preemptible label is forbidden modify now\./);
  });

  it('keeps the reserve-pod annotation out of the colocation step: it is refused as in Koordinator v1.7.0', () => {
    const reserved = validate(
      review(
        pod({ [QOS]: 'BE' }, { cpu: '1' }, { annotations: { 'scheduling.koordinator.sh/reserve-pod': 'x' } }),
      ),
      state,
    );
    assert.ok(!reserved.allowed);
    assert.equal(reserved.step, undefined);
  });
});
