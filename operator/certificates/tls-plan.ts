/**
 * Decides what the `webhook-tls` Secret must hold, as a pure function of what it holds now,
 * the policy, the clock and what the webhook configurations already trust.
 *
 * The order of a CA rotation is what keeps admissions from failing:
 *   1. a new CA joins the bundle (first), the serving certificate stays as it is;
 *   2. once the bundle with the new CA is published in both webhook configurations, and the
 *      API server has had `bundlePropagationMs` to notice, a serving certificate signed by
 *      the new CA replaces the old one;
 *   3. the old CA stays in the bundle until it expires or the next CA rotation pushes it out,
 *      so the bundle never holds more than two CAs.
 *
 * Generating an RSA key is the one slow step, and it must not run on the event loop the
 * admission server shares. So `planSecret` stays synchronous and pure: it signs with keys it
 * is handed and, when it needs a key it was not given, says which ones instead of planning.
 * `planSecretWithKeys` generates exactly those, off the event loop, and plans again.
 */
import { X509Certificate } from 'node:crypto';
import {
  generateRsaKeyPair,
  keyMatchesCertificate,
  parseCertificate,
  signCertificate,
  signCertificateAuthority,
  splitPemCertificates,
  type KeyPair,
  type Signer,
} from './x509.js';

export const TLS_SECRET_TYPE = 'kubernetes.io/tls';
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_VALUE = 'admission-operator';
export const BUNDLE_UPDATED_ANNOTATION = 'admission-operator.io/ca-bundle-updated-at';
const CA_COMMON_NAME = 'admission-operator-webhook-ca';

/** The data keys we write, and the older names we migrate from (Koordinator's Opaque layout). */
const KEY_ALIASES = {
  'tls.crt': ['tls.crt', 'cert.pem'],
  'tls.key': ['tls.key', 'key.pem'],
  'ca.crt': ['ca.crt', 'ca-cert.pem'],
  'ca.key': ['ca.key', 'ca-key.pem'],
} as const;
type DataKey = keyof typeof KEY_ALIASES;
export type TlsSecretData = Record<DataKey, string>;

export interface CertificatePolicy {
  caLifetimeMs: number;
  /** A CA is replaced this long before it expires. */
  caRenewBeforeMs: number;
  servingLifetimeMs: number;
  /** A serving certificate is replaced this long before it expires. */
  servingRenewBeforeMs: number;
  /** How long a new CA must have been published before the serving certificate switches to it. */
  bundlePropagationMs: number;
  /** The most time between two checks, so a renewal moment missed while suspended fires soon after waking. */
  maxCheckIntervalMs: number;
  dnsNames: readonly string[];
  ipAddresses: readonly string[];
}

/** What the Secret holds now, decoded. */
export interface StoredSecret {
  type: string;
  managed: boolean;
  data: Readonly<Record<string, string>>;
  annotations: Readonly<Record<string, string>>;
}

/** What the admission server serves and the configurations trust. */
export interface ServingMaterial {
  servingCertPem: string;
  servingKeyPem: string;
  caBundlePem: string;
  /**
   * The signing CA and its key, when the Secret holds them (not in a bring-your-own Secret): each
   * replica issues its own client certificate from it, to forward reviews to the leader.
   */
  signer?: Signer;
}

export type SecretPlan =
  | { kind: 'unchanged'; material: ServingMaterial; nextCheckAt: Date }
  | { kind: 'bring-your-own'; material: ServingMaterial; nextCheckAt: Date }
  | {
      kind: 'write';
      mode: 'create' | 'update' | 'recreate';
      data: TlsSecretData;
      annotations: Record<string, string>;
      material: ServingMaterial;
      issued: ('ca' | 'serving')[];
      reasons: string[];
      nextCheckAt: Date;
    };

/** Keys generated before planning, for a new CA and for a new serving certificate. */
export interface PlanKeys {
  ca?: KeyPair;
  serving?: KeyPair;
}
export type KeyRole = keyof PlanKeys;

