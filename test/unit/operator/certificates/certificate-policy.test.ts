/** The names the serving certificate carries, and the one the API server verifies it against. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { certificatePolicy, verifiedName } from '../../../../operator/certificates/certificate-policy.js';
import type { Endpoint } from '../../../../operator/webhooks/desired-configurations.js';

const options = {
  serviceName: 'admission-operator',
  namespace: 'ops',
  caLifetimeMs: 10,
  caRenewBeforeMs: 2,
  certLifetimeMs: 5,
  certRenewBeforeMs: 1,
  bundlePropagationMs: 3,
};
const service: Endpoint = { mode: 'service', namespace: 'ops', name: 'admission-operator', port: 443 };

describe('certificatePolicy', () => {
  it('names the Service, and takes lifetimes and margins from the options', () => {
    const policy = certificatePolicy(options, service);
    assert.deepEqual(policy, {
      caLifetimeMs: 10,
      caRenewBeforeMs: 2,
      servingLifetimeMs: 5,
      servingRenewBeforeMs: 1,
      bundlePropagationMs: 3,
      maxCheckIntervalMs: 60_000,
      dnsNames: ['admission-operator.ops.svc', 'admission-operator.ops.svc.cluster.local'],
      ipAddresses: [],
    });
    assert.equal(verifiedName(policy, service), 'admission-operator.ops.svc');
  });

  it('adds the URL’s host, as a DNS name or an IP address, with the loopback names', () => {
    const byName: Endpoint = { mode: 'url', host: 'webhooks.example', port: 9443 };
    const named = certificatePolicy(options, byName);
    assert.deepEqual(named.dnsNames.slice(2), ['localhost', 'webhooks.example']);
    assert.deepEqual(named.ipAddresses, ['127.0.0.1']);
    assert.equal(verifiedName(named, byName), 'webhooks.example');
    const byAddress: Endpoint = { mode: 'url', host: '10.0.0.7', port: 9443 };
    assert.deepEqual(certificatePolicy(options, byAddress).ipAddresses, ['127.0.0.1', '10.0.0.7']);
    const loopback: Endpoint = { mode: 'url', host: '127.0.0.1', port: 9443 };
    assert.deepEqual(certificatePolicy(options, loopback).ipAddresses, ['127.0.0.1']);
  });
});
