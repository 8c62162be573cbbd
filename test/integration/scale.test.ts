/**
 * The operator on a cluster of 20,000 pods (the scale bench's objects, at a size CI can create):
 * it becomes Ready, its store holds every pod, and it answers from that state. How fast and in how
 * much memory is the bench's business (`npm run bench -- scale`), never asserted here.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import { clusterKubeConfig, installCrds, uniqueSuffix, waitFor } from '../harness/cluster.js';
import { deleteConfigurations, freshOperator, httpGet } from '../harness/operator.js';
import {
  apiClient,
  createScaleObjects,
  deleteScaleObjects,
  scaleNamespaceName,
  type ScaleSize,
} from '../harness/scale-objects.js';
import { serverStreamsLists } from '../harness/streaming-lists.js';

const SIZE: ScaleSize = { pods: 20_000, nodes: 200, namespaces: 1_000 };
/** Each scale pod requests 250m + 50m of CPU; namespace 0 holds pods / namespaces of them. */
const PODS_PER_NAMESPACE = SIZE.pods / SIZE.namespaces;

describe('a cluster of 20,000 pods', () => {
  it('lists them all, becomes Ready and judges a pod against the usage of the listed ones', async (t) => {
    await installCrds('elasticquotas.scheduling.sigs.k8s.io');
    const kubeConfig = await clusterKubeConfig();
    const client = await apiClient(kubeConfig);
    const prefix = `scale${uniqueSuffix()}`;
    t.after(async () => {
      await deleteScaleObjects(client, prefix, SIZE);
      client.close();
    });
    // No webhook of an earlier test may judge the objects created here.
    await deleteConfigurations();
    await createScaleObjects(client, prefix, SIZE);
    const namespace = scaleNamespaceName(prefix, 0);
    // A quota named after the namespace holds its pods: 20 × 300m = 6 CPU used, half a CPU left.
    await client.create(`/apis/scheduling.sigs.k8s.io/v1alpha1/namespaces/${namespace}/elasticquotas`, {
      apiVersion: 'scheduling.sigs.k8s.io/v1alpha1',
      kind: 'ElasticQuota',
      metadata: { name: namespace, namespace },
      spec: { min: { cpu: '0' }, max: { cpu: '6500m', memory: '1Ti' } },
    });

    const { operator } = await freshOperator(t);
    const metrics = (await httpGet(operator.metricsPort, '/metrics')).body;
    const kept = Number(/^admission_store_objects\{kind="pods"\} (\d+)$/m.exec(metrics)?.[1]);
    assert.ok(kept >= SIZE.pods, `the store keeps ${kept} pods, fewer than the ${SIZE.pods} created`);
    // Listed once, the way this API server offers (kubernetes-version.test.ts checks which).
    const mode = (await serverStreamsLists(kubeConfig)) ? 'stream' : 'pages';
    assert.match(metrics, new RegExp(`^admission_store_lists_total\\{kind="pods",mode="${mode}"\\} 1$`, 'm'));

    const core = kubeConfig.makeApiClient(CoreV1Api);
    const podAsking = (cpu: string) => ({
      metadata: { generateName: 'probe-' },
      spec: {
        nodeSelector: { 'bench.admission-operator/never': 'true' },
        containers: [{ name: 'main', image: 'registry.invalid/probe:1', resources: { requests: { cpu } } }],
      },
    });
    // The store learns of the quota from its watch (already listed, since the operator is Ready).
    await assert.rejects(core.createNamespacedPod({ namespace, body: podAsking('1') }), (error: unknown) => {
      assert.match(
        String((error as { body?: unknown }).body),
        new RegExp(
          `exceeded quota: ${namespace}/${namespace}, requested: cpu=1, used: cpu=${(PODS_PER_NAMESPACE * 300) / 1000}, limited: cpu=6500m`,
        ),
      );
      return true;
    });
    await waitFor('a pod that fits to be admitted', () =>
      core.createNamespacedPod({ namespace, body: podAsking('500m') }),
    );
  });
});