/** The plan issues a certificate for each role listed, and was not given its key. */
export interface KeysNeeded {
  kind: 'keys-needed';
  roles: KeyRole[];
}

export interface PlanInputs {
  /** undefined when the Secret does not exist. */
  stored: StoredSecret | undefined;
  policy: CertificatePolicy;
  now: Date;
  /** True when both webhook configurations trust `caPem` in every webhook. */
  isPublished: (caPem: string) => boolean;
  /** What this replica served last; restores a deleted or corrupted Secret without a new CA. */
  remembered?: TlsSecretData;
  /** Keys to issue with; a role the plan needs and that is missing here yields KeysNeeded. */
  keys?: PlanKeys;
}

interface Ca {
  pem: string;
  cert: X509Certificate;
}

/** The CA that signs serving certificates, its key, and the bundle published with it. */
interface Signing {
  signer: Ca;
  signerKey: string;
  bundle: Ca[];
}

function read(data: Readonly<Record<string, string>>, key: DataKey): string {
  for (const alias of KEY_ALIASES[key]) {
    const value = data[alias];
    if (value && value.trim() !== '') return value;
  }
  return '';
}

const notAfter = (cert: X509Certificate): number => new Date(cert.validTo).getTime();

function parseBundle(pem: string, now: Date): Ca[] {
  return splitPemCertificates(pem)
    .map((certPem) => ({ pem: certPem, cert: parseCertificate(certPem) }))
    .filter((ca): ca is Ca => ca.cert !== undefined && ca.cert.ca && notAfter(ca.cert) > now.getTime());
}

function signs(ca: Ca, cert: X509Certificate): boolean {
  try {
    return cert.checkIssued(ca.cert) && cert.verify(ca.cert.publicKey);
  } catch {
    return false;
  }
}

/** Why a serving certificate cannot be served at all (undefined: it can). */
function unusableBecause(
  certPem: string,
  keyPem: string,
  bundle: readonly Ca[],
  policy: CertificatePolicy,
  now: Date,
): string | undefined {
  if (!certPem) return 'no serving certificate';
  const cert = parseCertificate(certPem);
  if (!cert) return 'the serving certificate is not a PEM certificate';
  if (!keyMatchesCertificate(cert, keyPem))
    return 'the serving key is missing or does not match the certificate';
  if (notAfter(cert) <= now.getTime()) return 'the serving certificate has expired';
  if (!bundle.some((ca) => signs(ca, cert))) return 'the serving certificate does not chain to the CA bundle';
  for (const name of policy.dnsNames) {
    if (cert.checkHost(name, { wildcards: false }) === undefined)
      return `the serving certificate lacks SAN ${name}`;
  }
  for (const ip of policy.ipAddresses) {
    if (cert.checkIP(ip) === undefined) return `the serving certificate lacks IP SAN ${ip}`;
  }
  return undefined;
}

function bringYourOwn(stored: StoredSecret, policy: CertificatePolicy, now: Date): ServingMaterial | string {
  if (stored.type !== TLS_SECRET_TYPE) return `its type is ${stored.type}, not ${TLS_SECRET_TYPE}`;
  const caBundlePem = stored.data['ca.crt'] ?? '';
  const bundle = parseBundle(caBundlePem, now);
  if (bundle.length === 0) return 'it has no valid CA in ca.crt';
  const servingCertPem = stored.data['tls.crt'] ?? '';
  const servingKeyPem = stored.data['tls.key'] ?? '';
  const problem = unusableBecause(servingCertPem, servingKeyPem, bundle, policy, now);
  if (problem) return problem;
  const ca = currentCa(stored.data, now);
  return {
    servingCertPem,
    servingKeyPem,
    caBundlePem,
    ...(ca ? { signer: { certificatePem: ca.ca.pem, privateKeyPem: ca.key } } : {}),
  };
}

