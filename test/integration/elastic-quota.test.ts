/**
 * ElasticQuota defaults through the real API server, with the project's CRD installed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import {
  clusterKubeConfig,
  installCrds,
  kubectl,
  podReadyNamespace,
  testNamespace,
  waitFor,
} from '../harness/cluster.js';
import { quotaYaml } from '../harness/elastic-quota.js';
import { freshOperator, httpGet } from '../harness/operator.js';

describe('ElasticQuota defaults', () => {
  it('hangs quotas under the root, inherits the tree id, defaults the shared weight, refuses an orphan', async (t) => {
    await installCrds('elasticquotas.scheduling.sigs.k8s.io');
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
          /denied the request: metadata\.labels\[quota\.scheduling\.koordinator\.sh\/parent\]: fill quota orphan-\S+ failed, parent not exist/,
        );
        return true;
      },
    );
  });

  it('refuses an invalid child, a bad update and deleting a quota with children, in a three-level tree', async (t) => {
    await installCrds('elasticquotas.scheduling.sigs.k8s.io');
    await freshOperator(t);
    const namespace = await testNamespace(t, 'quota');
    const name = (level: string): string => `${level}-${namespace}`;
    const P = 'quota.scheduling.koordinator.sh';
    const big = { min: '{cpu: "8", memory: 8Gi}', max: '{cpu: "16", memory: 16Gi}' };
    const mid = { min: '{cpu: "4", memory: 4Gi}', max: '{cpu: "8", memory: 8Gi}' };
    const small = { min: '{cpu: "2", memory: 2Gi}', max: '{cpu: "4", memory: 4Gi}' };
    const apply = (yaml: string): Promise<unknown> =>
      // The operator's store sees each quota a moment after it is stored; retry until it does.
      waitFor('the quota to be admitted', () => kubectl(['apply', '-f', '-'], yaml), { timeoutMs: 15_000 });
    await apply(
      quotaYaml(name('top'), namespace, { [`${P}/is-parent`]: 'true', [`${P}/tree-id`]: namespace }, big),
    );
    await apply(
      quotaYaml(name('mid'), namespace, { [`${P}/is-parent`]: 'true', [`${P}/parent`]: name('top') }, mid),
    );
    await apply(quotaYaml(name('leaf'), namespace, { [`${P}/parent`]: name('mid') }, small));
    const { stdout } = await kubectl([
      'get',
      'eq',
      '-n',
      namespace,
      name('leaf'),
      '-o',
      'jsonpath={.metadata.labels}',
    ]);
    assert.match(stdout, new RegExp(`"${P.replace(/\./g, '\\.')}/tree-id":"${namespace}"`));

    const refusedWith = async (yaml: string | string[], message: RegExp): Promise<void> => {
      const args = Array.isArray(yaml) ? yaml : ['apply', '-f', '-'];
      await assert.rejects(
        kubectl(args, Array.isArray(yaml) ? undefined : yaml),
        (error: { stderr?: string }) => {
          assert.match(error.stderr ?? '', message);
          return true;
        },
      );
    };
    // A child whose max exceeds its parent's.
    await refusedWith(
      quotaYaml(
        name('greedy'),
        namespace,
        { [`${P}/parent`]: name('mid') },
        { min: '{cpu: "1", memory: 1Gi}', max: '{cpu: "9", memory: 1Gi}' },
      ),
      /denied the request: spec\.max: resource cpu: max 9 of greedy-\S+ exceeds max 8 of its parent mid-/,
    );
    // An update that would make the top quota its own grandchild's child.
    await refusedWith(
      quotaYaml(
        name('top'),
        namespace,
        { [`${P}/is-parent`]: 'true', [`${P}/tree-id`]: namespace, [`${P}/parent`]: name('leaf') },
        big,
      ),
      new RegExp(
        `: ${name('top')} has parentName ${name('leaf')} but the parentQuotaInfo's IsParent is false`,
      ),
    );
    await refusedWith(
      ['delete', 'eq', '-n', namespace, name('mid')],
      new RegExp(`metadata\\.name: delete quota failed, quota ${name('mid')} has 1 child quotas`),
    );
    // Koordinator's messages, word for word, through the API server: quota names are unique
    // across namespaces, and a tree id never changes.
    const elsewhere = await testNamespace(t, 'quota');
    await refusedWith(
      quotaYaml(name('leaf'), elsewhere, {}, small),
      new RegExp(`denied the request: metadata\\.name: AddQuota quota already exist:${name('leaf')}`),
    );
    await refusedWith(
      ['label', 'eq', '-n', namespace, name('top'), `${P}/tree-id=other`, '--overwrite'],
      new RegExp(
        `denied the request: metadata\\.labels\\[quota\\.scheduling\\.koordinator\\.sh/tree-id\\]: ${name('top')} tree id changed \\[${namespace}\\] vs \\[other\\]`,
      ),
    );
  });

  it('fills a quota with pods until one is refused, gives room back on delete, never overshoots under concurrency', async (t) => {
    await installCrds('elasticquotas.scheduling.sigs.k8s.io');
    const { operator } = await freshOperator(t);
    const namespace = await podReadyNamespace(t, 'quota');
    const quotaName = `fill-${namespace}`;
    const P = 'quota.scheduling.koordinator.sh';
    await waitFor('the quota to be admitted', () =>
      kubectl(
        ['apply', '-f', '-'],
        quotaYaml(quotaName, namespace, {}, { min: '{cpu: "0"}', max: '{cpu: "2"}' }),
      ),
    );
    const core = (await clusterKubeConfig()).makeApiClient(CoreV1Api);
    const podIn = (quota: string) => ({
      metadata: { generateName: 'worker-', labels: { [`${P}/name`]: quota } },
      spec: {
        containers: [
          { name: 'main', image: 'registry.invalid/app:1', resources: { requests: { cpu: '500m' } } },
        ],
      },
    });
    // The store learns of the quota from its watch; until then the pod is refused as naming an unknown quota.
    const first = await waitFor('the first pod to be admitted', () =>
      core.createNamespacedPod({ namespace, body: podIn(quotaName) }),
    );
    for (let i = 0; i < 3; i++) await core.createNamespacedPod({ namespace, body: podIn(quotaName) });
    await assert.rejects(
      core.createNamespacedPod({ namespace, body: podIn(quotaName) }),
      (error: unknown) => {
        assert.match(
          String((error as { body?: unknown }).body),
          new RegExp(
            `exceeded quota: ${namespace}/${quotaName}, requested: cpu=500m, used: cpu=2, limited: cpu=2`,
          ),
        );
        return true;
      },
    );
    const debug = JSON.parse((await httpGet(operator.metricsPort, '/elasticQuota')).body) as {
      quotas: Record<string, { parent: string }>;
      used: Record<string, Record<string, string>>;
    };
    assert.equal(debug.quotas[quotaName]?.parent, 'koordinator-root-quota');
    assert.deepEqual(debug.used[quotaName], { cpu: '2' });
    await assert.rejects(
      kubectl(['delete', 'eq', '-n', namespace, quotaName]),
      (error: { stderr?: string }) => {
        assert.match(
          error.stderr ?? '',
          new RegExp(
            `delete quota failed, quota ${quotaName} has 4 child pods: worker-\\w+, worker-\\w+, \\.\\.\\.`,
          ),
        );
        return true;
      },
    );

    await core.deleteNamespacedPod({ namespace, name: first.metadata!.name! });
    await waitFor('room to come back', () => core.createNamespacedPod({ namespace, body: podIn(quotaName) }));

    const burstQuota = `burst-${namespace}`;
    await kubectl(
      ['apply', '-f', '-'],
      quotaYaml(burstQuota, namespace, {}, { min: '{cpu: "0"}', max: '{cpu: "3"}' }),
    );
    await waitFor('the burst quota to be known', async () => {
      const { stdout } = await kubectl(['get', 'eq', '-n', namespace, burstQuota, '-o', 'name']);
      return stdout.trim() !== '';
    });
    // Wait until the operator knows the quota: a dry run is admitted (and reserves nothing).
    await waitFor('the operator to know the burst quota', () =>
      core.createNamespacedPod({ namespace, body: podIn(burstQuota), dryRun: 'All' }),
    );
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, () => core.createNamespacedPod({ namespace, body: podIn(burstQuota) })),
    );
    const admitted = results.filter((result) => result.status === 'fulfilled').length;
    t.diagnostic(`${admitted} of 12 concurrent 500m pods admitted into a 3-CPU quota`);
    assert.equal(admitted, 6);
  });
});
