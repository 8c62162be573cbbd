/**
 * SupervisedInformer's restart logic, against a scripted HTTP endpoint standing in for one
 * collection (a unit test of the backoff loop; the real API server is exercised by the
 * integration tests).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, KubeConfig, type V1Namespace } from '@kubernetes/client-node';
import { pino } from 'pino';
import { SupervisedInformer } from '../../../../operator/kube/supervised-informer.js';

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
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          kind: 'NamespaceList',
          apiVersion: 'v1',
          metadata: { resourceVersion: '1' },
          items: [{ metadata: { name: 'listed', resourceVersion: '1' } }],
        }),
      );
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as AddressInfo;
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
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
      { kind: 'namespaces', path: '/api/v1/namespaces', list: () => core.listNamespace() },
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
