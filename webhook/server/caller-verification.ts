/**
 * Who is calling the admission port. Every pod in a cluster can reach it, so a review counts as
 * the API server's only when the caller proves it: a client certificate from the CA the admin
 * names with one of the allowed subject names (as cert-manager's and Gatekeeper's webhooks verify
 * the API server), or a bearer token the API server's TokenReview authenticates as an allowed
 * user. Another replica proves itself with a client certificate issued from the CA in
 * `webhook-tls` (only the release's ServiceAccount can read it), which it presents when it
 * forwards a review to the leader.
 *
 * The TLS layer checks the chain (the server trusts the admin's client CAs and our own CA
 * bundle); this module decides what a verified chain is allowed to be. A certificate is judged
 * once per connection: the API server keeps its connections alive.
 */
import type { X509Certificate } from 'node:crypto';
import type { TLSSocket } from 'node:tls';

/** The common name of the client certificate a replica presents when it forwards to the leader. */
export const REPLICA_COMMON_NAME = 'admission-operator-replica';

/** Why a caller is not verified; the label of admission_unverified_requests_total. */
export type UnverifiedReason =
  | 'no-credentials'
  | 'untrusted-certificate'
  | 'certificate-subject-not-allowed'
  | 'token-not-authenticated'
  | 'token-user-not-allowed'
  | 'token-review-unavailable'
  | 'forward-without-replica-certificate';

export type Caller =
  | { verified: true; as: 'api-server' | 'replica'; via: 'certificate' | 'token' | 'network' }
  | { verified: false; reason: UnverifiedReason };

/** What a TokenReview said of a token: the user it authenticates as, or not authenticated. */
export type TokenVerdict = { authenticated: true; username: string } | { authenticated: false };

export interface CallerPolicy {
  /**
   * Names a client certificate of the API server may carry (its subject's common name or one of
   * its DNS names); empty when certificates are not how the API server is verified.
   */
  subjectNames: readonly string[];
  /** Users (as a TokenReview names them) whose bearer tokens are the API server's; empty: none. */
  tokenUsers: readonly string[];
  /**
   * Every caller that reaches the port, and does not claim to be a replica, is the API server:
   * for managed clusters whose API server cannot present credentials, and only true where a
   * NetworkPolicy admits nobody else to the port (docs/security.md, "Managed clusters").
   */
  trustNetwork?: boolean;
}

export interface CallerVerifierOptions {
  policy: CallerPolicy;
  /** The CAs of `webhook-tls`: a certificate they issued with REPLICA_COMMON_NAME is a replica's. */
  replicaCas: () => readonly X509Certificate[];
  /** Asks the API server who a bearer token is (cached there); 'unavailable' when it cannot tell now. */
  reviewToken?: (token: string) => Promise<TokenVerdict | 'unavailable'>;
}

type CertificateIdentity =
  | { kind: 'replica' }
  | { kind: 'api-server' }
  | { kind: 'none' }
  | { kind: 'refused'; reason: UnverifiedReason };

/** The first common name of a subject as X509Certificate prints it ("CN=name\nO=org"). */
function commonName(subject: string): string | undefined {
  for (const line of subject.split('\n')) if (line.startsWith('CN=')) return line.slice(3);
  return undefined;
}

/** The DNS names of a certificate's subjectAltName ("DNS:a, DNS:b, IP Address:…"). */
function dnsNames(certificate: X509Certificate): string[] {
  return (certificate.subjectAltName ?? '')
    .split(', ')
    .filter((entry) => entry.startsWith('DNS:'))
    .map((entry) => entry.slice(4));
}

