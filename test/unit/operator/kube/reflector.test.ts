/**
 * The Reflector's list and watch protocol, against a scripted HTTP endpoint standing in for one
 * collection (a unit test of the loop: streaming list, paged fallback, resume, relist on 410 and
 * backoff; the real API server is exercised by the integration tests and the scale bench).
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterEach, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import type { JsonObject } from '../../../../webhook/admission/types.js';
import {
  Reflector,
  SILENCE_BOUND_MS,
  WATCH_SECONDS,
  type ReflectorOptions,
  type ReflectorSink,
} from '../../../../operator/kube/reflector.js';
import { FakeClock } from '../../../harness/fake-clock.js';
import { loopbackKubeConfig } from '../../../harness/loopback-kubeconfig.js';

type Handler = (url: URL, res: ServerResponse, req: IncomingMessage) => void;

const ns = (name: string, resourceVersion: string): JsonObject => ({
  kind: 'Namespace',
  apiVersion: 'v1',
  metadata: { name, resourceVersion },
});
const event = (type: string, object: JsonObject): string => `${JSON.stringify({ type, object })}\n`;
const endOfList = (resourceVersion: string): string =>
  event('BOOKMARK', {
    kind: 'Namespace',
    metadata: { resourceVersion, annotations: { 'k8s.io/initial-events-end': 'true' } },
  });
const status = (res: ServerResponse, code: number, message: string): void => {
  res.writeHead(code, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ kind: 'Status', status: 'Failure', message, code }));
};

/** A sink that records what it was told, as the names of the objects. */
class RecordingSink implements ReflectorSink {
  readonly log: string[] = [];
  readonly present = new Set<string>();
  private seen = new Set<string>();
  listing(): void {
    this.log.push('listing');
    this.seen = new Set();
  }
  put(object: JsonObject): void {
    const name = (object.metadata as { name: string }).name;
    this.log.push(`put ${name}`);
    this.present.add(name);
    this.seen.add(name);
  }
  remove(object: JsonObject): void {
    const name = (object.metadata as { name: string }).name;
    this.log.push(`remove ${name}`);
    this.present.delete(name);
  }
  listed(): void {
    this.log.push('listed');
    for (const name of this.present) if (!this.seen.has(name)) this.present.delete(name);
  }
}

let server: Server | undefined;
let reflector: Reflector | undefined;

async function serve(handler: Handler): Promise<KubeConfig> {
  server = createServer((req, res) => {
    handler(new URL(req.url ?? '/', 'http://localhost'), res, req);
  });
  await new Promise<void>((done) => server!.listen(0, '127.0.0.1', done));
  return loopbackKubeConfig(server);
}

async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await new Promise((done) => setTimeout(done, 10));
  }
  assert.fail(`timed out waiting for ${what}`);
}

/** A Reflector of namespaces on `kubeConfig`, stopped after the test. */
function namespacesInto(
  sink: ReflectorSink,
  kubeConfig: KubeConfig,
  options: ReflectorOptions = {},
): Reflector {
  reflector = new Reflector(
    kubeConfig,
    { kind: 'namespaces', path: '/api/v1/namespaces' },
    sink,
    pino({ level: 'silent' }),
    options,
  );
  return reflector;
}

/** A Reflector of namespaces started on a fake clock, recording its restarts. */
function startedOnFakeClock(kubeConfig: KubeConfig): { clock: FakeClock; restarts: string[] } {
  const clock = new FakeClock();
  const restarts: string[] = [];
  void namespacesInto(new RecordingSink(), kubeConfig, {
    clock,
    onRestart: (kind) => restarts.push(kind),
  }).start();
  return { clock, restarts };
}

