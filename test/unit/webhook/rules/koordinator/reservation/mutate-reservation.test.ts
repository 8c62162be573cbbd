import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonPatch } from '../../../../../../webhook/admission/response.js';
import type { Decision, JsonObject, KubeObject } from '../../../../../../webhook/admission/types.js';
import { reservationMutator } from '../../../../../../webhook/rules/koordinator/reservation/mutate-reservation.js';
import type { ColocationProfileView } from '../../../../../../webhook/state.js';
import { deepFreeze } from '../../../../../harness/deep-freeze.js';
import { admissionRequest } from '../../../../../harness/requests.js';
import { stateSnapshot } from '../../../../../harness/state.js';

const profile: ColocationProfileView = {
  name: 'batch',
  annotations: {},
  spec: {
    namespaceSelector: { matchLabels: { never: 'matches' } },
    selector: { matchLabels: { app: 'web' } },
    labels: { team: 'infra' },
    qosClass: 'BE',
    koordinatorPriority: 7,
    schedulerName: 'koord-scheduler',
    priorityClassName: 'koord-batch',
    patch: { spec: { template: { spec: { tolerations: [{ key: 'batch', operator: 'Exists' }] } } } },
  },
};

const state = (profiles = [profile], priorityClasses = [{ name: 'koord-batch', value: 5500 }]) =>
  stateSnapshot({ colocationProfiles: profiles, priorityClasses });

function reservation(spec: JsonObject, labels: Record<string, string> = { app: 'web' }): KubeObject {
  return {
    apiVersion: 'scheduling.koordinator.sh/v1alpha1',
    kind: 'Reservation',
    metadata: { name: 'r', labels },
    spec: { owners: [{ object: { name: 'p' } }], ...spec },
  };
}

const mutate = (
  object: KubeObject,
  snapshot = state(),
  operation: 'CREATE' | 'UPDATE' = 'CREATE',
): Decision =>
  reservationMutator(() => 0)(
    admissionRequest({
      group: 'scheduling.koordinator.sh',
      version: 'v1alpha1',
      kind: 'Reservation',
      resource: 'reservations',
      operation,
      object,
      oldObject: operation === 'UPDATE' ? object : null,
    }),
    snapshot,
  );

function mutated(decision: Decision): KubeObject {
  assert.ok(decision.allowed && decision.mutated, JSON.stringify(decision));
  return decision.mutated;
}

describe('/mutate-reservation', () => {
  it('puts labels on the Reservation and scheduler, priority and patch into its pod template; namespaceSelector is ignored', () => {
    const result = mutated(mutate(reservation({ template: { spec: { containers: [{ name: 'c' }] } } })));
    assert.deepEqual(result.metadata.labels, {
      app: 'web',
      team: 'infra',
      'koordinator.sh/qosClass': 'BE',
      'koordinator.sh/priority': '7',
    });
    assert.deepEqual((result.spec as JsonObject).template, {
      spec: {
        containers: [{ name: 'c' }],
        schedulerName: 'koord-scheduler',
        priorityClassName: 'koord-batch',
        priority: 5500,
        tolerations: [{ key: 'batch', operator: 'Exists' }],
      },
    });
  });

  it('defaults ttl to 24h unless ttl or expires is set', () => {
    assert.equal((mutated(mutate(reservation({ template: {} }), state([]))).spec as JsonObject).ttl, '24h');
    assert.equal(
      (mutated(mutate(reservation({ template: {}, ttl: '1h' }), state([]))).spec as JsonObject).ttl,
      '1h',
    );
    const expiring = mutated(
      mutate(reservation({ template: {}, expires: '2030-01-01T00:00:00Z' }), state([])),
    );
    assert.equal((expiring.spec as JsonObject).ttl, undefined);
  });

  it('leaves a Reservation without a template without pod settings, and one its selector does not match alone', () => {
    const withoutPatch = { ...profile, spec: { ...profile.spec, patch: null } };
    const bare = mutated(mutate(reservation({ ttl: '1h' }), state([withoutPatch])));
    assert.equal((bare.spec as JsonObject).template, undefined);
    assert.equal((bare.metadata.labels as Record<string, string>).team, 'infra');
    const other = reservation({ ttl: '1h', template: {} }, { app: 'db' });
    assert.deepEqual(mutated(mutate(other)), other);
  });

  it('skips a profile whose PriorityClass is missing, with a warning; UPDATE is allowed untouched', () => {
    const decision = mutate(reservation({ ttl: '1h', template: { spec: {} } }), state([profile], []));
    assert.equal((mutated(decision).metadata.labels as Record<string, string>).team, undefined);
    assert.match(
      decision.warnings?.[0] ?? '',
      /ClusterColocationProfile "batch": spec\.priorityClassName: Not found/,
    );
    assert.deepEqual(mutate(reservation({}), state(), 'UPDATE'), { allowed: true });
  });

  it('never writes to the request object, and shares with it every part no profile touched', () => {
    const template = {
      metadata: { annotations: { free: 'form' } },
      spec: { containers: [{ name: 'c', image: 'i' }] },
    };
    const frozen = deepFreeze(reservation({ template }));
    const full = mutated(mutate(frozen));
    assert.deepEqual(frozen, reservation({ template }));
    assert.deepEqual(full, mutated(mutate(reservation({ template }))));

    const light: ColocationProfileView = {
      ...profile,
      spec: {
        selector: { matchLabels: { app: 'web' } },
        labels: { team: 'infra' },
        schedulerName: 'koord-scheduler',
      },
    };
    const result = mutated(mutate(frozen, state([light])));
    const resultTemplate = (result.spec as JsonObject).template as typeof template;
    const frozenTemplate = (frozen.spec as JsonObject).template as typeof template;
    assert.equal(resultTemplate.metadata, frozenTemplate.metadata);
    assert.equal(resultTemplate.spec.containers, frozenTemplate.spec.containers);
    assert.equal((result.spec as JsonObject).owners, (frozen.spec as JsonObject).owners);
    assert.deepEqual(
      jsonPatch(frozen, result).sort((a, b) => a.path.localeCompare(b.path)),
      [
        { op: 'add', path: '/metadata/labels/team', value: 'infra' },
        { op: 'add', path: '/spec/template/spec/schedulerName', value: 'koord-scheduler' },
        { op: 'add', path: '/spec/ttl', value: '24h' },
      ],
    );
  });
});