function issuedBy(certificate: X509Certificate, cas: readonly X509Certificate[]): boolean {
  return cas.some((ca) => certificate.checkIssued(ca) && certificate.verify(ca.publicKey));
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

export class CallerVerifier {
  private readonly judged = new WeakMap<TLSSocket, CertificateIdentity>();

  constructor(private readonly options: CallerVerifierOptions) {}

  /** True when only a verified API server (or replica) gets an answer. */
  get required(): boolean {
    const { subjectNames, tokenUsers } = this.options.policy;
    return subjectNames.length > 0 || tokenUsers.length > 0;
  }

  /**
   * Who sent a request on `socket` with this Authorization header; `forwarded` when it claims to
   * be a replica's forward, which only a replica's certificate may make.
   */
  async identify(socket: TLSSocket, authorization: string | undefined, forwarded: boolean): Promise<Caller> {
    const certificate = this.certificateIdentity(socket);
    if (certificate.kind === 'replica') return { verified: true, as: 'replica', via: 'certificate' };
    if (forwarded) return { verified: false, reason: 'forward-without-replica-certificate' };
    if (certificate.kind === 'api-server') return { verified: true, as: 'api-server', via: 'certificate' };
    // The network vouches for whoever reached the port; the chart renders it only with its NetworkPolicy.
    if (this.options.policy.trustNetwork) return { verified: true, as: 'api-server', via: 'network' };
    const token = authorization === undefined ? undefined : BEARER.exec(authorization)?.[1];
    if (token !== undefined && this.options.policy.tokenUsers.length > 0 && this.options.reviewToken) {
      const verdict = await this.options.reviewToken(token);
      if (verdict === 'unavailable') return { verified: false, reason: 'token-review-unavailable' };
      if (!verdict.authenticated) return { verified: false, reason: 'token-not-authenticated' };
      return this.options.policy.tokenUsers.includes(verdict.username)
        ? { verified: true, as: 'api-server', via: 'token' }
        : { verified: false, reason: 'token-user-not-allowed' };
    }
    return {
      verified: false,
      reason: certificate.kind === 'refused' ? certificate.reason : 'no-credentials',
    };
  }

  private certificateIdentity(socket: TLSSocket): CertificateIdentity {
    const known = this.judged.get(socket);
    if (known) return known;
    const judged = this.judge(socket);
    this.judged.set(socket, judged);
    return judged;
  }

  private judge(socket: TLSSocket): CertificateIdentity {
    // Over plain HTTP (no TLS socket) nobody has a certificate.
    const certificate =
      typeof socket.getPeerX509Certificate === 'function' ? socket.getPeerX509Certificate() : undefined;
    if (!certificate) return { kind: 'none' };
    // The chain was checked against the trusted CAs during the handshake (requestCert without
    // rejectUnauthorized, so that callers without a certificate, the kubelet's probes, connect).
    if (!socket.authorized) return { kind: 'refused', reason: 'untrusted-certificate' };
    const name = commonName(certificate.subject);
    const ours = issuedBy(certificate, this.options.replicaCas());
    if (ours) {
      // Our CA issues serving certificates and replicas' client certificates, never the API server's.
      return name === REPLICA_COMMON_NAME
        ? { kind: 'replica' }
        : { kind: 'refused', reason: 'certificate-subject-not-allowed' };
    }
    const allowed = this.options.policy.subjectNames;
    const names = [...(name === undefined ? [] : [name]), ...dnsNames(certificate)];
    return names.some((candidate) => allowed.includes(candidate))
      ? { kind: 'api-server' }
      : { kind: 'refused', reason: 'certificate-subject-not-allowed' };
  }
}

/** The HTTP status an unverified caller gets: 401 without usable credentials, 403 with someone else's. */
export function refusalStatus(reason: UnverifiedReason): 401 | 403 | 503 {
  switch (reason) {
    case 'no-credentials':
    case 'untrusted-certificate':
    case 'token-not-authenticated':
      return 401;
    case 'certificate-subject-not-allowed':
    case 'token-user-not-allowed':
    case 'forward-without-replica-certificate':
      return 403;
    case 'token-review-unavailable':
      return 503;
  }
}
