import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  desiredMutating,
  desiredValidating,
  findDrift,
  mergeOwnerReferences,
  ownerReferenceDrift,
  trustsCa,
} from '../../../../operator/webhooks/desired-configurations.js';
import { webhookTable } from '../../../../webhook/table.js';
import { defaultTableContext } from '../../../harness/table-context.js';

const table = webhookTable(defaultTableContext());
const CA = '-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\n';

describe('desired webhook configurations', () => {
  it('splits the table into mutating and validating, both named admission-operator', () => {
    const mutating = desiredMutating(table, { mode: 'url', host: '127.0.0.1', port: 9443 }, CA);
    const validating = desiredValidating(table, { mode: 'url', host: '127.0.0.1', port: 9443 }, CA);
    assert.equal(mutating.metadata?.name, 'admission-operator');
    assert.equal(validating.metadata?.name, 'admission-operator');
    assert.equal((mutating.webhooks?.length ?? 0) + (validating.webhooks?.length ?? 0), table.length);
    const pod = mutating.webhooks?.find((webhook) => webhook.name.startsWith('mutate-pod.'));
    assert.equal(pod?.clientConfig.url, 'https://127.0.0.1:9443/mutate-pod');
    assert.equal(Buffer.from(pod?.clientConfig.caBundle ?? '', 'base64').toString(), CA);
    assert.equal(pod?.sideEffects, 'None');
    assert.deepEqual(pod?.admissionReviewVersions, ['v1']);
  });

  it('points at the Service in a cluster', () => {
    const validating = desiredValidating(
      table,
      { mode: 'service', namespace: 'admission-system', name: 'admission-operator', port: 443 },
      CA,
    );
    const pod = validating.webhooks?.find((webhook) => webhook.name.startsWith('validate-pod.'));
    assert.deepEqual(pod?.clientConfig.service, {
      namespace: 'admission-system',
      name: 'admission-operator',
      path: '/validate-pod',
      port: 443,
    });
    assert.equal(pod?.clientConfig.url, undefined);
  });

  it('finds drift by field path, treating absent and empty alike', () => {
    const desired = { a: { b: [1, 2], c: {}, d: [] } };
    assert.equal(findDrift(desired, { a: { b: [1, 2] } }), undefined);
    assert.equal(findDrift(desired, { a: { b: [1, 3] } }), 'a.b[1]');
    assert.equal(findDrift(desired, { a: { b: [1, 2, 3] } }), 'a.b');
    assert.equal(findDrift(desired, { a: { b: [1, 2], extra: true } }), undefined);
    assert.equal(findDrift(desired, {}), 'a');
  });

  it('tells whether every webhook trusts a CA', () => {
    const configuration = desiredValidating(table, { mode: 'url', host: '127.0.0.1', port: 9443 }, CA);
    assert.equal(trustsCa(configuration, CA.replace(/\n/g, '\r\n')), true);
    assert.equal(
      trustsCa(configuration, '-----BEGIN CERTIFICATE-----\nREVG\n-----END CERTIFICATE-----\n'),
      false,
    );
  });

  describe('owner references', () => {
    const chartRole = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      name: 'admission-operator',
      uid: 'uid-1',
      blockOwnerDeletion: false,
    };
    const helmOwner = { apiVersion: 'v1', kind: 'ConfigMap', name: 'other', uid: 'uid-9' };

    /** What the reconciler does, pass after pass: repair while drifting, keeping what a replace keeps. */
    function passesUntilSettled(
      owner: typeof chartRole | undefined,
      live: (typeof chartRole | typeof helmOwner)[] | undefined,
    ): number {
      let stored = live;
      for (let pass = 0; pass < 5; pass++) {
        if (ownerReferenceDrift(owner, stored) === undefined) return pass;
        stored = mergeOwnerReferences(owner, stored);
      }
      return Infinity;
    }

    it('settles at once when the owner ClusterRole is missing but the live objects carry owner references', () => {
      // The resolver found no ClusterRole: nothing to set, so nothing to repair (this used to loop).
      assert.equal(ownerReferenceDrift(undefined, [chartRole]), undefined);
      assert.equal(passesUntilSettled(undefined, [chartRole, helmOwner]), 0);
      assert.deepEqual(mergeOwnerReferences(undefined, [chartRole]), [chartRole]);
    });

    it('adds a missing owner once, keeping the references of others', () => {
      assert.equal(ownerReferenceDrift(chartRole, [helmOwner]), 'metadata.ownerReferences');
      assert.deepEqual(mergeOwnerReferences(chartRole, [helmOwner]), [helmOwner, chartRole]);
      assert.equal(passesUntilSettled(chartRole, [helmOwner]), 1);
      assert.equal(passesUntilSettled(chartRole, undefined), 1);
    });

    it('replaces the reference to a recreated owner (same name, new uid) in one pass', () => {
      const stale = { ...chartRole, uid: 'uid-0' };
      assert.match(ownerReferenceDrift(chartRole, [stale]) ?? '', /^metadata\.ownerReferences\[0\]/);
      assert.deepEqual(mergeOwnerReferences(chartRole, [stale]), [chartRole]);
      assert.equal(passesUntilSettled(chartRole, [stale]), 1);
    });
  });
});