/**
 * The material a replica can serve from the Secret exactly as stored (a follower's view: it
 * writes nothing), with when to look again; or why it cannot be served.
 */
export function servableSecret(
  stored: StoredSecret,
  policy: CertificatePolicy,
  now: Date,
): { material: ServingMaterial; nextCheckAt: Date } | string {
  const material = bringYourOwn(stored, policy, now);
  if (typeof material === 'string') return material;
  const leaf = parseCertificate(material.servingCertPem);
  const expiry = leaf ? notAfter(leaf) : now.getTime();
  return {
    material,
    nextCheckAt: new Date(
      Math.max(now.getTime() + 100, Math.min(expiry, now.getTime() + policy.maxCheckIntervalMs)),
    ),
  };
}

function parseTime(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const time = Date.parse(value);
  return Number.isNaN(time) ? undefined : time;
}

/** The usable CA (certificate and matching key, unexpired) in `data`, with the bundle it came in. */
function currentCa(
  data: Readonly<Record<string, string>>,
  now: Date,
): { ca: Ca; key: string; bundle: Ca[] } | undefined {
  const bundle = parseBundle(read(data, 'ca.crt'), now);
  const key = read(data, 'ca.key');
  const ca = bundle.find((candidate) => keyMatchesCertificate(candidate.cert, key));
  return ca ? { ca, key, bundle } : undefined;
}

