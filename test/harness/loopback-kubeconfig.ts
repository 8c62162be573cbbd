/** A kubeconfig for a plain-HTTP test server listening on the loopback (unit tests of the watches). */
import { KubeConfig } from '@kubernetes/client-node';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export function loopbackKubeConfig(server: Server): KubeConfig {
  const { port } = server.address() as AddressInfo;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kubeConfig;
}
