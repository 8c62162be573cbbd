/**
 * What exact quota costs without caller verification: two replicas behind one address (as a
 * Deployment behind its Service), a burst of concurrent 500m pod creates through the API server
 * into a quota with room for six, with callers verified (the ledger and the forward to the leader
 * decide every reservation) and not (each admission sees only the usage the pod watch has seen,
 * as Koordinator's own webhook does). Printed, never asserted: how far the burst overshoots is
 * the trade-off docs/security.md states.
 */
import type { TestContext } from 'node:test';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { TcpBalancer } from '../harness/balancer.js';
import { clusterKubeConfig, installCrds, kubectl, waitFor } from '../harness/cluster.js';
import { deleteConfigurations, startOperator, waitForPublishedSecret } from '../harness/operator.js';
import { Replicas } from '../harness/replicas.js';
import { inform } from './report.js';

const QUOTA_LABEL = 'quota.scheduling.koordinator.sh/name';
const BURST = 12;
const FITS = 6;

async function burstOnce(verifyCallers: boolean, suffix: string): Promise<number> {
  const afters: (() => Promise<unknown> | undefined)[] = [];
  const t = { after: (fn: () => Promise<unknown> | undefined) => afters.push(fn) } as unknown as TestContext;
  const core = (await clusterKubeConfig()).makeApiClient(CoreV1Api);
  const namespace = `bench-burst-op-${suffix}`;
  const workload = `bench-burst-${suffix}`;
  for (const name of [namespace, workload]) await core.createNamespace({ body: { metadata: { name } } });
  const balancer = new TcpBalancer();
  await balancer.listen();
  const replicas = new Replicas(balancer, (start) => startOperator(t, start), { namespace, verifyCallers });
  try {
    await deleteConfigurations();
    await replicas.add();
    await waitForPublishedSecret(namespace, 30_000);
    await replicas.add();
    for (const replica of replicas.members) await replicas.inService(replica);
    await waitFor('the default ServiceAccount', () =>
      core.readNamespacedServiceAccount({ namespace: workload, name: 'default' }),
    );
    await kubectl(
      ['apply', '-f', '-'],
      `apiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: ElasticQuota\nmetadata: {name: burst, namespace: ${workload}}\nspec: {min: {cpu: "0"}, max: {cpu: "3"}}\n`,
    );
    const pod: V1Pod = {
      metadata: { generateName: 'burst-', labels: { [QUOTA_LABEL]: 'burst' } },
      spec: {
        containers: [
          { name: 'main', image: 'registry.invalid/app:1', resources: { requests: { cpu: '500m' } } },
        ],
      },
    };
    // Both replicas know the quota: dry runs through each are admitted (and reserve nothing).
    for (let i = 0; i < 4; i++)
      await waitFor('the replicas to know the quota', () =>
        core.createNamespacedPod({ namespace: workload, body: pod, dryRun: 'All' }),
      );
    const results = await Promise.allSettled(
      Array.from({ length: BURST }, () => core.createNamespacedPod({ namespace: workload, body: pod })),
    );
    return results.filter((result) => result.status === 'fulfilled').length;
  } finally {
    await Promise.all(replicas.members.map((replica) => replica.stop('SIGKILL')));
    await deleteConfigurations();
    await balancer.close();
    for (const after of afters) await after();
    for (const name of [workload, namespace]) await core.deleteNamespace({ name }).catch(() => undefined);
  }
}

export async function benchQuotaBurst(rounds: number): Promise<void> {
  await installCrds('elasticquotas.scheduling.sigs.k8s.io');
  for (const verifyCallers of [true, false]) {
    const admitted: number[] = [];
    for (let round = 0; round < rounds; round++) {
      admitted.push(
        await burstOnce(verifyCallers, `${verifyCallers ? 'v' : 'u'}${round}-${Date.now().toString(36)}`),
      );
    }
    const mode = verifyCallers ? 'verified (ledger + leader)' : 'unverified (watched usage only)';
    inform(
      `quota burst, 2 replicas, ${mode}: admitted of ${BURST} (fit ${FITS}), worst of ${rounds}`,
      Math.max(...admitted),
      'pods',
    );
    inform(
      `quota burst, 2 replicas, ${mode}: admitted, median of ${rounds}`,
      admitted.sort((a, b) => a - b)[Math.floor(rounds / 2)] ?? 0,
      'pods',
    );
  }
}
