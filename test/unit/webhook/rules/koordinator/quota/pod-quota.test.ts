import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type {
  AdmissionRequest,
  Decision,
  KubeObject,
  Operation,
} from '../../../../../../webhook/admission/types.js';
import { checkDeviceRequests } from '../../../../../../webhook/rules/koordinator/device/validate-device.js';
import { podValidator } from '../../../../../../webhook/rules/koordinator/pod/validate-pod.js';
import { decisionOf } from '../../../../../../webhook/rules/shared/findings.js';
import { checkPodQuota as podQuotaFindings } from '../../../../../../webhook/rules/koordinator/quota/pod-quota.js';
import { podIsDone, podRequests } from '../../../../../../webhook/rules/koordinator/quota/pod-requests.js';
import { quotaView } from '../../../../../../webhook/rules/koordinator/quota/quota-view.js';
import { parseQuantity } from '../../../../../../webhook/util/quantity.js';
import { stateSnapshot, type StateFixture } from '../../../../../harness/state.js';
import { admissionRequest } from '../../../../../harness/requests.js';

const L = (key: string): string => `quota.scheduling.koordinator.sh/${key}`;
const on = { quotaAdmission: true, quotaAdmissionOnUpdate: false };

function pod(labels: Record<string, string>, cpu = '1', extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'team', labels },
    spec: { containers: [{ name: 'c', resources: { requests: { cpu, memory: '1Gi' } } }], ...extra },
  };
}

function review(
  operation: Operation,
  object: KubeObject,
  oldObject: KubeObject | null = null,
): AdmissionRequest {
  return admissionRequest({
    kind: 'Pod',
    resource: 'pods',
    namespace: 'team',
    name: 'p',
    operation,
    object,
    oldObject,
  });
}

function quota(
  name: string,
  labels: Record<string, string>,
  max: Record<string, string>,
  annotations: Record<string, string> = {},
) {
  return quotaView({ metadata: { name, namespace: 'quotas', labels, annotations }, spec: { max, min: {} } });
}

const fixture: StateFixture = {
  elasticQuotas: [
    quota('parent', { [L('is-parent')]: 'true' }, { cpu: '10' }),
    quota('leaf', { [L('parent')]: 'parent' }, { cpu: '4', memory: '8Gi' }),
    quota('tight', {}, { cpu: '4' }, { [L('admission')]: '{"cpu":"2"}' }),
    quota('pods-only', {}, { pods: '10' }),
  ],
  quotaUsed: { leaf: { cpu: parseQuantity('3') } },
};
const state = stateSnapshot(fixture);

/** The findings as /validate-pod answers them, with the reservation of an admitted pod. */
function checkPodQuota(...args: Parameters<typeof podQuotaFindings>): Decision {
  const found = podQuotaFindings(...args);
  const decision = decisionOf(found);
  return decision.allowed && found.reserve ? { ...decision, reserve: found.reserve } : decision;
}

function message(decision: Decision): string {
  assert.equal(decision.allowed, false);
  return decision.allowed ? '' : decision.message;
}

