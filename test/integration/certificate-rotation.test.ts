/**
 * Rotation under load: with lifetimes of seconds, the API server keeps creating objects
 * through our webhooks across many serving and CA rotations, and not one is refused.
 * Several replicas started at once agree on one CA.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import { splitPemCertificates } from '../../operator/certificates/x509.js';
import { freePorts } from '../../scripts/cluster/control-plane.js';
import { createPod, podReadyNamespace, testNamespace, waitFor } from '../harness/cluster.js';
import {
  cleanConfigurationsAfter,
  deleteConfigurations,
  readSecret,
  secretValue,
  servedCertificate,
  startOperator,
  waitForPublishedSecret,
} from '../harness/operator.js';

describe('certificate rotation', () => {
  it('admits every object created across serving and CA rotations, with at most two CAs in the bundle', async (t) => {
    cleanConfigurationsAfter(t);
    const namespace = await testNamespace(t, 'op');
    const workload = await podReadyNamespace(t);
    const operator = await startOperator(t, {
      namespace,
      args: [
        '--cert-lifetime=6s',
        '--cert-renew-before=3s',
        '--ca-lifetime=24s',
        '--ca-renew-before=10s',
        '--bundle-propagation=1s',
      ],
    });
    const first = await waitForPublishedSecret(namespace);
    const servingSerials = new Set([new X509Certificate(secretValue(first, 'tls.crt')).serialNumber]);
    const caSerials = new Set(
      splitPemCertificates(secretValue(first, 'ca.crt')).map((pem) => new X509Certificate(pem).serialNumber),
    );

    const failures: string[] = [];
    let created = 0;
    let stop = false;
    const worker = async (): Promise<void> => {
      while (!stop) {
        try {
          await createPod(workload);
          created++;
        } catch (error) {
          failures.push(String((error as { body?: unknown }).body ?? error));
        }
      }
    };
    const observer = async (): Promise<void> => {
      while (!stop) {
        const secret = await readSecret(namespace);
        const bundle = splitPemCertificates(secretValue(secret, 'ca.crt')).map(
          (pem) => new X509Certificate(pem),
        );
        assert.ok(bundle.length >= 1 && bundle.length <= 2, `the bundle holds ${bundle.length} CAs`);
        for (const ca of bundle) {
          caSerials.add(ca.serialNumber);
          assert.ok(new Date(ca.validTo).getTime() > Date.now() - 1000, 'an expired CA stayed in the bundle');
        }
        servingSerials.add((await servedCertificate(operator.port)).serialNumber);
        await new Promise((done) => setTimeout(done, 200));
      }
    };
    const running = [worker(), worker(), observer()];
    await waitFor(
      'three serving rotations and a CA rotation',
      () => Promise.resolve(servingSerials.size >= 4 && caSerials.size >= 3),
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    stop = true;
    await Promise.all(running);

    t.diagnostic(
      `${created} pods admitted across ${servingSerials.size - 1} serving and ${caSerials.size - 1} CA rotations`,
    );
    assert.deepEqual(failures, []);
    assert.ok(created > 50, `only ${created} pods were created`);
    assert.equal(operator.child.exitCode, null);
  });

  for (const [replicas, rounds] of [
    [2, 1],
    [5, 3],
  ] as const) {
    it(`agrees on one CA when ${replicas} replicas start at once (${rounds} round${rounds > 1 ? 's' : ''})`, async (t) => {
      cleanConfigurationsAfter(t);
      for (let round = 1; round <= rounds; round++) {
        await deleteConfigurations();
        const namespace = await testNamespace(t, 'op');
        const ports = await freePorts(replicas);
        const operators = await Promise.all(
          ports.map((port) => startOperator(t, { namespace, port, webhookPort: ports[0] })),
        );
        const secret = await waitForPublishedSecret(namespace);
        const bundle = splitPemCertificates(secretValue(secret, 'ca.crt'));
        assert.equal(bundle.length, 1, `round ${round}: ${bundle.length} CAs in the bundle`);
        const ca = new X509Certificate(bundle[0]!);
        for (const operator of operators) {
          const served = await waitFor(`replica on ${operator.port} to serve`, () => {
            // A replica that died will never serve: say why (its last lines) instead of only "refused".
            if (operator.child.exitCode !== null) {
              throw new Error(
                `it exited ${operator.child.exitCode}: ${operator.logs
                  .slice(-5)
                  .map((line) => line.slice(0, 300))
                  .join(' | ')}`,
              );
            }
            return servedCertificate(operator.port);
          });
          assert.ok(
            served.checkIssued(ca) && served.verify(ca.publicKey),
            `round ${round}: replica ${operator.port}`,
          );
        }
        // Settled: nobody replaces the CA afterwards.
        await new Promise((done) => setTimeout(done, 2000));
        assert.equal(secretValue(await readSecret(namespace), 'ca.crt'), bundle[0]);
        await Promise.all(operators.map((operator) => operator.stop()));
      }
    });
  }
});
