import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Decision, JsonObject, KubeObject } from '../../../../../../webhook/admission/types.js';
import { jsonPatch } from '../../../../../../webhook/admission/response.js';
import {
  applyProfile,
  type ProfileTarget,
} from '../../../../../../webhook/rules/koordinator/colocation/colocation-profile.js';
import {
  podMutator,
  type PodMutationOptions,
} from '../../../../../../webhook/rules/koordinator/pod/mutate-pod.js';
import type { ColocationProfileView, StateSnapshot } from '../../../../../../webhook/state.js';
import { POD_PATCH_SCHEMA } from '../../../../../../webhook/util/strategic-merge-patch.js';
import { deepFreeze } from '../../../../../harness/deep-freeze.js';
import { admissionRequest } from '../../../../../harness/requests.js';
import { stateSnapshot, type StateFixture } from '../../../../../harness/state.js';

const OPTIONS: PodMutationOptions = {
  roll: () => 0,
  skipMutatingResources: false,
  skipExtendedResourceSpec: true,
  skipDeviceResourceSpec: true,
  multiQuotaTree: false,
};

const BATCH_PRIORITY_MAX = 5999;

/** The profile of Koordinator's own "mutating pod" test case. */
function koordinatorProfile(spec: JsonObject = {}, name = 'test-profile'): ColocationProfileView {
  return {
    name,
    annotations: {},
    spec: {
      namespaceSelector: { matchLabels: { 'enable-koordinator-colocation': 'true' } },
      selector: { matchLabels: { 'koordinator-colocation-pod': 'true' } },
      labels: { testLabelA: 'valueA' },
      annotations: { testAnnotationA: 'valueA' },
      schedulerName: 'koordinator-scheduler',
      qosClass: 'BE',
      priorityClassName: 'koordinator-batch',
      koordinatorPriority: 1111,
      patch: {
        metadata: {
          labels: { 'test-patch-label': 'patch-a' },
          annotations: { 'test-patch-annotation': 'patch-b' },
        },
      },
      ...spec,
    },
  };
}

const both = (cpu: string, memory: string): JsonObject => ({
  limits: { cpu, memory },
  requests: { cpu, memory },
});

function koordinatorPod(extra: JsonObject = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { namespace: 'default', name: 'test-pod-1', labels: { 'koordinator-colocation-pod': 'true' } },
    spec: {
      initContainers: [{ name: 'test-init-container-a', resources: both('500m', '1Gi') }],
      containers: [{ name: 'test-container-a', resources: both('1', '4Gi') }],
      overhead: { cpu: '1', memory: '2Gi' },
      schedulerName: 'nonExistSchedulerName',
      priority: BATCH_PRIORITY_MAX,
      ...extra,
    },
  };
}

function state(profiles: ColocationProfileView[], fixture: StateFixture = {}): StateSnapshot {
  return stateSnapshot({
    namespaces: [{ name: 'default', labels: { 'enable-koordinator-colocation': 'true' } }],
    priorityClasses: [{ name: 'koordinator-batch', value: 5999, preemptionPolicy: 'fakePreemptionPolicy' }],
    colocationProfiles: profiles,
    ...fixture,
  });
}

/** The decision, and the pod as the API server stores it: the mutated pod, else the pod as it came. */
type Admitted = Decision & { admitted: KubeObject };

function run(pod: KubeObject, snapshot: StateSnapshot, options: Partial<PodMutationOptions> = {}): Admitted {
  const decision = podMutator({ ...OPTIONS, ...options })(
    admissionRequest({ kind: 'Pod', resource: 'pods', namespace: 'default', object: pod }),
    snapshot,
  );
  return { ...decision, admitted: (decision.allowed && decision.mutated) || pod };
}

function admittedPod(decision: Admitted): KubeObject {
  assert.ok(decision.allowed, JSON.stringify(decision));
  return decision.admitted;
}