describe('checkPodQuota', () => {
  it('refuses a pod linked to a parent quota', () => {
    assert.match(
      message(checkPodQuota(review('CREATE', pod({ [L('name')]: 'parent' })), state, on)),
      /^metadata\.labels\[quota\.scheduling\.koordinator\.sh\/name\]: pod can not be linked to a parentQuotaGroup,quota:parent, pod:p$/,
    );
  });

  it('names the pod by its object, as Koordinator does: a generateName pod has no name in the review', () => {
    const named = { ...pod({ [L('name')]: 'parent' }) };
    named.metadata = { ...named.metadata, name: 'gen-x7k2p', generateName: 'gen-' };
    const request = { ...review('CREATE', named) };
    delete request.name;
    assert.match(message(checkPodQuota(request, state, on)), /pod:gen-x7k2p$/);
  });

  it('refuses changing the preemptible label, including adding or removing it', () => {
    for (const [before, after] of [
      [{}, { [L('preemptible')]: 'true' }],
      [{ [L('preemptible')]: 'true' }, {}],
      [{ [L('preemptible')]: 'true' }, { [L('preemptible')]: 'false' }],
    ]) {
      assert.match(
        message(checkPodQuota(review('UPDATE', pod(after!), pod(before!)), state, on)),
        /^metadata\.labels\[quota\.scheduling\.koordinator\.sh\/preemptible\]: Preemptible label is forbidden modify now\.$/,
      );
    }
  });

  it('admits within the limit and reserves the request', () => {
    const decision = checkPodQuota(review('CREATE', pod({ [L('name')]: 'leaf' })), state, on);
    assert.equal(decision.allowed, true);
    assert.deepEqual(decision.reserve, {
      key: 'team/p',
      quota: 'leaf',
      requests: new Map([
        ['cpu', parseQuantity('1')],
        ['memory', parseQuantity('1Gi')],
      ]),
    });
  });

  it('refuses a pod past max, naming quota, resource, requested, used and limit', () => {
    assert.equal(
      message(checkPodQuota(review('CREATE', pod({ [L('name')]: 'leaf' }, '2')), state, on)),
      'spec.containers[*].resources.requests: exceeded quota: quotas/leaf, requested: cpu=2, used: cpu=3, limited: cpu=4',
    );
  });

  it('prints the numbers as Koordinator does: sums in their first term’s format, limits as Go spells them, no unused resource', () => {
    const spelled = stateSnapshot({
      elasticQuotas: [quota('mem', {}, { memory: '1e9', cpu: '1000m' })],
      quotaUsed: { mem: { cpu: parseQuantity('500m') } },
    });
    const twoContainers: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'team', labels: { [L('name')]: 'mem' } },
      spec: {
        containers: [
          { name: 'a', resources: { requests: { memory: '8Gi', cpu: '600m' } } },
          { name: 'b', resources: { requests: { memory: '8Gi' } } },
        ],
      },
    };
    assert.equal(
      message(checkPodQuota(review('CREATE', twoContainers), spelled, on)),
      // 8Gi + 8Gi is 16Gi (BinarySI kept), 1000m is written 1, 1e9 keeps its exponent, and memory,
      // which nothing uses yet, is left out of used as Koordinator leaves it out.
      'spec.containers[*].resources.requests: exceeded quota: quotas/mem, requested: cpu=600m,memory=16Gi, used: cpu=500m, limited: cpu=1,memory=1e9',
    );
  });

  it('uses the admission annotation as the limit when it is set', () => {
    assert.match(
      message(checkPodQuota(review('CREATE', pod({ [L('name')]: 'tight' }, '3')), state, on)),
      /limited: cpu=2$/,
    );
  });

  it('refuses a pod naming a quota that does not exist', () => {
    assert.match(
      message(checkPodQuota(review('CREATE', pod({ [L('name')]: 'ghost' })), state, on)),
      /^metadata\.labels\[quota\.scheduling\.koordinator\.sh\/name\]: elastic quota ghost not found$/,
    );
  });

  it('passes the default quota, quotas that count no resource, zero requests, and with the gate off', () => {
    assert.equal(checkPodQuota(review('CREATE', pod({})), state, on).allowed, true);
    assert.equal(checkPodQuota(review('CREATE', pod({ [L('name')]: 'pods-only' })), state, on).allowed, true);
    assert.equal(
      checkPodQuota(review('CREATE', pod({ [L('name')]: 'leaf' }, '2')), state, {
        ...on,
        quotaAdmission: false,
      }).allowed,
      true,
    );
  });

  it('evaluates UPDATE only for a move to another quota, and only with its gate', () => {
    const moved = review('UPDATE', pod({ [L('name')]: 'leaf' }, '2'), pod({ [L('name')]: 'tight' }, '2'));
    assert.equal(checkPodQuota(moved, state, on).allowed, true);
    assert.equal(checkPodQuota(moved, state, { ...on, quotaAdmissionOnUpdate: true }).allowed, false);
    const same = review('UPDATE', pod({ [L('name')]: 'leaf' }, '2'), pod({ [L('name')]: 'leaf' }, '2'));
    assert.equal(checkPodQuota(same, state, { ...on, quotaAdmissionOnUpdate: true }).allowed, true);
  });

  it('resolves a namespace-bound quota when the pod has no label', () => {
    const bound = stateSnapshot({
      elasticQuotas: [quota('bound', {}, { cpu: '1' }, { [L('namespaces')]: '["team"]' })],
    });
    assert.match(
      message(checkPodQuota(review('CREATE', pod({}, '2')), bound, on)),
      /exceeded quota: quotas\/bound/,
    );
  });
});

