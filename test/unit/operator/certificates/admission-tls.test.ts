/**
 * AdmissionTls: the client CAs the admission port trusts (the admin's file, re-read as a mounted
 * ConfigMap changes, and the CA bundle of webhook-tls) and the replica's own client certificate.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { AdmissionTls } from '../../../../operator/certificates/admission-tls.js';
import type { ServingMaterial } from '../../../../operator/certificates/tls-plan.js';
import { REPLICA_COMMON_NAME } from '../../../../webhook/server/caller-verification.js';
import { localServingCertificate, type LocalCertificate } from '../../../harness/allowing-server.js';
import { FakeClock } from '../../../harness/fake-clock.js';

async function until(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 10) {
    if (waited > 5000) throw new Error('the condition did not hold within 5 s');
    await sleep(10);
  }
}

describe('AdmissionTls', () => {
  let dir: string;
  let own: LocalCertificate;
  let apiServerCa: LocalCertificate;
  let material: ServingMaterial;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'admission-tls-'));
    own = await localServingCertificate('own-ca');
    apiServerCa = await localServingCertificate('apiserver-ca');
    material = {
      servingCertPem: own.certificatePem,
      servingKeyPem: own.privateKeyPem,
      caBundlePem: own.ca,
      signer: own.authority,
    };
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const tlsWith = (
    clientCaFile: string | undefined,
    clock = new FakeClock(),
    lines: string[] = [],
  ): AdmissionTls =>
    new AdmissionTls({
      clientCaFile,
      clock,
      logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }),
    });

  it('refuses to start on a client CA file it cannot read or that holds no certificate', async () => {
    await assert.rejects(
      tlsWith(join(dir, 'missing.pem')).start(),
      /--client-ca-file: cannot read .*missing\.pem/,
    );
    const garbage = join(dir, 'garbage.pem');
    await writeFile(garbage, 'not a certificate');
    await assert.rejects(tlsWith(garbage).start(), /garbage\.pem holds no PEM certificate/);
  });

  it("trusts the admin's CAs and its own bundle, and follows the file as it changes", async () => {
    const file = join(dir, 'client-ca.pem');
    await writeFile(file, apiServerCa.ca);
    const clock = new FakeClock();
    const lines: string[] = [];
    const tls = tlsWith(file, clock, lines);
    await tls.start();
    const seen: string[] = [];
    tls.on('changed', (next) => seen.push(next.clientCaPem));
    // Without the CA key: no replica certificate (and its renewal timer) in this test.
    const { signer: _signer, ...withoutKey } = material;
    tls.setMaterial(withoutKey);
    assert.equal(tls.serving?.clientCaPem, apiServerCa.ca + own.ca);
    const rotated = await localServingCertificate('apiserver-ca-2');
    await writeFile(file, rotated.ca);
    await clock.advance(31_000);
    // The file is read off the fake clock, by real I/O.
    await until(() => seen.at(-1) === rotated.ca + own.ca);
    await writeFile(file, 'broken');
    await clock.advance(31_000);
    await until(() => lines.some((line) => line.includes('the client CA file cannot be used')));
    assert.equal(tls.serving?.clientCaPem, rotated.ca + own.ca, 'an unusable file keeps the last good CAs');
    tls.stop();
  });

  it("issues the replica's client certificate from the Secret's CA, and none without its key", async () => {
    const tls = tlsWith(undefined);
    await tls.start();
    tls.setMaterial(material);
    await tls.replicaCertificateIssued();
    const issued = tls.replicaCertificate();
    assert.ok(issued);
    const certificate = new X509Certificate(issued.certificatePem);
    assert.match(certificate.subject, new RegExp(`CN=${REPLICA_COMMON_NAME}`));
    assert.ok(certificate.verify(new X509Certificate(own.ca).publicKey));
    assert.deepEqual(
      tls.replicaCas().map((ca) => ca.fingerprint256),
      [new X509Certificate(own.ca).fingerprint256],
    );
    const { signer: _signer, ...bringYourOwn } = material;
    tls.setMaterial(bringYourOwn);
    assert.equal(tls.replicaCertificate(), undefined);
    tls.stop();
  });
});
