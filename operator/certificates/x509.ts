/**
 * X.509 issuing for the operator's own CA and serving certificates (and, reused by
 * scripts/cluster, the local control plane's PKI).
 *
 * The admission server shares this event loop, so nothing here may hold it for long during a
 * rotation. RSA keys come from Node's native crypto, generated asynchronously on libuv's thread
 * pool (a 2048-bit key takes tens to hundreds of milliseconds). node-forge only builds the
 * certificate; the RSA signature is Node's native one too, since forge's pure-JS arithmetic
 * takes tens of milliseconds per signature.
 */
import {
  X509Certificate,
  constants,
  createPrivateKey,
  generateKeyPair,
  privateEncrypt,
  randomBytes,
} from 'node:crypto';
import { promisify } from 'node:util';
import forge from 'node-forge';

export interface KeyPair {
  /** PKCS#1 PEM ("RSA PRIVATE KEY"), the format kubernetes.io/tls Secrets conventionally carry. */
  privateKeyPem: string;
  /** SPKI PEM ("PUBLIC KEY"). */
  publicKeyPem: string;
}

export interface IssuedCertificate {
  certificatePem: string;
  privateKeyPem: string;
  notBefore: Date;
  notAfter: Date;
  serialNumber: string;
}

export type CertificateUsage = 'ca' | 'server' | 'client' | 'server-and-client';

export interface CertificateRequest {
  commonName: string;
  organizations?: readonly string[];
  dnsNames?: readonly string[];
  ipAddresses?: readonly string[];
  usage: CertificateUsage;
  /** How long the certificate is valid from now. */
  lifetimeMs: number;
  /**
   * How far notBefore lies in the past. Clocks of the API server and of other replicas may
   * run behind ours; a certificate that is "not yet valid" to them fails every handshake.
   */
  backdateMs?: number;
  /** The moment treated as "now"; injectable so tests can issue with a skewed clock. */
  now?: Date;
}

export interface Signer {
  certificatePem: string;
  privateKeyPem: string;
}

const DEFAULT_BACKDATE_MS = 60 * 60 * 1000;

export type CertificateAuthorityRequest = Omit<CertificateRequest, 'usage' | 'dnsNames' | 'ipAddresses'>;

const generateRsa = promisify(generateKeyPair);

/** A fresh RSA key pair, generated off the event loop. */
export async function generateRsaKeyPair(modulusLength = 2048): Promise<KeyPair> {
  const { privateKey, publicKey } = await generateRsa('rsa', {
    modulusLength,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return { privateKeyPem: privateKey, publicKeyPem: publicKey };
}

/** Issues a self-signed CA certificate with a fresh key. */
export async function createCertificateAuthority(
  request: CertificateAuthorityRequest,
): Promise<IssuedCertificate> {
  return signCertificateAuthority(request, await generateRsaKeyPair());
}

/** Issues a certificate with a fresh key, signed by `signer`. */
export async function issueCertificate(
  request: CertificateRequest,
  signer: Signer,
): Promise<IssuedCertificate> {
  assertLeafRequest(request);
  return signCertificate(request, await generateRsaKeyPair(), signer);
}

/**
 * A self-signed CA certificate for a key generated beforehand. Synchronous (signing is cheap),
 * so a pure planner can issue with keys its caller generated asynchronously.
 */
export function signCertificateAuthority(
  request: CertificateAuthorityRequest,
  keys: KeyPair,
): IssuedCertificate {
  return issue({ ...request, usage: 'ca' }, keys, undefined);
}

/** A certificate for a key generated beforehand, signed by `signer`. */
export function signCertificate(
  request: CertificateRequest,
  keys: KeyPair,
  signer: Signer,
): IssuedCertificate {
  assertLeafRequest(request);
  return issue(request, keys, signer);
}

function assertLeafRequest(request: CertificateRequest): void {
  if (request.usage === 'ca')
    throw new Error('only leaf certificates here: a CA comes from createCertificateAuthority');
}

function issue(request: CertificateRequest, keys: KeyPair, signer: Signer | undefined): IssuedCertificate {
  const now = request.now ?? new Date();
  const notBefore = new Date(now.getTime() - (request.backdateMs ?? DEFAULT_BACKDATE_MS));
  const notAfter = new Date(now.getTime() + request.lifetimeMs);

  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(keys.publicKeyPem);
  cert.serialNumber = positiveSerial();
  cert.validity.notBefore = notBefore;
  cert.validity.notAfter = notAfter;
  const subject = subjectAttributes(request.commonName, request.organizations ?? []);
  cert.setSubject(subject);

  let signingKey: forge.pki.rsa.PrivateKey;
  let authorityKeyId: string;
  if (signer === undefined) {
    cert.setIssuer(subject);
    signingKey = nativeSigningKey(keys.privateKeyPem);
    authorityKeyId = cert.generateSubjectKeyIdentifier().getBytes();
  } else {
    const issuer = forge.pki.certificateFromPem(signer.certificatePem);
    cert.setIssuer(issuer.subject.attributes);
    signingKey = nativeSigningKey(signer.privateKeyPem);
    authorityKeyId = subjectKeyIdentifierOf(issuer);
  }
  cert.setExtensions([
    ...usageExtensions(request.usage),
    // forge derives the value from the public key, the same way subjectKeyIdentifierOf does.
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: authorityKeyId },
    ...subjectAltNames(request.dnsNames ?? [], request.ipAddresses ?? []),
  ]);
  cert.sign(signingKey, forge.md.sha256.create());

  return {
    // forge writes CRLF line ends; LF keeps PEM text comparable with what the API returns.
    certificatePem: forge.pki.certificateToPem(cert).replace(/\r\n/g, '\n'),
    privateKeyPem: keys.privateKeyPem,
    notBefore,
    notAfter,
    serialNumber: cert.serialNumber,
  };
}

/**
 * A key forge can sign with, whose signature is Node's native RSA: RSASSA-PKCS1-v1_5 over the
 * DigestInfo of the digest forge computed, byte for byte what forge's own key would produce.
 */
function nativeSigningKey(privateKeyPem: string): forge.pki.rsa.PrivateKey {
  const key = createPrivateKey(privateKeyPem);
  const sign = (md: forge.md.MessageDigest): forge.Bytes => {
    const { asn1 } = forge;
    const algorithm = forge.pki.oids[md.algorithm];
    if (algorithm === undefined) throw new Error(`no OID for the digest ${md.algorithm}`);
    const digestInfo = asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
      asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
        asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer(algorithm).getBytes()),
        asn1.create(asn1.Class.UNIVERSAL, asn1.Type.NULL, false, ''),
      ]),
      asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OCTETSTRING, false, md.digest().getBytes()),
    ]);
    // Encrypting with the private key under PKCS#1 v1.5 padding is the v1.5 signature primitive.
    return privateEncrypt(
      { key, padding: constants.RSA_PKCS1_PADDING },
      Buffer.from(asn1.toDer(digestInfo).getBytes(), 'binary'),
    ).toString('binary');
  };
  // forge's Certificate.sign calls only `sign(md)` on the key it is given.
  return { sign } as unknown as forge.pki.rsa.PrivateKey;
}