const batchCpuMemory = (cpu: string, memory: string): JsonObject => ({
  limits: { 'kubernetes.io/batch-cpu': cpu, 'kubernetes.io/batch-memory': memory },
  requests: { 'kubernetes.io/batch-cpu': cpu, 'kubernetes.io/batch-memory': memory },
});

describe('ClusterColocationProfile on pods', () => {
  it('applies Koordinator’s "mutating pod" example: labels, patch, QoS, priority, scheduler, batch resources', () => {
    const result = admittedPod(run(koordinatorPod(), state([koordinatorProfile()])));
    assert.deepEqual(result.metadata.labels, {
      'koordinator-colocation-pod': 'true',
      testLabelA: 'valueA',
      'test-patch-label': 'patch-a',
      'koordinator.sh/qosClass': 'BE',
      'koordinator.sh/priority': '1111',
    });
    assert.deepEqual(result.metadata.annotations, {
      testAnnotationA: 'valueA',
      'test-patch-annotation': 'patch-b',
    });
    assert.deepEqual(result.spec, {
      initContainers: [{ name: 'test-init-container-a', resources: batchCpuMemory('500', '1Gi') }],
      containers: [{ name: 'test-container-a', resources: batchCpuMemory('1k', '4Gi') }],
      overhead: { 'kubernetes.io/batch-cpu': '1k', 'kubernetes.io/batch-memory': '2Gi' },
      schedulerName: 'koordinator-scheduler',
      priority: 5999,
      priorityClassName: 'koordinator-batch',
      preemptionPolicy: 'fakePreemptionPolicy',
    });
  });

  it('sets a missing batch request to the limit, and never a limit from a request', () => {
    const limitsOnly = koordinatorPod({
      initContainers: [],
      containers: [{ name: 'a', resources: { limits: { cpu: '1', memory: '4Gi' } } }],
      overhead: null,
    });
    const fromLimit = admittedPod(run(limitsOnly, state([koordinatorProfile()])));
    assert.deepEqual(
      (fromLimit.spec as { containers: JsonObject[] }).containers[0]?.resources,
      batchCpuMemory('1k', '4Gi'),
    );

    const requestsOnly = koordinatorPod({
      initContainers: [],
      containers: [{ name: 'a', resources: { requests: { cpu: '1', memory: '4Gi' } } }],
      overhead: null,
    });
    const keptUnlimited = admittedPod(run(requestsOnly, state([koordinatorProfile()])));
    assert.deepEqual((keptUnlimited.spec as { containers: JsonObject[] }).containers[0]?.resources, {
      requests: { 'kubernetes.io/batch-cpu': '1k', 'kubernetes.io/batch-memory': '4Gi' },
    });
  });

  it('translates to mid resources for koord-mid pods', () => {
    const pod = koordinatorPod({ priority: 7500, initContainers: [], overhead: null });
    const profile = koordinatorProfile({ qosClass: 'LS', priorityClassName: null, patch: null });
    const result = admittedPod(run(pod, state([profile])));
    assert.deepEqual((result.spec as { containers: JsonObject[] }).containers[0]?.resources, {
      limits: { 'kubernetes.io/mid-cpu': '1k', 'kubernetes.io/mid-memory': '4Gi' },
      requests: { 'kubernetes.io/mid-cpu': '1k', 'kubernetes.io/mid-memory': '4Gi' },
    });
  });

  it('leaves koord-prod and koord-free pods’ cpu and memory alone', () => {
    for (const priority of [9500, 3500]) {
      const pod = koordinatorPod({ priority, initContainers: [], overhead: null });
      const profile = koordinatorProfile({ qosClass: null, priorityClassName: null, patch: null });
      const result = admittedPod(run(pod, state([profile])));
      assert.deepEqual(
        (result.spec as { containers: JsonObject[] }).containers[0]?.resources,
        both('1', '4Gi'),
      );
    }
  });

  it('applies a 50% profile when the roll is at most 50, and skips it above', () => {
    const profile = koordinatorProfile({ probability: '50%' });
    const applied = admittedPod(run(koordinatorPod(), state([profile]), { roll: () => 50 }));
    assert.equal((applied.metadata.labels as Record<string, string>)['koordinator.sh/qosClass'], 'BE');
    const skipped = admittedPod(run(koordinatorPod(), state([profile]), { roll: () => 70 }));
    assert.equal((skipped.metadata.labels as Record<string, string>)['koordinator.sh/qosClass'], undefined);
    assert.equal((skipped.spec as JsonObject).schedulerName, 'nonExistSchedulerName');
  });

  it('keeps Koordinator’s quirk: a matching profile skipped by its roll still translates a batch pod’s resources', () => {
    const skipped = admittedPod(
      run(koordinatorPod(), state([koordinatorProfile({ probability: 50 })]), { roll: () => 70 }),
    );
    const container = (skipped.spec as { containers: JsonObject[] }).containers[0];
    assert.deepEqual(container?.resources, batchCpuMemory('1k', '4Gi'));
  });

  it('never applies a 0% profile and always applies a 100% one, without rolling', () => {
    const roll = (): number => assert.fail('no roll expected');
    const never = admittedPod(
      run(koordinatorPod(), state([koordinatorProfile({ probability: 0 })]), { roll }),
    );
    assert.equal((never.metadata.labels as Record<string, string>).testLabelA, undefined);
    const always = admittedPod(
      run(koordinatorPod(), state([koordinatorProfile({ probability: '100%' })]), { roll }),
    );
    assert.equal((always.metadata.labels as Record<string, string>).testLabelA, 'valueA');
  });

  it('does not match pods whose labels or namespace the selectors exclude', () => {
    const pod = koordinatorPod();
    (pod.metadata.labels as Record<string, string>)['koordinator-colocation-pod'] = 'false';
    const decision = run(pod, state([koordinatorProfile()]));
    assert.deepEqual(admittedPod(decision), pod);

    const otherNamespace = state([koordinatorProfile()], { namespaces: [{ name: 'default', labels: {} }] });
    assert.deepEqual(admittedPod(run(koordinatorPod(), otherNamespace)), koordinatorPod());
  });

  it('skips the resource translation for a profile annotated skip-update-resources', () => {
    const profile = koordinatorProfile();
    const skipping = { ...profile, annotations: { 'config.koordinator.sh/skip-update-resources': '' } };
    const result = admittedPod(run(koordinatorPod(), state([skipping])));
    assert.deepEqual(
      (result.spec as { containers: JsonObject[] }).containers[0]?.resources,
      both('1', '4Gi'),
    );
    assert.equal((result.metadata.labels as Record<string, string>)['koordinator.sh/qosClass'], 'BE');
    const gated = admittedPod(run(koordinatorPod(), state([profile]), { skipMutatingResources: true }));
    assert.deepEqual((gated.spec as { containers: JsonObject[] }).containers[0]?.resources, both('1', '4Gi'));
  });

  it('applies profiles in name order, so the last name wins', () => {
    const a = koordinatorProfile({ labels: { winner: 'a' }, patch: null }, 'a-profile');
    const b = koordinatorProfile({ labels: { winner: 'b' }, patch: null }, 'b-profile');
    for (const profiles of [
      [a, b],
      [b, a],
    ]) {
      const decision = run(koordinatorPod(), state(profiles));
      assert.equal((admittedPod(decision).metadata.labels as Record<string, string>).winner, 'b');
      assert.deepEqual(decision.audit, {
        action: 'profiles-applied',
        reason: '',
        profiles: 'a-profile,b-profile',
      });
    }
  });

  it('copies mapped keys (empty when the source is missing) and appends suffixes to existing labels only', () => {
    const profile = koordinatorProfile({
      labels: null,
      annotations: null,
      patch: null,
      labelKeysMapping: { 'koordinator-colocation-pod': 'copied', absent: 'empty' },
      annotationKeysMapping: { note: 'note-copy' },
      labelSuffixes: { 'koordinator-colocation-pod': '-x', missing: '-y' },
    });
    const pod = koordinatorPod();
    pod.metadata.annotations = { note: 'hello' };
    const result = admittedPod(run(pod, state([profile])));
    const labels = result.metadata.labels as Record<string, string>;
    assert.equal(labels.copied, 'true');
    assert.equal(labels.empty, '');
    assert.equal(labels['koordinator-colocation-pod'], 'true-x');
    assert.equal(labels.missing, undefined);
    assert.equal((result.metadata.annotations as Record<string, string>)['note-copy'], 'hello');
  });

  describe('quirk decisions', () => {
    it('an invalid selector matches nothing (Koordinator: everything), with a warning naming the profile and field', () => {
      const profile = koordinatorProfile({
        selector: { matchExpressions: [{ key: 'app', operator: 'Within', values: ['x'] }] },
      });
      const decision = run(koordinatorPod(), state([profile]));
      assert.deepEqual(admittedPod(decision), koordinatorPod());
      assert.match(
        decision.warnings?.[0] ?? '',
        /ClusterColocationProfile "test-profile": spec\.selector\.matchExpressions\[0\]\.operator: Unsupported value: "Within"/,
      );
    });

    it('a namespace the watch has not seen matches by its name label only (Koordinator: always matches)', () => {
      const byName = koordinatorProfile({
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'default' } },
      });
      const byOtherLabel = koordinatorProfile();
      const unseen = { namespaces: [] };
      const matched = admittedPod(run(koordinatorPod(), state([byName], unseen)));
      assert.equal((matched.metadata.labels as Record<string, string>).testLabelA, 'valueA');
      assert.deepEqual(admittedPod(run(koordinatorPod(), state([byOtherLabel], unseen))), koordinatorPod());
    });

    it('a missing PriorityClass skips the profile with a warning instead of failing the pod (Koordinator: 500)', () => {
      const decision = run(koordinatorPod(), state([koordinatorProfile()], { priorityClasses: [] }));
      // Counted as reason invalid-profile in admission_rule_outcomes_total, for alerting.
      assert.deepEqual(decision.audit, {
        action: 'profiles-skipped',
        reason: 'invalid-profile',
        profiles: '',
      });
      const result = admittedPod(decision);
      assert.equal(
        (result.metadata.labels as Record<string, string>).testLabelA,
        undefined,
        'nothing half-applied',
      );
      assert.match(
        decision.warnings?.[0] ?? '',
        /spec\.priorityClassName: Not found: no PriorityClass "koordinator-batch" exists/,
      );
    });

    it('an invalid probability skips the profile with a warning (Koordinator: 500)', () => {
      const decision = run(koordinatorPod(), state([koordinatorProfile({ probability: 'often' })]));
      assert.equal((admittedPod(decision).metadata.labels as Record<string, string>).testLabelA, undefined);
      assert.match(decision.warnings?.[0] ?? '', /spec\.probability: Invalid value: "often"/);
    });
  });

  it('changes nothing without profiles, and on UPDATE', () => {
    const pod = koordinatorPod();
    assert.deepEqual(admittedPod(run(pod, state([]))), pod);
    const update = podMutator(OPTIONS)(
      admissionRequest({ kind: 'Pod', resource: 'pods', operation: 'UPDATE', object: pod, oldObject: pod }),
      state([koordinatorProfile()]),
    );
    assert.deepEqual(update, { allowed: true });
  });

  it('skips the translation, naming the field, for a pod whose cpu is not a quantity', () => {
    const pod = koordinatorPod({
      initContainers: [],
      overhead: null,
      containers: [{ name: 'a', resources: { requests: { cpu: 'lots' } } }],
    });
    const decision = run(pod, state([koordinatorProfile()]));
    assert.equal(decision.allowed, true);
    assert.deepEqual(decision.audit, {
      action: 'profiles-applied',
      reason: 'invalid-quantity',
      profiles: 'test-profile',
    });
    assert.match(
      decision.warnings?.join('\n') ?? '',
      /spec\.containers\[0\]\.resources\.requests\[cpu\]: "lots" is not a quantity .*; the batch\/mid resource translation was skipped/,
    );
    // The profile still applied; the resources were left as written.
    const result = admittedPod(decision) as unknown as { spec: { containers: { resources: object }[] } };
    assert.deepEqual(result.spec.containers[0]?.resources, { requests: { cpu: 'lots' } });
  });

  it('skips the translation of a cpu too large for any cluster, quoting at most 64 characters of it', () => {
    for (const cpu of ['1e50000000', '1e1000000000', '9'.repeat(100_000)]) {
      const pod = koordinatorPod({
        initContainers: [],
        overhead: null,
        containers: [{ name: 'a', resources: { requests: { cpu }, limits: { cpu } } }],
      });
      const decision = run(pod, state([koordinatorProfile()]));
      assert.equal(decision.allowed, true);
      const warning = decision.warnings?.find((text) => text.includes('too large')) ?? '';
      assert.match(
        warning,
        /^spec\.containers\[0\]\.resources\.requests\[cpu\]: ".*" is too large: quantities are bounded by 2\^63-1 \(9223372036854775807\) units; the batch\/mid resource translation was skipped$/,
      );
      assert.ok(warning.length < 250, warning);
    }
  });
});

