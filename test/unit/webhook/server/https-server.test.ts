/**
 * The transport limits of the admission server, on a real TLS socket: a sender that stalls is cut
 * off at the request time-out, and connections past the cap are dropped and counted.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect, type TLSSocket } from 'node:tls';
import { listenOptions, type AdmissionHttpsServer } from '../../../../webhook/server/https-server.js';
import type { AdmissionMetrics } from '../../../../webhook/metrics/admission-metrics.js';
import { startAllowingServer } from '../../../harness/allowing-server.js';

describe('admission HTTPS transport', () => {
  let metrics: AdmissionMetrics;
  let server: AdmissionHttpsServer;
  let port = 0;
  let ca = '';

  before(async () => {
    ({ server, port, ca, metrics } = await startAllowingServer({ requestTimeoutMs: 400, maxConnections: 3 }));
  });
  after(async () => {
    await server.close(100);
  });

  const open = (): Promise<TLSSocket> =>
    new Promise((resolvePromise, reject) => {
      const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => {
        resolvePromise(socket);
      });
      socket.once('error', reject);
    });

  /** Everything the server sends until it closes the connection. */
  const untilClosed = (socket: TLSSocket): Promise<string> =>
    new Promise((resolvePromise) => {
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (text += chunk));
      socket.on('error', () => undefined);
      socket.once('close', () => {
        resolvePromise(text);
      });
    });

  it('ends a request whose body stalls, at the request time-out', async () => {
    const socket = await open();
    const closed = untilClosed(socket);
    socket.write(
      'POST /validate-pod HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
        'Content-Length: 1000\r\n\r\n{"apiVersion":',
    );
    // The test runner's own time-out is the bound: without the server's time-out this never ends.
    assert.match(await closed, /^HTTP\/1\.1 408/);
  });

  it('ends a request whose headers stall', async () => {
    const socket = await open();
    const closed = untilClosed(socket);
    socket.write('POST /validate-pod HTTP/1.1\r\nHost: local');
    assert.match(await closed, /^HTTP\/1\.1 408/);
  });

  it('drops connections past the cap, counts them, and serves again once there is room', async () => {
    const held = [await open(), await open(), await open()];
    const dropped = await new Promise<boolean>((resolvePromise) => {
      const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => {
        socket.destroy();
        resolvePromise(false);
      });
      socket.once('error', () => {
        resolvePromise(true);
      });
      socket.once('close', () => {
        resolvePromise(true);
      });
    });
    assert.equal(dropped, true);
    const counted = await metrics.registry.getSingleMetricAsString('admission_connections_dropped_total');
    assert.match(counted, /admission_connections_dropped_total 1$/m);
    for (const socket of held) socket.destroy();
    // The server sees the closes when its thread gets to them: on a busy machine that may take a
    // while, and until then a new connection is still past the cap. One of these must be served.
    let answer = '';
    for (let attempt = 0; attempt < 100 && !answer.startsWith('HTTP/1.1 200'); attempt++) {
      await new Promise((resolveTimer) => setTimeout(resolveTimer, 50));
      const socket = await open().catch(() => undefined);
      if (!socket) continue;
      const closed = untilClosed(socket);
      socket.end('GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
      answer = await closed;
    }
    assert.match(answer, /^HTTP\/1\.1 200/);
  });
});

describe('admission HTTPS listen options', () => {
  it('queues as many connections not yet accepted as the server may serve at once', () => {
    // Node's default (511) is under a burst's new connections: past it the kernel drops SYNs.
    assert.deepEqual(listenOptions(9443, '0.0.0.0', { maxConnections: 1024 }), {
      port: 9443,
      host: '0.0.0.0',
      backlog: 1024,
    });
    assert.equal(listenOptions(0, '127.0.0.1', { maxConnections: 3 }).backlog, 3);
  });
});
