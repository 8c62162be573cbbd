/**
 * SupervisedInformer's restart logic, against a scripted HTTP endpoint standing in for one
 * collection (a unit test of the backoff loop; the real API server is exercised by the
 * integration tests).
 */
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { setImmediate as turn } from 'node:timers/promises';
import {
  CoreV1Api,
  KubeConfig,
  type CoreV1Event,
  type V1Namespace,
  type V1Secret,
} from '@kubernetes/client-node';
import { pino } from 'pino';
import { withWallTime } from '../../../../operator/kube/clock.js';
import { EventRecorder } from '../../../../operator/kube/events.js';
import { watchSilenceHandler } from '../../../../operator/kube/operator-events.js';
import { SILENCE_BOUND_MS } from '../../../../operator/kube/reflector.js';
import { SupervisedInformer } from '../../../../operator/kube/supervised-informer.js';
import { loopbackKubeConfig } from '../../../harness/loopback-kubeconfig.js';

/** A list of one namespace, "listed", at resourceVersion 1. */
function answerListed(res: ServerResponse): void {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(
    JSON.stringify({
      kind: 'NamespaceList',
      apiVersion: 'v1',
      metadata: { resourceVersion: '1' },
      items: [{ metadata: { name: 'listed', resourceVersion: '1' } }],
    }),
  );
}

describe('SupervisedInformer', () => {
  let server: Server;
  let kubeConfig: KubeConfig;
  let listCalls = 0;
  const failLists = 2;

  before(async () => {
    server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (url.searchParams.get('watch') === 'true') {
        // An open watch that sends one event and stays connected.
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.write(
          `${JSON.stringify({ type: 'ADDED', object: { kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'watched', resourceVersion: '2' } } })}\n`,
        );
        return;
      }
      listCalls++;
      if (listCalls <= failLists) {
        res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end(
          JSON.stringify({ kind: 'Status', status: 'Failure', message: 'scripted failure', code: 500 }),
        );
        return;
      }
      answerListed(res);
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    kubeConfig = loopbackKubeConfig(server);
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  it('restarts a failed list with backoff until it syncs, then follows the watch', async () => {
    const core = kubeConfig.makeApiClient(CoreV1Api);
    const restarts: string[] = [];
    const informer = new SupervisedInformer<V1Namespace>(
      kubeConfig,
      { kind: 'namespaces', path: '/api/v1/namespaces', list: (bounded) => core.listNamespace({}, bounded) },
      pino({ level: 'silent' }),
      (kind) => restarts.push(kind),
    );
    const added: string[] = [];
    informer.on('add', (ns) => added.push(ns.metadata?.name ?? ''));
    await informer.start();
    assert.equal(informer.synced, true);
    assert.deepEqual(restarts, ['namespaces', 'namespaces']);
    assert.equal(listCalls, failLists + 1);
    assert.ok(informer.get('listed'));
    for (let i = 0; i < 50 && !added.includes('watched'); i++)
      await new Promise((done) => setTimeout(done, 20));
    assert.deepEqual(added, ['listed', 'watched']);
    await informer.stop();
  });
});

describe('SupervisedInformer, a list that never answers', () => {
  it('is aborted at its bound, its connection closed, and listed again until it syncs', async (t) => {
    // The first list gets its request read and no answer: a connection gone silent under it.
    let lists = 0;
    let hungClosed = false;
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (url.searchParams.get('watch') === 'true') {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.flushHeaders();
        return;
      }
      if (++lists === 1) {
        req.socket.once('close', () => (hungClosed = true));
        return;
      }
      answerListed(res);
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    t.after(() => {
      server.closeAllConnections();
      server.close();
    });
    const kubeConfig = loopbackKubeConfig(server);
    const core = kubeConfig.makeApiClient(CoreV1Api);
    const restarts: string[] = [];
    const informer = new SupervisedInformer<V1Namespace>(
      kubeConfig,
      {
        kind: 'namespaces',
        path: '/api/v1/namespaces',
        list: (bounded) => core.listNamespace({}, bounded),
        listTimeoutMs: 200,
      },
      pino({ level: 'silent' }),
      (kind) => restarts.push(kind),
    );
    await informer.start();
    assert.equal(informer.synced, true);
    assert.equal(lists, 2);
    assert.deepEqual(restarts, ['namespaces']);
    assert.ok(informer.get('listed'));
    assert.equal(hungClosed, true, 'the aborted list closed its connection');
    await informer.stop();
  });
});

describe('SupervisedInformer, a watch silent for the bound', () => {
  it('is replaced, counted and recorded as a WatchReplaced Event on the replica Pod, as the store does', async (t) => {
    // Watches that send nothing and stay open: a frozen connection, as far as the client can tell.
    const watches: URL[] = [];
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (url.searchParams.get('watch') === 'true') {
        watches.push(url);
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.flushHeaders();
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          kind: 'SecretList',
          apiVersion: 'v1',
          metadata: { resourceVersion: '7' },
          items: [{ metadata: { name: 'webhook-tls', namespace: 'ops', resourceVersion: '7' } }],
        }),
      );
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    t.after(() => {
      server.closeAllConnections();
      server.close();
    });
    const kubeConfig = loopbackKubeConfig(server);
    const core = kubeConfig.makeApiClient(CoreV1Api);
    const written: { namespace: string; event: CoreV1Event }[] = [];
    const events = new EventRecorder(undefined, pino({ level: 'silent' }), {
      clock: withWallTime(() => new Date(1_000_000)),
      write: (namespace, event) => {
        written.push({ namespace, event });
        return Promise.resolve();
      },
      lookupUid: () => Promise.resolve('pod-uid'),
    });
    const counted: string[] = [];
    const metrics = { watchReplacements: { inc: ({ kind }: { kind: string }) => counted.push(kind) } };
    // client-node's inactivity timer is a plain setTimeout: mocked, the bound passes at once.
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const informer = new SupervisedInformer<V1Secret>(
      kubeConfig,
      {
        kind: 'secrets',
        path: '/api/v1/namespaces/ops/secrets',
        list: (bounded) => core.listNamespacedSecret({ namespace: 'ops' }, bounded),
      },
      pino({ level: 'silent' }),
      undefined,
      undefined,
      watchSilenceHandler({ metrics, events, selfPod: { namespace: 'ops', name: 'operator-0' } }),
    );
    t.after(() => informer.stop());
    await informer.start();
    for (let i = 0; i < 500 && watches.length === 0; i++) await turn();
    assert.equal(watches.length, 1, 'the informer watches');
    assert.equal(watches[0]?.searchParams.get('allowWatchBookmarks'), 'true');

    t.mock.timers.tick(SILENCE_BOUND_MS);
    for (let i = 0; i < 500 && (watches.length < 2 || written.length === 0); i++) await turn();

    assert.equal(watches.length, 2, 'the silent watch is replaced');
    assert.equal(watches[1]?.searchParams.get('resourceVersion'), '7', 'resuming where it was');
    assert.deepEqual(counted, ['secrets']);
    assert.equal(written.length, 1);
    const [{ namespace, event } = { namespace: '', event: {} as CoreV1Event }] = written;
    assert.equal(namespace, 'ops');
    assert.equal(event.reason, 'WatchReplaced');
    assert.equal(event.type, 'Warning');
    assert.deepEqual(
      { kind: event.involvedObject.kind, name: event.involvedObject.name },
      { kind: 'Pod', name: 'operator-0' },
    );
    assert.match(
      event.message ?? '',
      new RegExp(
        `^The secrets watch heard nothing from the API server for ${SILENCE_BOUND_MS / 1000} s; replaced it`,
      ),
    );
  });
});
