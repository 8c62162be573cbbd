/**
 * ElasticQuota defaults through the real API server, with the project's CRD installed.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ApiextensionsV1Api } from '@kubernetes/client-node';
import { repoRoot } from '../../scripts/cluster/layout.js';
import { applyYaml, clusterKubeConfig, kubectl, testNamespace, waitFor } from '../harness/cluster.js';
import { freshOperator } from '../harness/operator.js';

async function installCrd(): Promise<void> {
  await applyYaml(
    await readFile(join(repoRoot, 'crds', 'elasticquotas.scheduling.sigs.k8s.io.yaml'), 'utf8'),
  );
  const extensions = (await clusterKubeConfig()).makeApiClient(ApiextensionsV1Api);
  await waitFor('the ElasticQuota CRD to be established', async () => {
    const crd = await extensions.readCustomResourceDefinition({
      name: 'elasticquotas.scheduling.sigs.k8s.io',
    });
    return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
  });
}

function quotaYaml(name: string, namespace: string, labels: Record<string, string>): string {
  const labelLines = Object.entries(labels).map(([key, value]) => `    ${key}: "${value}"`);
  return [
    'apiVersion: scheduling.sigs.k8s.io/v1alpha1',
    'kind: ElasticQuota',
    'metadata:',
    `  name: ${name}`,
    `  namespace: ${namespace}`,
    ...(labelLines.length > 0 ? ['  labels:', ...labelLines] : []),
    'spec:',
    '  min: {cpu: "1", memory: 1Gi}',
    '  max: {cpu: "4", memory: 8Gi}',
    '',
  ].join('\n');
}

describe('ElasticQuota defaults', () => {
  it('hangs quotas under the root, inherits the tree id, defaults the shared weight, refuses an orphan', async (t) => {
    await installCrd();
    await freshOperator(t);
    const namespace = await testNamespace(t, 'quota');
    const parent = `parent-${namespace}`;
    await kubectl(
      ['apply', '-f', '-'],
      quotaYaml(parent, namespace, {
        'quota.scheduling.koordinator.sh/is-parent': 'true',
        'quota.scheduling.koordinator.sh/tree-id': 'tree-a',
      }),
    );
    const { stdout: parentOut } = await kubectl([
      'get',
      'elasticquota',
      '-n',
      namespace,
      parent,
      '-o',
      'json',
    ]);
    const stored = JSON.parse(parentOut) as {
      metadata: { labels: Record<string, string>; annotations: Record<string, string> };
    };
    assert.equal(stored.metadata.labels['quota.scheduling.koordinator.sh/parent'], 'koordinator-root-quota');
    assert.equal(
      stored.metadata.annotations['quota.scheduling.koordinator.sh/shared-weight'],
      '{"cpu":"4","memory":"8Gi"}',
    );

    const child = await waitFor('the child to inherit the tree id', async () => {
      const { stdout } = await kubectl(
        ['create', '--dry-run=server', '-o', 'json', '-f', '-'],
        quotaYaml(`child-${namespace}`, namespace, { 'quota.scheduling.koordinator.sh/parent': parent }),
      );
      const created = JSON.parse(stdout) as { metadata: { labels: Record<string, string> } };
      return created.metadata.labels['quota.scheduling.koordinator.sh/tree-id'] === 'tree-a'
        ? created
        : undefined;
    });
    assert.equal(child.metadata.labels['quota.scheduling.koordinator.sh/parent'], parent);

    await assert.rejects(
      kubectl(
        ['apply', '-f', '-'],
        quotaYaml(`orphan-${namespace}`, namespace, { 'quota.scheduling.koordinator.sh/parent': 'ghost' }),
      ),
      (error: { stderr?: string }) => {
        assert.match(
          error.stderr ?? '',
          /denied the request: metadata\.labels\[quota\.scheduling\.koordinator\.sh\/parent\]: fill quota orphan-\S+ failed: parent quota ghost does not exist/,
        );
        return true;
      },
    );
  });
});
