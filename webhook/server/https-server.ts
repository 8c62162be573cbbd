/**
 * The HTTPS transport of the admission server. Its certificate is swapped in place
 * (setSecureContext) when the Secret changes: no restart, no volume, and connections
 * already open keep the certificate they started with, as the API server expects.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import type { Logger } from 'pino';
import type { OperatorMetrics } from './metrics.js';

export interface ServingCertificate {
  certificatePem: string;
  privateKeyPem: string;
}

/** The API server keeps idle HTTP/1.1 connections for 90 s; closing first would break requests in flight. */
const KEEP_ALIVE_TIMEOUT_MS = 100_000;
const HEADERS_TIMEOUT_MS = 40_000;

export class AdmissionHttpsServer {
  private server: Server | undefined;
  private current: ServingCertificate | undefined;

  constructor(
    private readonly app: Koa,
    private readonly logger: Logger,
    private readonly metrics: OperatorMetrics,
  ) {}

  /** Starts serving with `certificate`; resolves with the bound port (useful when `port` is 0). */
  async listen(port: number, host: string, certificate: ServingCertificate): Promise<number> {
    const handle = this.app.callback();
    const server = createServer(
      { minVersion: 'TLSv1.2', cert: certificate.certificatePem, key: certificate.privateKeyPem },
      (req, res) => {
        void handle(req, res);
      },
    );
    server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
    server.headersTimeout = HEADERS_TIMEOUT_MS;
    server.on('tlsClientError', (error) => {
      this.logger.debug({ err: error }, 'TLS handshake failed');
    });
    await new Promise<void>((resolvePromise, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolvePromise();
      });
    });
    this.server = server;
    this.current = certificate;
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

  /** Swaps the certificate for new handshakes; a no-op when it is unchanged. */
  setCertificate(certificate: ServingCertificate): void {
    if (
      this.current?.certificatePem === certificate.certificatePem &&
      this.current.privateKeyPem === certificate.privateKeyPem
    ) {
      return;
    }
    this.current = certificate;
    if (!this.server) return;
    this.server.setSecureContext({
      minVersion: 'TLSv1.2',
      cert: certificate.certificatePem,
      key: certificate.privateKeyPem,
    });
    this.metrics.certificateReloads.inc();
    this.logger.info('admission server reloaded its serving certificate');
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
    server.closeIdleConnections();
    const timer = setTimeout(() => {
      server.closeAllConnections();
    }, graceMs);
    await closed;
    clearTimeout(timer);
  }
}