describe('podRequests', () => {
  it('adds containers and sidecars, takes the largest init step, adds overhead', () => {
    const requests = podRequests({
      metadata: {},
      spec: {
        containers: [{ resources: { requests: { cpu: '1' } } }, { resources: { limits: { cpu: '500m' } } }],
        initContainers: [
          { resources: { requests: { cpu: '4' } } },
          { restartPolicy: 'Always', resources: { requests: { cpu: '250m' } } },
          { resources: { requests: { cpu: '1' } } },
        ],
        overhead: { cpu: '100m' },
      },
    });
    // containers 1.5 + sidecar 0.25 = 1.75; init steps: 4, 0.25, 1.25 → 4; max → 4; + 0.1.
    assert.equal(requests.get('cpu'), parseQuantity('4.1'));
  });

  it('lets pod-level requests replace the containers’ sum for cpu, memory and hugepages, then adds overhead (v1.8.0)', () => {
    const requests = podRequests({
      metadata: {},
      spec: {
        containers: [{ resources: { requests: { cpu: '1', memory: '1Gi', 'nvidia.com/gpu': '1' } } }],
        initContainers: [{ restartPolicy: 'Always', resources: { requests: { cpu: '250m' } } }],
        resources: { requests: { cpu: '3', 'hugepages-2Mi': '4Mi' }, limits: { memory: '8Gi' } },
        overhead: { cpu: '100m' },
      },
    });
    // cpu: the pod level's 3 replaces 1.25, then + 0.1; memory: a container names it, so the
    // pod-level limit does not stand in (defaulting sets the pod-level request to the 1Gi sum).
    assert.equal(requests.get('cpu'), parseQuantity('3.1'));
    assert.equal(requests.get('memory'), parseQuantity('1Gi'));
    assert.equal(requests.get('hugepages-2Mi'), parseQuantity('4Mi'));
    assert.equal(requests.get('nvidia.com/gpu'), parseQuantity('1'));
  });

  it('takes a pod-level limit as the request where no container names the resource, as defaulting does', () => {
    const requests = podRequests({
      metadata: {},
      spec: { containers: [{ resources: {} }], resources: { limits: { cpu: '2', memory: '1Gi' } } },
    });
    assert.equal(requests.get('cpu'), parseQuantity('2'));
    assert.equal(requests.get('memory'), parseQuantity('1Gi'));
  });

  it('ignores at pod level what PodRequests does not read there', () => {
    const requests = podRequests({
      metadata: {},
      spec: {
        containers: [],
        resources: { requests: { 'ephemeral-storage': '1Gi', 'kubernetes.io/batch-cpu': '1k' } },
      },
    });
    assert.equal(requests.size, 0);
  });

  it('refuses a pod asking past its quota at pod level only, naming the pod-level amount', () => {
    const podLevel = pod({ [L('name')]: 'tight' }, '1', {
      containers: [{ name: 'c' }],
      resources: { requests: { cpu: '3' } },
    });
    assert.equal(
      message(checkPodQuota(review('CREATE', podLevel), state, on)),
      'spec.containers[*].resources.requests: exceeded quota: quotas/tight, requested: cpu=3, used: , limited: cpu=2',
    );
    const unreadable = pod({ [L('name')]: 'tight' }, '1', { resources: { requests: { cpu: '1e50000000' } } });
    assert.match(
      message(checkPodQuota(review('CREATE', unreadable), state, on)),
      /^quota admission: spec\.resources\.requests\[cpu\]: "1e50000000" is too large/,
    );
  });

  it('knows finished and expired pods', () => {
    const now = new Date('2026-01-01T00:01:00Z');
    assert.equal(podIsDone({ metadata: {}, status: { phase: 'Succeeded' } }, now), true);
    assert.equal(
      podIsDone(
        { metadata: { deletionTimestamp: '2026-01-01T00:00:00Z', deletionGracePeriodSeconds: 30 } },
        now,
      ),
      true,
    );
    assert.equal(
      podIsDone(
        { metadata: { deletionTimestamp: '2026-01-01T00:00:50Z', deletionGracePeriodSeconds: 30 } },
        now,
      ),
      false,
    );
    assert.equal(podIsDone({ metadata: {}, status: { phase: 'Running' } }, now), false);
  });

  it('refuses on CREATE a pod whose request is past 2^63-1 units, naming the field and the rule', () => {
    const validation = {
      ...on,
      skipValidatingPriority: false,
      validateDeviceRequests: true,
      enhancedValidation: false,
      enhancedValidationNamespace: 'koordinator-system',
    };
    assert.equal(
      message(checkPodQuota(review('CREATE', pod({ [L('name')]: 'leaf' }, '1e50000000')), state, on)),
      'quota admission: spec.containers[0].resources.requests[cpu]: "1e50000000" is too large: quantities are bounded by 2^63-1 (9223372036854775807) units',
    );
    const gpu = pod({}, '1', {
      containers: [{ name: 'c', resources: { requests: { 'koordinator.sh/gpu': '1e50000000' } } }],
    });
    // Colocation validation reads every request first; the device check names itself alone.
    assert.match(message(podValidator(validation)(review('CREATE', gpu), state)), /^colocation validation: /);
    assert.equal(
      message(decisionOf(checkDeviceRequests(review('CREATE', gpu)))),
      'device validation: spec.containers[0].resources.requests[koordinator.sh/gpu]: "1e50000000" is too large: quantities are bounded by 2^63-1 (9223372036854775807) units',
    );
    // An existing pod's updates are not refused over a quantity that is immutable anyway.
    const update = podValidator(validation)(review('UPDATE', gpu, gpu), state);
    assert.equal(update.allowed, true, JSON.stringify(update));
    for (const cpu of ['1e50000000', '1e1000000000', '9223372036854775808', '-1e50000000']) {
      const decision = podValidator(validation)(review('CREATE', pod({ [L('name')]: 'leaf' }, cpu)), state);
      assert.equal(
        message(decision),
        `colocation validation: spec.containers[0].resources.requests[cpu]: "${cpu}" is too large: quantities are bounded by 2^63-1 (9223372036854775807) units`,
      );
    }
  });

  it('refuses a pod against a quota whose limit cannot be read, naming the quota and its field', () => {
    const broken = stateSnapshot({
      ...fixture,
      elasticQuotas: [quota('odd', {}, { cpu: '4' }, { [L('admission')]: '{"cpu":{"x":1}}' })],
    });
    const decision = checkPodQuota(review('CREATE', pod({ [L('name')]: 'odd' })), broken, on);
    assert.equal(
      message(decision),
      `quota admission: elastic quota quotas/odd: metadata.annotations[${L('admission')}][cpu]: must be a quantity string, got a JSON object`,
    );
    const huge = stateSnapshot({ ...fixture, elasticQuotas: [quota('huge', {}, { cpu: '1e50000000' })] });
    assert.match(
      message(checkPodQuota(review('CREATE', pod({ [L('name')]: 'huge' })), huge, on)),
      /^quota admission: elastic quota quotas\/huge: spec\.max\[cpu\]: "1e50000000" is too large/,
    );
  });

  it('counts an existing pod with an unreadable quantity as holding none of it (the store must not throw)', () => {
    const requests = podRequests(pod({}, '1e50000000'));
    assert.equal(requests.get('cpu'), undefined);
    assert.equal(requests.get('memory'), parseQuantity('1Gi'));
  });
});
