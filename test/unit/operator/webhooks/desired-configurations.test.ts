import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  desiredMutating,
  desiredValidating,
  findDrift,
  trustsCa,
} from '../../../../operator/webhooks/desired-configurations.js';
import { parseFeatureGates } from '../../../../webhook/feature-gates.js';
import { webhookTable, type TableContext } from '../../../../webhook/table.js';

const context: TableContext = {
  namespace: 'admission-system',
  excludedNamespaces: [],
  tierLabelKey: 'tenant.kubenexus.io/tier',
  gpuResourceNames: ['nvidia.com/gpu'],
  configMaps: [],
  koordinatorNamespace: 'koordinator-system',
  gates: parseFeatureGates(''),
};
const table = webhookTable(context);
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
});