/** The issuer's own subject key identifier, so a leaf's authority key identifier always matches it. */
function subjectKeyIdentifierOf(issuer: forge.pki.Certificate): string {
  const extension: { subjectKeyIdentifier?: string } | undefined =
    issuer.getExtension('subjectKeyIdentifier');
  return extension?.subjectKeyIdentifier
    ? forge.util.hexToBytes(extension.subjectKeyIdentifier)
    : issuer.generateSubjectKeyIdentifier().getBytes();
}

function positiveSerial(): string {
  const bytes = randomBytes(16);
  // First byte 0x40-0x7f: the top bit clear keeps the DER INTEGER positive (RFC 5280), the next bit
  // set keeps every serial 16 bytes long. A leading zero byte is padding DER forbids: forge drops it,
  // and the certificate's serial was then not the one returned here (126 random bits remain).
  bytes[0] = ((bytes[0] ?? 0) & 0x3f) | 0x40;
  return bytes.toString('hex');
}

function subjectAttributes(
  commonName: string,
  organizations: readonly string[],
): forge.pki.CertificateField[] {
  return [
    ...organizations.map((value) => ({ shortName: 'O', value })),
    { shortName: 'CN', value: commonName },
  ];
}

function usageExtensions(usage: CertificateUsage): object[] {
  if (usage === 'ca') {
    return [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ];
  }
  return [
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    {
      name: 'extKeyUsage',
      serverAuth: usage === 'server' || usage === 'server-and-client',
      clientAuth: usage === 'client' || usage === 'server-and-client',
    },
  ];
}

function subjectAltNames(dnsNames: readonly string[], ipAddresses: readonly string[]): object[] {
  if (dnsNames.length === 0 && ipAddresses.length === 0) return [];
  return [
    {
      name: 'subjectAltName',
      altNames: [
        ...dnsNames.map((value) => ({ type: 2, value })),
        ...ipAddresses.map((ip) => ({ type: 7, ip })),
      ],
    },
  ];
}

/** Splits a PEM text holding several certificates (a CA bundle) into one PEM per certificate. */
export function splitPemCertificates(pem: string): string[] {
  return (
    pem
      .match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)
      ?.map((block) => `${block}\n`) ?? []
  );
}

/** Parses one PEM certificate, or returns undefined for anything that is not one. */
export function parseCertificate(pem: string): X509Certificate | undefined {
  try {
    return new X509Certificate(pem);
  } catch {
    return undefined;
  }
}

/** True when the private key PEM parses and belongs to the certificate. */
export function keyMatchesCertificate(certificate: X509Certificate, privateKeyPem: string): boolean {
  try {
    return certificate.checkPrivateKey(createPrivateKey(privateKeyPem));
  } catch {
    return false;
  }
}