export function planSecret({
  stored,
  policy,
  now,
  isPublished,
  remembered,
  keys = {},
}: PlanInputs): SecretPlan | KeysNeeded {
  const reasons: string[] = [];
  const issued: ('ca' | 'serving')[] = [];
  const at = (ms: number): Date => new Date(ms);
  const checkTimes: number[] = [now.getTime() + policy.maxCheckIntervalMs];

  if (stored && !stored.managed) {
    const byo = bringYourOwn(stored, policy, now);
    if (typeof byo !== 'string') {
      const leaf = parseCertificate(byo.servingCertPem);
      if (leaf) checkTimes.push(notAfter(leaf));
      return { kind: 'bring-your-own', material: byo, nextCheckAt: at(Math.min(...checkTimes)) };
    }
    reasons.push(
      `the Secret is not labelled ${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE} and is unusable (${byo}): taking it over`,
    );
  }

  if (!stored) reasons.push('the Secret does not exist');
  const storedData = stored?.data ?? {};
  const sources = [storedData, ...(remembered ? [remembered] : [])];

  // 1. The CA: keep it, restore it from memory, renew it, or create one.
  let bundleChangedAt = parseTime(stored?.annotations[BUNDLE_UPDATED_ANNOTATION]);
  const found = sources.map((data) => currentCa(data, now)).find((candidate) => candidate !== undefined);
  /**
   * Either the CA that keeps signing, or a new CA to create and the older one kept beside it
   * (`retiring`: that one with its key, when it was the usable CA; its key is gone once the
   * new CA is written).
   */
  let ca:
    | { kind: 'keep'; signing: Signing }
    | { kind: 'new'; reason: string; keep: Ca[]; retiring?: { ca: Ca; key: string } };
  if (!found) {
    // A CA that still signs the serving certificate in place keeps it working meanwhile.
    const servedLeaf = parseCertificate(read(storedData, 'tls.crt'));
    ca = {
      kind: 'new',
      reason: 'no usable CA: creating one',
      keep: parseBundle(read(storedData, 'ca.crt'), now)
        .filter((candidate) => servedLeaf && signs(candidate, servedLeaf))
        .slice(0, 1),
    };
  } else if (now.getTime() >= notAfter(found.ca.cert) - policy.caRenewBeforeMs) {
    ca = {
      kind: 'new',
      reason: 'the CA is due for renewal: adding a new CA to the bundle',
      keep: [found.ca],
      retiring: { ca: found.ca, key: found.key },
    };
  } else {
    // The signing CA first, then at most one older CA that still serves as a trust anchor.
    ca = {
      kind: 'keep',
      signing: {
        signer: found.ca,
        signerKey: found.key,
        bundle: [found.ca, ...found.bundle.filter((other) => other !== found.ca).slice(0, 1)],
      },
    };
    checkTimes.push(notAfter(found.ca.cert) - policy.caRenewBeforeMs);
  }

  // 2. The serving certificate in place, if any can be served. A new CA signs none of them,
  // so the CAs kept beside it decide, and this can be known before the new CA exists.
  const trusted = ca.kind === 'keep' ? ca.signing.bundle : ca.keep;
  let servingCertPem = '';
  let servingKeyPem = '';
  let keptProblem: string | undefined = 'no serving certificate';
  for (const data of sources) {
    const certPem = read(data, 'tls.crt');
    const keyPem = read(data, 'tls.key');
    const problem = unusableBecause(certPem, keyPem, trusted, policy, now);
    if (problem === undefined) {
      servingCertPem = certPem;
      servingKeyPem = keyPem;
      keptProblem = undefined;
      break;
    }
    if (data === storedData) keptProblem = problem;
  }

  // The switch to a new CA waits at least bundlePropagationMs, and meanwhile the serving
  // certificate the old CA signed is neither renewed nor switched: nothing could renew it from
  // the old CA later, since the Secret keeps the signing CA's key only. One that would fall due
  // within that wait (with lifetimes of seconds, it falls due when the CA does) would expire
  // while still served, so it is renewed from the old CA now, in the write that adds the new CA.
  let renewFrom: { ca: Ca; key: string } | undefined;
  if (ca.kind === 'new' && ca.retiring && keptProblem === undefined) {
    const leaf = new X509Certificate(servingCertPem);
    const renewAt = notAfter(leaf) - policy.servingRenewBeforeMs;
    if (renewAt <= now.getTime() + policy.bundlePropagationMs && signs(ca.retiring.ca, leaf))
      renewFrom = ca.retiring;
  }

  let signing: Signing;
  if (ca.kind === 'keep') {
    signing = ca.signing;
  } else {
    if (!keys.ca) {
      // Beside a new CA the serving certificate is replaced only when none can be served, or
      // renewed from the old CA: the switch to the new CA waits until it is published.
      const roles: KeyRole[] = ['ca'];
      if ((keptProblem !== undefined || renewFrom !== undefined) && !keys.serving) roles.push('serving');
      return { kind: 'keys-needed', roles };
    }
    reasons.push(ca.reason);
    const created = signCertificateAuthority(
      { commonName: CA_COMMON_NAME, lifetimeMs: policy.caLifetimeMs, now },
      keys.ca,
    );
    const newCa = { pem: created.certificatePem, cert: new X509Certificate(created.certificatePem) };
    bundleChangedAt = now.getTime();
    issued.push('ca');
    signing = { signer: newCa, signerKey: created.privateKeyPem, bundle: [newCa, ...ca.keep] };
  }
  const { signer, signerKey, bundle } = signing;

  // 3. Keep the serving certificate, or issue one from the signing CA (from the old CA, when
  // it is renewed ahead of the switch).
  let reissue: string | undefined = keptProblem;
  if (reissue === undefined) {
    const leaf = new X509Certificate(servingCertPem);
    const renewAt = notAfter(leaf) - policy.servingRenewBeforeMs;
    if (!signs(signer, leaf)) {
      // Signed by the older CA: switch only once the new one is trusted everywhere.
      const propagatedAt = (bundleChangedAt ?? 0) + policy.bundlePropagationMs;
      if (now.getTime() >= propagatedAt && isPublished(signer.pem)) {
        reissue = 'switching to the new CA';
        renewFrom = undefined;
      } else {
        if (renewFrom) reissue = 'the serving certificate falls due before the switch to the new CA';
        checkTimes.push(Math.max(propagatedAt, now.getTime() + 500));
      }
    } else if (now.getTime() >= renewAt) {
      reissue = 'the serving certificate is due for renewal';
    } else {
      checkTimes.push(renewAt);
    }
  }
  if (reissue !== undefined) {
    if (!keys.serving) return { kind: 'keys-needed', roles: ['serving'] };
    const issuer = renewFrom ?? { ca: signer, key: signerKey };
    reasons.push(
      `${reissue}: issuing a serving certificate${renewFrom ? ' from the old CA, still trusted' : ''}`,
    );
    const leaf = signCertificate(
      {
        commonName: policy.dnsNames[0] ?? policy.ipAddresses[0] ?? 'admission-operator',
        usage: 'server',
        dnsNames: policy.dnsNames,
        ipAddresses: policy.ipAddresses,
        lifetimeMs: policy.servingLifetimeMs,
        now,
      },
      keys.serving,
      { certificatePem: issuer.ca.pem, privateKeyPem: issuer.key },
    );
    servingCertPem = leaf.certificatePem;
    servingKeyPem = leaf.privateKeyPem;
    issued.push('serving');
    checkTimes.push(leaf.notAfter.getTime() - policy.servingRenewBeforeMs);
  }

  const data: TlsSecretData = {
    'tls.crt': servingCertPem,
    'tls.key': servingKeyPem,
    'ca.crt': bundle.map((ca) => ca.pem).join(''),
    'ca.key': signerKey,
  };
  const annotations: Record<string, string> = {
    [BUNDLE_UPDATED_ANNOTATION]: new Date(bundleChangedAt ?? now.getTime()).toISOString(),
  };
  const material: ServingMaterial = {
    servingCertPem,
    servingKeyPem,
    caBundlePem: data['ca.crt'],
    signer: { certificatePem: signer.pem, privateKeyPem: signerKey },
  };
  const nextCheckAt = at(Math.max(now.getTime() + 100, Math.min(...checkTimes)));

  const unchanged =
    stored !== undefined &&
    stored.managed &&
    stored.type === TLS_SECRET_TYPE &&
    (Object.keys(data) as DataKey[]).every((key) => stored.data[key] === data[key]) &&
    stored.annotations[BUNDLE_UPDATED_ANNOTATION] === annotations[BUNDLE_UPDATED_ANNOTATION];
  if (unchanged) return { kind: 'unchanged', material, nextCheckAt };

  if (reasons.length === 0) reasons.push('the Secret layout or labels need updating');
  const mode = stored === undefined ? 'create' : stored.type === TLS_SECRET_TYPE ? 'update' : 'recreate';
  return { kind: 'write', mode, data, annotations, material, issued, reasons, nextCheckAt };
}

/** The rounds `planSecretWithKeys` may take: each one adds at least one of the two keys. */
const MAX_KEY_ROUNDS = 3;

/**
 * Plans with the inputs given, generating (off the event loop) exactly the keys the plan
 * issues with. The same inputs are planned again once the keys exist; only `isPublished`
 * can answer differently, which at worst asks for the other key in one more round.
 */
export async function planSecretWithKeys(
  inputs: Omit<PlanInputs, 'keys'>,
  generateKey: () => Promise<KeyPair> = () => generateRsaKeyPair(),
): Promise<SecretPlan> {
  const keys: PlanKeys = {};
  for (let round = 1; round <= MAX_KEY_ROUNDS; round++) {
    const plan = planSecret({ ...inputs, keys });
    if (plan.kind !== 'keys-needed') return plan;
    // One at a time: each generation keeps a core busy, and the event loop needs one to serve.
    for (const role of plan.roles) keys[role] = await generateKey();
  }
  throw new Error(`planning the TLS Secret still wanted keys after ${MAX_KEY_ROUNDS} rounds`);
}
