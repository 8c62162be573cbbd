/**
 * A Lease call to an API server that accepted the connection and never answers (as one frozen
 * under the operator): the call fails at its deadline, and its connection is closed then, not
 * held for undici's own five-minute timeouts.
 */
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeLeaseApi } from '../../../../operator/kube/leader-election.js';

describe('a Lease call to an API server that never answers', () => {
  it('fails at its deadline and closes its connection', async (t) => {
    const sockets: Socket[] = [];
    let closed = 0;
    const server = createServer((socket) => {
      sockets.push(socket);
      socket.on('close', () => closed++);
      socket.resume();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => {
      for (const socket of sockets) socket.destroy();
      server.close();
    });
    const { port } = server.address() as { port: number };
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'silent', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'c', cluster: 'silent', user: 'u' }],
      currentContext: 'c',
    });
    const leases = new KubeLeaseApi(kubeConfig, 'admission-system', 'admission-operator', 300);
    await assert.rejects(leases.get(), /Lease call timed out after 300 ms/);
    assert.equal(sockets.length, 1, 'one connection was opened');
    // The abort closes it: the server hears the end within moments, not minutes.
    for (let waited = 0; closed === 0 && waited < 2000; waited += 20)
      await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(closed, 1, 'the connection is closed once the call is given up');
  });
});
