/**
 * The self-check behind /readyz: a real TLS handshake with our own server that must verify
 * against the caBundle the API server holds. A replica is only ready when the API server
 * could call it successfully. The same checks gate the leader's first write of the webhook
 * configurations (`publishProblem`), so a failurePolicy=Fail configuration always finds a
 * replica that can answer it.
 */
import { connect } from 'node:tls';
import { isIP } from 'node:net';
import type { ReadinessReport } from '../webhook/server/app.js';

export interface HandshakeTarget {
  /** Where to connect (the server listens there). */
  host: string;
  port: number;
  /** The name the API server verifies: a DNS name (sent as SNI) or an IP. */
  verifyName: string;
}

/** The listening address (loopback for a wildcard bind), verified under the name the API server uses. */
export function handshakeTarget(bindAddress: string, port: number, verifyName: string): HandshakeTarget {
  return { host: ['0.0.0.0', '::'].includes(bindAddress) ? '127.0.0.1' : bindAddress, port, verifyName };
}

function verifyHandshake(
  target: HandshakeTarget,
  caBundlePem: string,
  timeoutMs = 2000,
): Promise<string | undefined> {
  return new Promise((resolvePromise) => {
    const socket = connect({
      host: target.host,
      port: target.port,
      ca: caBundlePem,
      minVersion: 'TLSv1.2',
      ...(isIP(target.verifyName) ? {} : { servername: target.verifyName }),
      checkServerIdentity: (_host, cert) => {
        // Verify against the name the API server uses, not the address we dialled.
        const names = cert.subjectaltname ?? '';
        const wanted = isIP(target.verifyName)
          ? `IP Address:${target.verifyName}`
          : `DNS:${target.verifyName}`;
        return names.split(', ').includes(wanted)
          ? undefined
          : new Error(`the serving certificate has no SAN ${wanted} (it has ${names || 'none'})`);
      },
      timeout: timeoutMs,
    });
    const done = (problem: string | undefined): void => {
      socket.destroy();
      resolvePromise(problem);
    };
    socket.once('secureConnect', () => {
      done(socket.authorized ? undefined : `handshake not authorized: ${String(socket.authorizationError)}`);
    });
    socket.once('timeout', () => {
      done(`handshake timed out after ${timeoutMs} ms`);
    });
    socket.once('error', (error: Error) => {
      done(`handshake failed: ${error.message}`);
    });
  });
}

/** What the readiness checks read from the running replica. */
export interface ReadinessSources {
  /** Where this replica's admission server answers, as the API server verifies it. */
  handshakeTarget: HandshakeTarget;
  /** True once the admission server listens. */
  listening: () => boolean;
  /** True once the drain before a stop has begun. */
  draining: () => boolean;
  /** True while a serving certificate is loaded. */
  hasCertificate: () => boolean;
  /** The caBundle the webhook configurations hold, if any. */
  publishedCaBundle: () => string | undefined;
  /** The state store's watches that have not listed yet, by name. */
  storeUnsynced: () => string[];
  /** The CRDs of the kinds the store watches that are not installed (reported, never unready). */
  kindsNotInstalled?: () => string[];
  /** True once the webhook configurations' watches have listed. */
  configurationsSynced: () => boolean;
  /** True once the webhook-tls Secret's watch has listed. */
  certificateSynced: () => boolean;
}

/**
 * Why this replica could not answer webhooks published with `caBundlePem` yet (not listening,
 * no certificate, caches not synced, a handshake that does not verify), or undefined when it could.
 */
export async function publishProblem(
  sources: ReadinessSources,
  caBundlePem: string,
): Promise<string | undefined> {
  if (!sources.listening()) return 'the admission server is not listening yet';
  if (!sources.hasCertificate()) return 'no serving certificate loaded';
  const unsynced = [
    ...sources.storeUnsynced(),
    ...(sources.certificateSynced() ? [] : ['webhook-tls Secret']),
  ];
  if (unsynced.length > 0) return `not synced yet: ${unsynced.join(', ')}`;
  return verifyHandshake(sources.handshakeTarget, caBundlePem);
}

/** The /readyz report: certificate loaded, handshake verifying against the published bundle, caches synced. */
export async function readinessReport(sources: ReadinessSources): Promise<ReadinessReport> {
  // Answered without the handshake, so the endpoint is dropped as soon as the drain starts.
  if (sources.draining()) {
    return {
      ready: false,
      checks: { shutdown: { ok: false, message: 'shutting down: draining requests' } },
    };
  }
  const checks: ReadinessReport['checks'] = {};
  checks.certificate = sources.hasCertificate()
    ? { ok: true, message: 'serving certificate loaded' }
    : { ok: false, message: 'no serving certificate loaded' };
  const published = sources.publishedCaBundle();
  const problem = published
    ? await verifyHandshake(sources.handshakeTarget, published)
    : 'no caBundle published in the webhook configurations yet';
  checks.handshake = problem
    ? { ok: false, message: problem }
    : { ok: true, message: 'a TLS handshake with this server verifies against the published caBundle' };
  const unsynced = [
    ...sources.storeUnsynced(),
    ...(sources.configurationsSynced() ? [] : ['webhook configurations']),
    ...(sources.certificateSynced() ? [] : ['webhook-tls Secret']),
  ];
  checks.caches =
    unsynced.length === 0
      ? { ok: true, message: 'all watches have synced' }
      : { ok: false, message: `not synced yet: ${unsynced.join(', ')}` };
  const absent = sources.kindsNotInstalled?.() ?? [];
  // A kind whose CRD is absent has no objects: the rules are right about it, so this is detail.
  checks.kinds = {
    ok: true,
    message:
      absent.length === 0
        ? 'every watched kind is installed'
        : `not installed, so none of their objects exist (each is watched once its CRD appears): ${absent.join(', ')}`,
  };
  return { ready: Object.values(checks).every((check) => check.ok), checks };
}
