/**
 * More objects of a typed kind than one list page holds, for the tests of paging: plain pods in a
 * namespace, and Node objects (no kubelet behind them) under a label of the test's, deleted with it.
 */
import type { TestContext } from 'node:test';
import { clusterKubeConfig, uniqueSuffix } from './cluster.js';
import { apiClient, inPool } from './scale-objects.js';

const CONCURRENCY = 16;

/** Creates plain pods `${prefix}0000`, `${prefix}0001`… in `namespace` (names sort in creation order). */
export async function createPlainPods(namespace: string, prefix: string, count: number): Promise<string[]> {
  const names = Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(4, '0')}`);
  const client = await apiClient(await clusterKubeConfig());
  try {
    await inPool(count, CONCURRENCY, (i) =>
      client.create(`/api/v1/namespaces/${namespace}/pods`, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: names[i] },
        spec: { containers: [{ name: 'main', image: 'registry.invalid/app:1' }] },
      }),
    );
  } finally {
    client.close();
  }
  return names;
}

/** Creates `count` Node objects labelled `label=<value>`, deleted when the test ends; returns the selector. */
export async function createLabelledNodes(t: TestContext, label: string, count: number): Promise<string> {
  const value = uniqueSuffix();
  const selector = `${label}=${value}`;
  const client = await apiClient(await clusterKubeConfig());
  t.after(async () => {
    await client.delete(`/api/v1/nodes?labelSelector=${encodeURIComponent(selector)}`);
    client.close();
  });
  await inPool(count, CONCURRENCY, (i) =>
    client.create('/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: `pages-${value}-${String(i).padStart(3, '0')}`, labels: { [label]: value } },
    }),
  );
  return selector;
}
