/**
 * The metrics port: Prometheus metrics and the read-only debug views (e.g. /elasticQuota), over
 * plain HTTP as controller-runtime serves them, on a port of their own so that what can reach the
 * webhooks cannot read the quota tree. Read-only, GET only.
 *
 * The debug views show every tenant's quota usage, so they answer only callers on the loopback:
 * `kubectl port-forward` (which needs RBAC on the operator's pods) or a shell in the pod. The
 * metrics themselves carry no tenant's usage and answer anyone the network lets through (see the
 * chart's NetworkPolicy).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { own } from '../util/own.js';

export interface MetricsServerOptions {
  /** The process's one registry: the admission server's and the operator's metrics. */
  registry: Registry;
  logger: Logger;
  /** JSON views of what the rules see, by path. */
  debug?: Readonly<Record<string, () => unknown>>;
}

function isLoopback(address: string | undefined): boolean {
  return address !== undefined && (address === '::1' || /^(::ffff:)?127\./.test(address));
}

const json = (value: unknown): string =>
  JSON.stringify(value, (_key, item: unknown) => (typeof item === 'bigint' ? item.toString() : item));

export class MetricsServer {
  private server: Server | undefined;

  constructor(private readonly options: MetricsServerOptions) {}

  /** Starts serving; resolves with the bound port (useful when `port` is 0). */
  async listen(port: number, host: string): Promise<number> {
    const { registry, debug, logger } = this.options;
    const server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      const view = own(debug, path);
      if (req.method !== 'GET' || (path !== '/metrics' && !view)) {
        res.writeHead(req.method === 'GET' ? 404 : 405, { 'Content-Type': 'text/plain' }).end();
        return;
      }
      if (view && !isLoopback(req.socket.remoteAddress)) {
        res
          .writeHead(403, { 'Content-Type': 'text/plain' })
          .end('debug views answer only the loopback: use kubectl port-forward\n');
        return;
      }
      const answer = view
        ? Promise.resolve({ type: 'application/json', text: json(view()) })
        : registry.metrics().then((text) => ({ type: registry.contentType, text }));
      answer.then(
        ({ type, text }) => {
          res.writeHead(200, { 'Content-Type': type }).end(text);
        },
        (error: unknown) => {
          logger.error({ err: error, path }, 'metrics request failed');
          res.writeHead(500, { 'Content-Type': 'text/plain' }).end('internal error');
        },
      );
    });
    server.requestTimeout = 30_000;
    server.headersTimeout = 30_000;
    await new Promise<void>((resolvePromise, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolvePromise();
      });
    });
    this.server = server;
    const bound = (server.address() as AddressInfo).port;
    logger.info({ host, port: bound }, 'metrics server listening');
    return bound;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise<void>((resolvePromise) =>
      server.close(() => {
        resolvePromise();
      }),
    );
    server.closeAllConnections();
    await closed;
  }
}
