/**
 * The drain before a stop, on a real TLS socket: once draining, reviews are still answered but
 * each connection is closed after its answer, so a client that keeps connections alive dials
 * again (and a balancer sends it elsewhere); close() then refuses new connections while a
 * request already being read is finished.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect, type TLSSocket } from 'node:tls';
import type { AdmissionHttpsServer } from '../../../../webhook/server/https-server.js';
import { startAllowingServer } from '../../../harness/allowing-server.js';

const REVIEW = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: 'drain-1',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    operation: 'CREATE',
    namespace: 'default',
    name: 'p',
    userInfo: { username: 'tester' },
    object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' }, spec: {} },
  },
});

const post = (keepAlive: boolean): string =>
  'POST /validate-pod HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
  `Content-Length: ${Buffer.byteLength(REVIEW)}\r\n${keepAlive ? '' : 'Connection: close\r\n'}\r\n${REVIEW}`;

describe('admission server drain', () => {
  let server: AdmissionHttpsServer;
  let port = 0;
  let ca = '';

  before(async () => {
    ({ server, port, ca } = await startAllowingServer());
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

  /** Resolves with what arrived once `pattern` has arrived, or once the socket closed. */
  const received = (socket: TLSSocket, pattern: RegExp): Promise<{ text: string; closed: boolean }> =>
    new Promise((resolvePromise) => {
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        text += chunk;
        if (pattern.test(text)) resolvePromise({ text, closed: false });
      });
      socket.on('error', () => undefined);
      socket.once('close', () => {
        resolvePromise({ text, closed: true });
      });
    });

  const closedSocket = (socket: TLSSocket): Promise<void> =>
    new Promise((resolvePromise) => {
      if (socket.closed) resolvePromise();
      else
        socket.once('close', () => {
          resolvePromise();
        });
    });

  it('keeps answering while draining, each answer closing its connection, then finishes what is in flight', async () => {
    // Before the drain: a keep-alive connection stays open after its answer.
    const kept = await open();
    const first = received(kept, /"uid":"drain-1"/);
    kept.write(post(true));
    const before = await first;
    assert.match(before.text, /^HTTP\/1\.1 200/);
    assert.match(before.text, /Connection: keep-alive/i);
    assert.equal(before.closed, false);

    server.drain();
    assert.equal(server.isDraining, true);
    // The same kept-alive connection is still answered, and closed after the answer.
    const during = received(kept, /$^/);
    kept.write(post(true));
    const answer = await during;
    assert.match(answer.text, /^HTTP\/1\.1 200/);
    assert.match(answer.text, /Connection: close/i);
    assert.match(answer.text, /"allowed":true/);
    assert.equal(answer.closed, true);

    // A request whose body is still arriving when the server closes is answered.
    const slow = await open();
    const slowAnswer = received(slow, /$^/);
    const request = post(false);
    slow.write(request.slice(0, request.length - 10));
    await new Promise((resolveTimer) => setTimeout(resolveTimer, 50));
    const closing = server.close(5000);
    // New connections are refused once close() has run.
    await assert.rejects(open());
    slow.write(request.slice(request.length - 10));
    const finished = await slowAnswer;
    assert.match(finished.text, /^HTTP\/1\.1 200/);
    assert.match(finished.text, /"allowed":true/);
    await closing;
    await closedSocket(slow);
  });
});

describe('admission server close with connections that never carried a request', () => {
  it('closes a connection that has sent nothing once it has been unused for a while, instead of waiting out the grace', async () => {
    const { server, port, ca } = await startAllowingServer({
      requestTimeoutMs: 30_000,
      maxConnections: 16,
      unusedConnectionIdleMs: 200,
    });
    // Like a connection a Go client dialled and then kept unused in its pool: handshake, then nothing.
    const socket = await new Promise<TLSSocket>((resolvePromise, reject) => {
      const opened = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => {
        resolvePromise(opened);
      });
      opened.once('error', reject);
    });
    socket.on('error', () => undefined);
    const socketClosed = new Promise<void>((resolvePromise) => {
      socket.once('close', () => {
        resolvePromise();
      });
    });
    // Node counts this connection as busy until its headers time-out (30 s here), so close() alone
    // would wait for the whole grace (60 s here).
    const outcome = await Promise.race([
      server.close(60_000).then(() => 'closed' as const),
      new Promise<'grace'>((resolveTimer) =>
        setTimeout(() => {
          resolveTimer('grace');
        }, 20_000).unref(),
      ),
    ]);
    assert.equal(outcome, 'closed');
    await socketClosed;
  });
});