describe('applyProfile: copy on write', () => {
  const POD: ProfileTarget = { podSpecPath: ['spec'], patchSchema: POD_PATCH_SCHEMA };
  const onlyLabels = koordinatorProfile({
    annotations: null,
    schedulerName: null,
    qosClass: null,
    priorityClassName: null,
    koordinatorPriority: null,
    patch: null,
  });

  it('never writes to the object it is given, nor does /mutate-pod to the request object', () => {
    const pod = deepFreeze(koordinatorPod());
    const snapshot = state([koordinatorProfile(), onlyLabels]);
    const applied = applyProfile(pod, koordinatorProfile(), POD, snapshot);
    assert.equal((applied.spec as JsonObject).schedulerName, 'koordinator-scheduler');
    assert.deepEqual(admittedPod(run(pod, snapshot)), admittedPod(run(koordinatorPod(), snapshot)));
    assert.deepEqual(pod, koordinatorPod());
  });

  it('shares every subtree it leaves alone with the input, so the admission diff holds only the change', () => {
    const pod = deepFreeze(koordinatorPod());
    const labelled = applyProfile(pod, onlyLabels, POD, state([]));
    assert.equal(labelled.spec, pod.spec);
    assert.notEqual(labelled.metadata, pod.metadata);
    assert.deepEqual(jsonPatch(pod, labelled as KubeObject), [
      { op: 'add', path: '/metadata/labels/testLabelA', value: 'valueA' },
    ]);

    const scheduled = applyProfile(pod, koordinatorProfile({ patch: null }), POD, state([]));
    const spec = scheduled.spec as JsonObject;
    assert.notEqual(spec, pod.spec);
    assert.equal(spec.schedulerName, 'koordinator-scheduler');
    const podSpec = pod.spec as JsonObject;
    assert.equal(spec.containers, podSpec.containers);
    assert.equal(spec.initContainers, podSpec.initContainers);
    assert.equal(spec.overhead, podSpec.overhead);
  });

  it('maps a key named like an Object.prototype member as a missing one', () => {
    const profile = koordinatorProfile({
      ...onlyLabels.spec,
      labels: null,
      labelKeysMapping: { constructor: 'c' },
    });
    const result = applyProfile(deepFreeze(koordinatorPod()), profile, POD, state([]));
    assert.equal((result.metadata as JsonObject & { labels: JsonObject }).labels.c, '');
  });
});
