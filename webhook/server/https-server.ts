/**
 * The HTTPS transport of the admission server. Its certificate is swapped in place
 * (setSecureContext) when the Secret changes: no restart, no volume, and connections
 * already open keep the certificate they started with, as the API server expects.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import type { Logger } from 'pino';
import type { AdmissionMetrics } from '../metrics/admission-metrics.js';
import { UNUSED_CONNECTION_IDLE_MS, UnusedConnections } from './unused-connections.js';

export interface ServingCertificate {
  certificatePem: string;
  privateKeyPem: string;
}

/**
 * The TLS of the admission port: the certificate it serves and the CAs whose client certificates
 * it accepts (the API server's, and its own for replicas' forwards). A client certificate is asked
 * for but not required: the kubelet's probes present none, and caller-verification.ts decides what
 * a request without one may do.
 */
export interface ServingTls extends ServingCertificate {
  /** PEM bundle of the CAs client certificates are verified against; empty: none is trusted. */
  clientCaPem: string;
}

function secureContextOptions(tls: ServingTls): {
  minVersion: 'TLSv1.2';
  cert: string;
  key: string;
  ca?: string;
} {
  return {
    minVersion: 'TLSv1.2',
    cert: tls.certificatePem,
    key: tls.privateKeyPem,
    ...(tls.clientCaPem === '' ? {} : { ca: tls.clientCaPem }),
  };
}

/** The API server keeps idle HTTP/1.1 connections for 90 s; closing first would break requests in flight. */
export const KEEP_ALIVE_TIMEOUT_MS = 100_000;
/**
 * The API server never waits more than 30 s for a webhook, so a request (headers and body) that
 * takes longer has nobody waiting for it: Node's default would hold it for 300 s.
 */
const REQUEST_TIMEOUT_MS = 30_000;
/** Connections served at once; more are dropped (and counted) rather than exhausting memory. */
const MAX_CONNECTIONS = 1024;

export interface TransportLimits {
  requestTimeoutMs: number;
  maxConnections: number;
  /** While closing, a connection that has carried no request for this long is closed as idle. */
  unusedConnectionIdleMs?: number;
}

const DEFAULT_LIMITS: TransportLimits = {
  requestTimeoutMs: REQUEST_TIMEOUT_MS,
  maxConnections: MAX_CONNECTIONS,
};
/** Dropped connections are logged at most this often, with the count since the last line. */
const DROP_LOG_INTERVAL_MS = 10_000;
/** While closing, connections that have become idle are looked for this often. */
const CLOSE_POLL_MS = 500;

/**
 * The listen options: the kernel's queue of connections not yet accepted holds as many as the
 * server may serve at once. A burst makes the API server dial one connection per concurrent
 * webhook call, while the event loop may be busy with handshakes; Node's default backlog (511)
 * lets the kernel drop the SYNs past it, and the API server resends one only after 1 s, then 3 s
 * (measured: 73 listen overflows in one 1,000-pod burst on a machine busy elsewhere,
 * docs/performance/README.md). Linux caps the value at net.core.somaxconn (4096 by default).
 */
export function listenOptions(
  port: number,
  host: string,
  limits: Pick<TransportLimits, 'maxConnections'>,
): { port: number; host: string; backlog: number } {
  return { port, host, backlog: limits.maxConnections };
}

export class AdmissionHttpsServer {
  private server: Server | undefined;
  private current: ServingTls | undefined;
  private draining = false;
  private readonly unused = new UnusedConnections();

  constructor(
    private readonly app: Koa,
    private readonly logger: Logger,
    private readonly metrics: AdmissionMetrics,
    private readonly limits: TransportLimits = DEFAULT_LIMITS,
  ) {}

