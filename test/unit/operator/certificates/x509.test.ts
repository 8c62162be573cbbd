import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  createCertificateAuthority,
  generateRsaKeyPair,
  issueCertificate,
  keyMatchesCertificate,
  parseCertificate,
  signCertificate,
  signCertificateAuthority,
  splitPemCertificates,
} from '../../../../operator/certificates/x509.js';

const HOUR = 60 * 60 * 1000;
const ca = await createCertificateAuthority({ commonName: 'test-ca', lifetimeMs: 24 * HOUR });

describe('x509', () => {
  it('creates a self-signed CA backdated by an hour', () => {
    const cert = new X509Certificate(ca.certificatePem);
    assert.equal(cert.ca, true);
    assert.equal(cert.subject, 'CN=test-ca');
    assert.equal(cert.issuer, cert.subject);
    assert.ok(cert.verify(cert.publicKey));
    const backdate = Date.now() - new Date(cert.validFrom).getTime();
    assert.ok(backdate > 59 * 60 * 1000 && backdate < 61 * 60 * 1000, `backdated ${backdate} ms`);
    assert.ok(keyMatchesCertificate(cert, ca.privateKeyPem));
  });

  it('issues a serving certificate that chains to the CA and carries the SANs', async () => {
    const leaf = await issueCertificate(
      {
        commonName: 'svc.ns.svc',
        usage: 'server',
        lifetimeMs: HOUR,
        dnsNames: ['svc.ns.svc', 'svc.ns.svc.cluster.local', 'localhost'],
        ipAddresses: ['127.0.0.1'],
      },
      ca,
    );
    const cert = new X509Certificate(leaf.certificatePem);
    const caCert = new X509Certificate(ca.certificatePem);
    assert.equal(cert.ca, false);
    assert.ok(cert.checkIssued(caCert));
    assert.ok(cert.verify(caCert.publicKey));
    assert.equal(cert.checkHost('svc.ns.svc.cluster.local'), 'svc.ns.svc.cluster.local');
    assert.equal(cert.checkIP('127.0.0.1'), '127.0.0.1');
    assert.equal(cert.checkHost('other.example'), undefined);
    assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.1']);
    assert.ok(keyMatchesCertificate(cert, leaf.privateKeyPem));
    assert.equal(keyMatchesCertificate(cert, ca.privateKeyPem), false);
  });

  it('issues client certificates with organisations as groups', async () => {
    const leaf = await issueCertificate(
      { commonName: 'admin', organizations: ['system:masters'], usage: 'client', lifetimeMs: HOUR },
      ca,
    );
    const cert = new X509Certificate(leaf.certificatePem);
    assert.equal(cert.subject, 'O=system:masters\nCN=admin');
    assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.2']);
  });

  it('uses an injected clock for validity', async () => {
    const now = new Date(Date.now() + 5 * 60 * 1000);
    const leaf = await issueCertificate({ commonName: 'skewed', usage: 'server', lifetimeMs: HOUR, now }, ca);
    assert.equal(leaf.notAfter.getTime(), now.getTime() + HOUR);
    assert.equal(leaf.notBefore.getTime(), now.getTime() - HOUR);
  });

  it('always produces a positive serial of 16 bytes, the one the certificate carries', async () => {
    // Serials are random whatever the key, so one key serves them all. One random serial in 128
    // began with a zero byte, which DER drops; 2,000 issues would all but surely have met one.
    const keys = await generateRsaKeyPair();
    for (let i = 0; i < 2000; i++) {
      const leaf = signCertificate({ commonName: `s${i}`, usage: 'server', lifetimeMs: HOUR }, keys, ca);
      // The PEM's own bytes: OpenSSL's `raw` re-encodes the serial it parsed, minimal or not.
      const der = Buffer.from(leaf.certificatePem.replace(/-----[A-Z ]+-----|\s/g, ''), 'base64');
      const at = serialOffset(der);
      assert.equal(der[at - 1], 16, `serial ${leaf.serialNumber} is 16 bytes`);
      assert.equal(new X509Certificate(leaf.certificatePem).serialNumber, leaf.serialNumber.toUpperCase());
      const [first = 0, second = 0] = [der[at], der[at + 1]];
      assert.ok(first < 0x80, `serial ${leaf.serialNumber} is positive`);
      assert.ok(!(first === 0 && second < 0x80), `serial ${leaf.serialNumber} has no padding byte`);
    }
  });

  it('refuses to issue a CA through issueCertificate or signCertificate', async () => {
    await assert.rejects(issueCertificate({ commonName: 'x', usage: 'ca', lifetimeMs: HOUR }, ca), /leaf/);
    const keys = await generateRsaKeyPair();
    assert.throws(
      () => signCertificate({ commonName: 'x', usage: 'ca', lifetimeMs: HOUR }, keys, ca),
      /leaf/,
    );
  });

  it('generates a PKCS#1 private key with its SPKI public key', async () => {
    const keys = await generateRsaKeyPair();
    assert.match(keys.privateKeyPem, /^-----BEGIN RSA PRIVATE KEY-----\n/);
    assert.match(keys.publicKeyPem, /^-----BEGIN PUBLIC KEY-----\n/);
    const other = await generateRsaKeyPair();
    assert.notEqual(other.privateKeyPem, keys.privateKeyPem);
  });

  it('generates keys off the event loop: timers keep firing while a 4096-bit key is made', async () => {
    let ticks = 0;
    const timer = setInterval(() => {
      ticks += 1;
    }, 1);
    try {
      // Several hundred milliseconds of work; a synchronous generation would let no timer run.
      await generateRsaKeyPair(4096);
    } finally {
      clearInterval(timer);
    }
    assert.equal(ticks > 0, true, 'no timer ran while the key was generated');
  });

  it('signs with a key generated beforehand', async () => {
    const caKeys = await generateRsaKeyPair();
    const leafKeys = await generateRsaKeyPair();
    const ownCa = signCertificateAuthority({ commonName: 'own-ca', lifetimeMs: HOUR }, caKeys);
    assert.equal(ownCa.privateKeyPem, caKeys.privateKeyPem);
    const caCert = new X509Certificate(ownCa.certificatePem);
    assert.equal(caCert.publicKey.export({ type: 'spki', format: 'pem' }), caKeys.publicKeyPem);
    const leaf = signCertificate({ commonName: 'own', usage: 'server', lifetimeMs: HOUR }, leafKeys, ownCa);
    const cert = new X509Certificate(leaf.certificatePem);
    assert.ok(keyMatchesCertificate(cert, leafKeys.privateKeyPem));
    assert.ok(cert.verify(caCert.publicKey));
  });

  it('splits a bundle and rejects garbage', async () => {
    const other = await createCertificateAuthority({ commonName: 'other-ca', lifetimeMs: HOUR });
    const bundle = ca.certificatePem + other.certificatePem;
    const parts = splitPemCertificates(bundle);
    assert.equal(parts.length, 2);
    assert.equal(parseCertificate(parts[1]!)?.subject, 'CN=other-ca');
    assert.deepEqual(splitPemCertificates('garbage'), []);
    assert.equal(
      parseCertificate('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'),
      undefined,
    );
  });
});

/**
 * Where the serial's content starts in a certificate's DER: Certificate SEQUENCE, TBSCertificate
 * SEQUENCE, the [0] version, then the serial INTEGER (tag 0x02, short length).
 */
function serialOffset(der: Buffer): number {
  let at = 0;
  const skipHeader = (): void => {
    const length = der[at + 1] ?? 0;
    at += 2 + (length & 0x80 ? length & 0x7f : 0);
  };
  skipHeader(); // Certificate
  skipHeader(); // TBSCertificate
  assert.equal(der[at], 0xa0, 'a version field');
  at += 2 + (der[at + 1] ?? 0);
  assert.equal(der[at], 0x02, 'the serial INTEGER');
  return at + 2;
}
