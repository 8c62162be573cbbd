/**
 * What the admission server does when a call does not go as a review should, on a real TLS
 * socket against the real server code: a body declared or grown past the limit is refused from
 * what is known at once (never after reading it), the connection is then closed after a bounded
 * drain, and a caller that hangs up, or an API server that gives up, is counted apart from the
 * server's own errors.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TLSSocket } from 'node:tls';
import { allow } from '../../../../webhook/admission/decisions.js';
import type { AdmissionHttpsServer } from '../../../../webhook/server/https-server.js';
import type { AdmissionMetrics } from '../../../../webhook/metrics/admission-metrics.js';
import { MAX_BODY_BYTES } from '../../../../webhook/server/read-body.js';
import { startAllowingServer } from '../../../harness/allowing-server.js';
import { closed, openTls, postHead, readResponse, written } from '../../../harness/raw-tls.js';
import { admissionRequest, reviewBody } from '../../../harness/requests.js';

const TIB = 1024 ** 4;
const MIB = 1024 * 1024;

interface LogLine {
  level: number;
  msg: string;
  err?: unknown;
  stage?: string;
  uid?: string;
}

describe('answers before the body, and calls that end early', () => {
  let server: AdmissionHttpsServer;
  let port = 0;
  let ca = '';
  /** The API server's client certificate: the server answers only it, as with verification on. */
  let apiServer: { cert: string; key: string };
  let metrics: AdmissionMetrics;
  const lines: string[] = [];
  /** Forwards of quota-reserving reviews wait here until a test answers them. */
  const forwards: { uid: string; answer: (body: Buffer) => void }[] = [];

  before(async () => {
    ({ server, port, ca, apiServer, metrics } = await startAllowingServer(undefined, {
      verifyCallers: true,
      log: (line) => void lines.push(line),
      // A review whose uid starts with "forward-" reserves quota, so it waits for the leader.
      handler: (request) =>
        request.uid.startsWith('forward-')
          ? { ...allow(), reserve: { key: request.uid, quota: 'q', requests: new Map() } }
          : allow(),
      forward: (_path, _body, uid) =>
        new Promise<Buffer>((answer) => {
          forwards.push({ uid, answer });
        }),
    }));
  });
  after(async () => {
    await server.close(100);
  });

  const logged = (): LogLine[] => lines.map((line) => JSON.parse(line) as LogLine);
  const counter = async (name: string): Promise<string> => metrics.registry.getSingleMetricAsString(name);
  /** Waits (the test's own time-out being the bound) until `check` holds. */
  const until = async (check: () => Promise<boolean> | boolean): Promise<void> => {
    while (!(await check())) await new Promise((resolveTimer) => setTimeout(resolveTimer, 10));
  };

  /** Sends `head` and `body` and reads the answer, noting how much of the body had been sent by then. */
  const refusedWhileSending = async (
    head: string,
    body: Buffer,
    client: { cert: string; key: string } | null = apiServer,
  ): Promise<{ socket: TLSSocket; status: number; connection: string; status_: Record<string, unknown> }> => {
    const socket = await openTls(port, ca, client ?? undefined);
    const answer = readResponse(socket);
    await written(socket, head);
    if (body.length > 0) await written(socket, body);
    const response = await answer;
    return {
      socket,
      status: response.status,
      connection: response.headers.connection ?? '',
      status_: JSON.parse(response.body) as Record<string, unknown>,
    };
  };

  it('answers a body declared at 1 TiB with 413 from its headers, before the body is sent, then closes', async () => {
    const start = Buffer.from('{"apiVersion":"admission.k8s.io/v1",');
    const refused = await refusedWhileSending(postHead('/validate-pod', { 'Content-Length': TIB }), start);
    // Only `start` (37 bytes of the 1 TiB declared) has been sent when the answer is read.
    assert.equal(refused.status, 413);
    assert.equal(refused.connection, 'close');
    assert.deepEqual(refused.status_, {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      code: 413,
      message: `request body of ${TIB} bytes exceeds the ${MAX_BODY_BYTES}-byte limit`,
    });
    // The server closes the connection itself, without the rest of the body.
    await closed(refused.socket);
  });

  it('answers a caller that is not the API server 401 from its headers, reading none of its body', async () => {
    const start = Buffer.from('{"apiVersion":"admission.k8s.io/v1",');
    const refused = await refusedWhileSending(
      postHead('/validate-pod', { 'Content-Length': TIB }),
      start,
      null,
    );
    assert.equal(refused.status, 401);
    assert.equal(refused.connection, 'close');
    assert.deepEqual(refused.status_, {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      code: 401,
      message:
        'the admission server answers only the API server, verified by its client certificate or token',
    });
    await closed(refused.socket);
  });

  it('answers 7 MiB + 10 declared, with nothing of the body sent, with 413', async () => {
    const refused = await refusedWhileSending(
      postHead('/validate-pod', { 'Content-Length': MAX_BODY_BYTES + 10 }),
      Buffer.alloc(0),
    );
    assert.equal(refused.status, 413);
    assert.equal(refused.connection, 'close');
    assert.equal(refused.status_.code, 413);
    assert.match(
      String(refused.status_.message),
      /request body of 7340042 bytes exceeds the 7340032-byte limit/,
    );
    await closed(refused.socket);
  });

  it('refuses a chunked body as soon as it grows past 7 MiB, without waiting for its end', async () => {
    const socket = await openTls(port, ca, apiServer);
    const answer = readResponse(socket);
    await written(socket, postHead('/validate-pod', { 'Transfer-Encoding': 'chunked' }));
    // 8 MiB in 1 MiB chunks, and never the last (empty) chunk that would end the body.
    for (let sent = 0; sent < 8 * MIB && !socket.closed; sent += MIB)
      await written(
        socket,
        Buffer.concat([Buffer.from(`${MIB.toString(16)}\r\n`), Buffer.alloc(MIB, 0x20), Buffer.from('\r\n')]),
      );
    const response = await answer;
    assert.equal(response.status, 413);
    assert.equal(response.headers.connection, 'close');
    assert.match(response.body, /"message":"request body exceeds the 7340032-byte limit"/);
    await closed(socket);
  });

  it('reads at most a bounded part of a refused body: a sender of 256 MiB is cut off long before it is done', async () => {
    const socket = await openTls(port, ca, apiServer);
    const answer = readResponse(socket);
    await written(socket, postHead('/validate-pod', { 'Content-Length': TIB }));
    const piece = Buffer.alloc(MIB, 0x20);
    let accepted = 0;
    // Each write waits until the kernel took the previous one: once the server stops reading,
    // its buffers and ours fill, and only the close ends the wait.
    while (!socket.closed && accepted < 256 * MIB) {
      await Promise.race([written(socket, piece), closed(socket)]);
      accepted += piece.length;
    }
    assert.equal((await answer).status, 413);
    assert.equal(socket.closed, true, `the server read all of ${accepted} bytes instead of closing`);
    assert.ok(accepted < 256 * MIB);
  });

  it('answers a wrong Content-Type at once, while the body is still to come, and closes', async () => {
    const socket = await openTls(port, ca, apiServer);
    const answer = readResponse(socket);
    await written(
      socket,
      postHead('/validate-pod', { 'Content-Type': 'text/plain', 'Content-Length': 5 * MIB }),
    );
    const response = await answer;
    assert.equal(response.status, 415);
    assert.equal(response.headers.connection, 'close');
    await closed(socket);
  });

  it('keeps the connection of a refused review that arrived whole', async () => {
    const socket = await openTls(port, ca, apiServer);
    const body = '{"kind":"AdmissionReview"}';
    let answer = readResponse(socket);
    await written(socket, postHead('/validate-pod', { 'Content-Length': body.length }) + body);
    const first = await answer;
    assert.equal(first.status, 400);
    assert.equal(first.headers.connection, 'keep-alive');
    answer = readResponse(socket);
    await written(socket, 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
    assert.equal((await answer).status, 200);
    socket.destroy();
  });

  it('counts 200 callers hanging up mid-body apart, logs them at debug without a stack, and never as a 500', async () => {
    const before = logged().length;
    const review = reviewBody(
      admissionRequest({ kind: 'Pod', resource: 'pods', namespace: 'ns', name: 'p' }),
    );
    for (let call = 0; call < 200; call++) {
      const socket = await openTls(port, ca, apiServer);
      await written(
        socket,
        postHead('/validate-pod', { 'Content-Length': review.length }) + review.slice(0, review.length / 2),
      );
      socket.destroy();
      await closed(socket);
    }
    await until(async () => /stage="body"\} 200$/m.test(await counter('admission_requests_aborted_total')));
    assert.match(
      await counter('admission_requests_aborted_total'),
      /admission_requests_aborted_total\{webhook="allow\.test\.io",stage="body"\} 200$/m,
    );
    assert.doesNotMatch(await counter('admission_bad_requests_total'), /status="5\d\d"/);
    const since = logged().slice(before);
    assert.deepEqual(
      since.filter((line) => line.level >= 40),
      [],
      'no warning or error line',
    );
    assert.equal(
      since.filter((line) => line.err !== undefined).length,
      0,
      'no line carries an error or stack',
    );
    const aborted = since.filter(
      (line) => line.msg === 'the connection closed while the review was being read',
    );
    assert.equal(aborted.length, 200);
    assert.ok(aborted.every((line) => line.level === 20 && line.stage === 'body'));
  });

  it('counts a review whose connection closed before the answer was written (the API server gave up) under stage answer', async () => {
    const before = logged().length;
    const socket = await openTls(port, ca, apiServer);
    const review = reviewBody({
      ...admissionRequest({
        kind: 'Pod',
        resource: 'pods',
        namespace: 'ns',
        name: 'late',
        object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'late', namespace: 'ns' } },
      }),
      uid: 'forward-late',
    });
    await written(socket, postHead('/validate-pod', { 'Content-Length': review.length }) + review);
    await until(() => forwards.some((forward) => forward.uid === 'forward-late'));
    socket.destroy();
    await until(async () => /stage="answer"\} 1$/m.test(await counter('admission_requests_aborted_total')));
    // The leader's answer comes after the caller left: there is nobody to write it to.
    forwards.find((forward) => forward.uid === 'forward-late')?.answer(Buffer.from('{}'));
    const line = logged()
      .slice(before)
      .find((entry) => entry.msg === 'the connection closed before the answer was written');
    assert.equal(line?.level, 30);
    assert.equal(line.uid, 'forward-late');
    assert.equal(line.stage, 'answer');
    assert.doesNotMatch(await counter('admission_bad_requests_total'), /status="5\d\d"/);
    assert.deepEqual(
      logged().filter((entry) => entry.level >= 40),
      [],
    );
  });
});