  /** Starts serving with `tls`; resolves with the bound port (useful when `port` is 0). */
  async listen(port: number, host: string, tls: ServingTls): Promise<number> {
    const handle = this.app.callback();
    const server = createServer(
      {
        ...secureContextOptions(tls),
        requestCert: true,
        rejectUnauthorized: false,
        // How often Node looks for requests past their time-out: its default (30 s) would let a
        // stalled request live twice as long as the time-out says.
        connectionsCheckingInterval: Math.min(1000, this.limits.requestTimeoutMs / 4),
      },
      (req, res) => {
        this.unused.used(req.socket);
        // A draining replica answers, but closes the connection after each answer, so a client that
        // keeps connections alive dials again and reaches a replica that is staying.
        if (this.draining) res.setHeader('Connection', 'close');
        void handle(req, res);
      },
    );
    server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
    server.requestTimeout = this.limits.requestTimeoutMs;
    server.headersTimeout = this.limits.requestTimeoutMs;
    server.maxConnections = this.limits.maxConnections;
    let dropped = 0;
    let lastDropLog = 0;
    server.on('drop', () => {
      this.metrics.connectionsDropped.inc();
      dropped += 1;
      const now = Date.now();
      if (now - lastDropLog < DROP_LOG_INTERVAL_MS) return;
      this.logger.warn(
        { dropped, maxConnections: this.limits.maxConnections },
        'admission server is at its connection limit: dropping new connections',
      );
      lastDropLog = now;
      dropped = 0;
    });
    server.on('secureConnection', (socket) => {
      this.unused.accepted(socket);
    });
    server.on('tlsClientError', (error) => {
      this.logger.debug({ err: error }, 'TLS handshake failed');
    });
    await new Promise<void>((resolvePromise, reject) => {
      server.once('error', reject);
      server.listen(listenOptions(port, host, this.limits), () => {
        server.off('error', reject);
        resolvePromise();
      });
    });
    this.server = server;
    this.current = tls;
    const bound = (server.address() as AddressInfo).port;
    this.logger.info({ host, port: bound }, 'admission server listening');
    return bound;
  }

  get listening(): boolean {
    return this.server?.listening ?? false;
  }

  get certificate(): ServingCertificate | undefined {
    return this.current;
  }

  /**
   * Swaps the certificate, or the client CAs, for new handshakes (connections already open keep
   * theirs); a no-op when neither changed.
   */
  setTls(tls: ServingTls): void {
    const previous = this.current;
    const certificateChanged =
      previous?.certificatePem !== tls.certificatePem || previous.privateKeyPem !== tls.privateKeyPem;
    if (!certificateChanged && previous.clientCaPem === tls.clientCaPem) return;
    this.current = tls;
    if (!this.server) return;
    this.server.setSecureContext(secureContextOptions(tls));
    if (certificateChanged) {
      this.metrics.certificateReloads.inc();
      this.logger.info('admission server reloaded its serving certificate');
    } else {
      this.logger.info('admission server reloaded the CAs it verifies client certificates with');
    }
  }

  get isDraining(): boolean {
    return this.draining;
  }

  /**
   * Starts the drain: requests are still answered, each with `Connection: close`, so their
   * clients reconnect elsewhere. Idle connections are left open until close(): closing one now
   * could race a review the client is already sending on it, which it would not retry.
   */
  drain(): void {
    this.draining = true;
  }

  /** Stops accepting, lets requests in flight finish (up to `graceMs`), then closes everything. */
  async close(graceMs = 10_000): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise<void>((resolvePromise) => {
      server.close(() => {
        resolvePromise();
      });
    });
    // Connections become idle as their last answers go out (each with `Connection: close` once
    // draining), and a connection that never carried a request counts as idle only after a while:
    // look again until none is left, as Go's Server.Shutdown does.
    const closeIdle = (): void => {
      server.closeIdleConnections();
      this.unused.closeIdle(this.limits.unusedConnectionIdleMs ?? UNUSED_CONNECTION_IDLE_MS);
    };
    closeIdle();
    const poll = setInterval(closeIdle, CLOSE_POLL_MS);
    const timer = setTimeout(() => {
      server.getConnections((_error, open) => {
        this.logger.warn({ open, graceMs }, 'shutdown grace over: closing the connections still open');
      });
      server.closeAllConnections();
    }, graceMs);
    await closed;
    clearInterval(poll);
    clearTimeout(timer);
  }
}