afterEach(async () => {
  await reflector?.stop();
  reflector = undefined;
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

describe('Reflector', () => {
  it('lists by streaming, then follows the same stream as the watch', async () => {
    const requests: string[] = [];
    const kubeConfig = await serve((url, res) => {
      requests.push(url.search);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(event('ADDED', ns('a', '5')) + event('ADDED', ns('b', '3')) + endOfList('9'));
      res.write(event('MODIFIED', ns('a', '10')) + event('DELETED', ns('b', '11')));
    });
    const sink = new RecordingSink();
    const started = namespacesInto(sink, kubeConfig);
    await started.start();
    assert.equal(started.synced, true);
    await until('the watched events', () => sink.log.length === 6);
    assert.deepEqual(sink.log, ['listing', 'put a', 'put b', 'listed', 'put a', 'remove b']);
    assert.deepEqual([...sink.present], ['a']);
    const query = new URLSearchParams(requests[0]);
    assert.equal(query.get('sendInitialEvents'), 'true');
    assert.equal(query.get('resourceVersionMatch'), 'NotOlderThan');
    assert.equal(query.get('allowWatchBookmarks'), 'true');
    // The server ends the watch within a minute, bookmarks or not: silence past the bound means a dead connection.
    const seconds = Number(query.get('timeoutSeconds'));
    assert.ok(seconds >= WATCH_SECONDS.min && seconds < WATCH_SECONDS.max, `${seconds} s`);
    assert.ok(seconds * 1000 < SILENCE_BOUND_MS);
  });

  it('lists in pages where the server refuses streaming lists, then watches from the list', async () => {
    const watches: (string | null)[] = [];
    const pages: (string | null)[] = [];
    const kubeConfig = await serve((url, res) => {
      if (url.searchParams.get('sendInitialEvents') === 'true') {
        status(
          res,
          422,
          'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
        );
        return;
      }
      if (url.searchParams.get('watch') === '1') {
        watches.push(url.searchParams.get('resourceVersion'));
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.write(event('ADDED', ns('c', '21')));
        return;
      }
      pages.push(url.searchParams.get('continue'));
      res.writeHead(200, { 'Content-Type': 'application/json' });
      const first = url.searchParams.get('continue') === null;
      res.end(
        JSON.stringify({
          kind: 'NamespaceList',
          metadata: first ? { resourceVersion: '20', continue: 'page-2' } : { resourceVersion: '20' },
          items: [first ? ns('a', '1') : ns('b', '2')],
        }),
      );
    });
    const sink = new RecordingSink();
    const started = namespacesInto(sink, kubeConfig, {
      pageSize: 1,
    });
    await started.start();
    await until('the watched event', () => sink.log.includes('put c'));
    assert.deepEqual(pages, [null, 'page-2']);
    assert.deepEqual(watches, ['20']);
    assert.deepEqual(sink.log, ['listing', 'put a', 'put b', 'listed', 'put c']);
  });

  it('resumes an ended watch from the last version seen, and relists on 410 Gone', async () => {
    const calls: string[] = [];
    let streams = 0;
    const kubeConfig = await serve((url, res) => {
      const initial = url.searchParams.get('sendInitialEvents') === 'true';
      calls.push(initial ? 'stream' : `watch@${url.searchParams.get('resourceVersion')}`);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      if (initial && streams++ === 0) {
        // The first list, then the server ends the watch (its timeoutSeconds).
        res.end(
          event('ADDED', ns('a', '1')) +
            event('ADDED', ns('b', '2')) +
            endOfList('5') +
            event('ADDED', ns('c', '6')),
        );
      } else if (initial) {
        // The relist: b is gone meanwhile.
        res.write(event('ADDED', ns('a', '1')) + event('ADDED', ns('c', '6')) + endOfList('30'));
      } else {
        res.end(
          event('ERROR', {
            kind: 'Status',
            code: 410,
            reason: 'Expired',
            message: 'too old resource version: 6 (25)',
          }),
        );
      }
    });
    const sink = new RecordingSink();
    const started = namespacesInto(sink, kubeConfig);
    await started.start();
    await until('the relist', () => sink.log.filter((line) => line === 'listed').length === 2);
    assert.deepEqual(calls, ['stream', 'watch@6', 'stream']);
    assert.deepEqual([...sink.present].sort(), ['a', 'c']);
  });

  it('backs off from watches that the server ends at once, instead of reconnecting in a busy loop', async () => {
    let watches = 0;
    const kubeConfig = await serve((url, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      if (url.searchParams.get('sendInitialEvents') === 'true') {
        res.end(event('ADDED', ns('a', '1')) + endOfList('2'));
        return;
      }
      watches++;
      res.end();
    });
    const restarts: string[] = [];
    const started = namespacesInto(new RecordingSink(), kubeConfig, {
      onRestart: (kind) => restarts.push(kind),
    });
    await started.start();
    await until('two restarts', () => restarts.length >= 2);
    await new Promise((done) => setTimeout(done, 300));
    // Backoff doubles from 200 ms: a busy loop would have made thousands of requests by now.
    assert.ok(watches <= 5, `${watches} watches`);
  });

  it('waits out its backoff on the clock it is given, not on the system timers', async () => {
    let requests = 0;
    const kubeConfig = await serve((_url, res) => {
      requests++;
      status(res, 500, 'scripted failure');
    });
    const { clock, restarts } = startedOnFakeClock(kubeConfig);
    await until('the first failure', () => restarts.length === 1);
    // Longer than the first backoff (200 ms): a reflector on the system timers would have retried.
    await new Promise((done) => setTimeout(done, 500));
    assert.equal(requests, 1);
    await clock.advance(199);
    await new Promise((done) => setTimeout(done, 100));
    assert.equal(requests, 1);
    await clock.advance(1);
    await until('the retry', () => restarts.length === 2);
    assert.equal(requests, 2);
  });

  it('replaces a watch that hears nothing for the silence bound, resuming from the last version', async () => {
    const calls: string[] = [];
    const open: ServerResponse[] = [];
    const kubeConfig = await serve((url, res) => {
      const initial = url.searchParams.get('sendInitialEvents') === 'true';
      calls.push(initial ? 'stream' : `watch@${url.searchParams.get('resourceVersion')}`);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      // The connection then goes quiet without closing: a half-open connection.
      res.write(initial ? event('ADDED', ns('a', '1')) + endOfList('5') : event('ADDED', ns('b', '7')));
      open.push(res);
    });
    const clock = new FakeClock();
    const silent: string[] = [];
    const sink = new RecordingSink();
    const started = namespacesInto(sink, kubeConfig, {
      clock,
      onSilent: (kind, ms) => silent.push(`${kind} ${ms}`),
    });
    await started.start();
    await clock.advance(SILENCE_BOUND_MS - 1);
    await new Promise((done) => setTimeout(done, 50));
    assert.deepEqual(calls, ['stream']);
    assert.equal(started.silentFor(), SILENCE_BOUND_MS - 1);
    await clock.advance(1);
    await until('the replacement', () => calls.length === 2);
    assert.deepEqual(calls, ['stream', 'watch@5']);
    assert.deepEqual(silent, [`namespaces ${SILENCE_BOUND_MS}`]);
    await until('the resumed event', () => sink.present.has('b'));
    assert.deepEqual(started.stats, { silent: 1, lists: 1, resumes: 1 });
    assert.ok(open[0]?.destroyed || open[0]?.writableEnded || open[0]?.closed, 'the silent watch is closed');
  });

  it('takes bookmarks as proof of life, and tells when the collection was last known current', async () => {
    let watch: ServerResponse | undefined;
    let requests = 0;
    const kubeConfig = await serve((_url, res) => {
      requests++;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(event('ADDED', ns('a', '1')) + endOfList('5'));
      watch = res;
    });
    const clock = new FakeClock();
    const current: number[] = [];
    const start = clock.monotonic();
    const started = namespacesInto(new RecordingSink(), kubeConfig, {
      clock,
      onCurrent: (_kind, at) => current.push(at - start),
    });
    await started.start();
    for (const step of [1, 2, 3]) {
      await clock.advance(60_000);
      watch?.write(event('BOOKMARK', { kind: 'Namespace', metadata: { resourceVersion: String(5 + step) } }));
      await until(`bookmark ${step}`, () => current.length === step + 1);
    }
    // 180 s without an object, never silent for the bound: the one watch still stands.
    assert.equal(requests, 1);
    assert.deepEqual(current, [0, 60_000, 120_000, 180_000]);
    assert.equal(started.silentFor(), 0);
  });

  it('replaces a request whose answer never begins', async () => {
    let requests = 0;
    const kubeConfig = await serve(() => {
      // Headers never come (a connection frozen under the request).
      requests++;
    });
    const clock = new FakeClock();
    const silent: string[] = [];
    const started = namespacesInto(new RecordingSink(), kubeConfig, {
      clock,
      onSilent: (kind) => silent.push(kind),
    });
    void started.start();
    await until('the first request', () => requests === 1);
    await clock.advance(SILENCE_BOUND_MS);
    await until('the second request', () => requests === 2);
    assert.deepEqual(silent, ['namespaces']);
    assert.equal(started.silentFor(), undefined);
  });

  it('retries an API server that refuses connections every 3 s at most, not on the 30 s backoff', async () => {
    const kubeConfig = await serve(() => undefined);
    // Nothing listens there any more: every connection is refused.
    await new Promise<void>((done) => {
      server?.close(() => {
        done();
      });
    });
    server = undefined;
    const { clock, restarts } = startedOnFakeClock(kubeConfig);
    await until('the first refusal', () => restarts.length === 1);
    // 200, 400, 800, 1600 ms, then 3 s each time, though the backoff has grown past it.
    for (const [i, wait] of [200, 400, 800, 1600, 3000, 3000, 3000].entries()) {
      await clock.advance(wait - 1);
      await new Promise((done) => setTimeout(done, 20));
      assert.equal(restarts.length, i + 1, `no retry before ${wait} ms`);
      await clock.advance(1);
      await until(`retry ${i + 1}`, () => restarts.length === i + 2);
    }
  });

  it('counts an absent optional kind as synced and empty', async () => {
    const kubeConfig = await serve((_url, res) => {
      status(res, 404, 'the server could not find the requested resource');
    });
    const sink = new RecordingSink();
    const optional = new Reflector(
      kubeConfig,
      { kind: 'elasticquotas', path: '/apis/scheduling.sigs.k8s.io/v1alpha1/elasticquotas', optional: true },
      sink,
      pino({ level: 'silent' }),
    );
    reflector = optional;
    await optional.start();
    assert.equal(optional.synced, true);
    assert.deepEqual(sink.log, ['listing', 'listed']);
  });

  it('reports an optional kind absent, then installed once its CRD appears, and lists it then', async () => {
    let installed = false;
    const kubeConfig = await serve((_url, res) => {
      if (!installed) {
        status(res, 404, 'the server could not find the requested resource');
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(event('ADDED', ns('team-a', '1')) + endOfList('2'));
    });
    const sink = new RecordingSink();
    const clock = new FakeClock();
    const changes: string[] = [];
    reflector = new Reflector(
      kubeConfig,
      { kind: 'elasticquotas', path: '/apis/scheduling.sigs.k8s.io/v1alpha1/elasticquotas', optional: true },
      sink,
      pino({ level: 'silent' }),
      { clock, onInstalled: (kind, now) => changes.push(`${kind} ${String(now)}`) },
    );
    await reflector.start();
    assert.deepEqual(changes, ['elasticquotas false']);
    // Still absent at the next check: no change to report.
    await clock.advance(5_000);
    await new Promise((done) => setTimeout(done, 50));
    assert.deepEqual(changes, ['elasticquotas false']);
    installed = true;
    await clock.advance(5_000);
    await until('the kind to be listed', () => sink.present.has('team-a'));
    assert.deepEqual(changes, ['elasticquotas false', 'elasticquotas true']);
  });

  it('retries a failing list with backoff, counting each restart, until it lists', async () => {
    let failures = 2;
    const kubeConfig = await serve((_url, res) => {
      if (failures-- > 0) {
        status(res, 500, 'scripted failure');
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(event('ADDED', ns('a', '1')) + endOfList('2'));
    });
    const restarts: string[] = [];
    const sink = new RecordingSink();
    const started = namespacesInto(sink, kubeConfig, {
      onRestart: (kind) => restarts.push(kind),
    });
    await started.start();
    assert.deepEqual(restarts, ['namespaces', 'namespaces']);
    assert.deepEqual([...sink.present], ['a']);
  });
});
