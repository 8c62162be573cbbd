/**
 * A replica started before a kind's CRD exists, as beside Koordinator's chart installed later (the
 * chart of this operator installs no CRD by default): every other webhook answers through the real
 * API server, the absence is said (log line, Event, metric, /readyz detail), and once the CRD is
 * created the kind is watched and its rule applies, without a restart. Deleting the CRD again is
 * noticed the same way.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { clusterKubeConfig, installCrds, kubectl, podReadyNamespace, waitFor } from '../harness/cluster.js';
import { quotaYaml } from '../harness/elastic-quota.js';
import { freshOperator, httpGet, httpsGet, logsMatching, type FreshOperator } from '../harness/operator.js';

const CRD = 'elasticquotas.scheduling.sigs.k8s.io';

/** A pod asking `cpu`, and a GPU (which the GPU-class webhook pins to its tier's class) unless `gpu` is false. */
function pod(name: string, cpu: string, gpu = true): V1Pod {
  const limits: Record<string, string> = gpu ? { cpu, 'nvidia.com/gpu': '1' } : { cpu };
  return {
    metadata: { name },
    spec: {
      containers: [
        { name: 'main', image: 'registry.invalid/cuda:1', resources: { requests: { cpu }, limits } },
      ],
    },
  };
}

const escaped = (text: string): string => text.replaceAll('.', '\\.');

/** The replica's `kinds` readiness detail and its admission_kind_installed gauge of ElasticQuotas. */
async function presence({ operator, ca }: FreshOperator): Promise<{ detail: string; gauge: string }> {
  const readyz = await httpsGet(operator.port, '/readyz', ca);
  const report = JSON.parse(readyz.body) as { ready: boolean; checks: { kinds?: { message: string } } };
  assert.equal(report.ready, true, readyz.body);
  const metrics = await httpGet(operator.metricsPort, '/metrics');
  const gauge = /^admission_kind_installed\{kind="elasticquotas"\} (\d)$/m.exec(metrics.body)?.[1] ?? '';
  return { detail: report.checks.kinds?.message ?? '', gauge };
}

/** The messages of the Events of `reason` in the operator's namespace. */
async function eventMessages(namespace: string, reason: string): Promise<string | undefined> {
  const { stdout } = await kubectl([
    'get',
    'events',
    '-n',
    namespace,
    `--field-selector=reason=${reason}`,
    '-o',
    'jsonpath={.items[*].message}',
  ]);
  return stdout.trim() || undefined;
}

describe('a watched kind whose CRD is absent', () => {
  it('serves every other webhook and says so, then watches the kind and applies its rule once the CRD appears', async (t) => {
    // As on a cluster where Koordinator is not installed yet (earlier tests may have left it).
    await kubectl(['delete', 'crd', CRD, '--ignore-not-found', '--wait=true']);
    const fresh = await freshOperator(t);
    const { operator, namespace: operatorNamespace } = fresh;
    const core = (await clusterKubeConfig()).makeApiClient(CoreV1Api);

    // Published and ready with the CRD absent, and saying which kind is missing.
    const absent = await presence(fresh);
    assert.match(absent.detail, new RegExp(`^not installed, .*: .*${escaped(CRD)}`));
    assert.equal(absent.gauge, '0');
    assert.ok(
      logsMatching(operator, /^CRD not installed/).some((line) => line.crd === CRD),
      'a log line names the CRD',
    );
    assert.match(
      await waitFor('the KindNotInstalled Event', () => eventMessages(operatorNamespace, 'KindNotInstalled')),
      // One Event for the CRDs found absent together at the start, naming each.
      new RegExp(`(is|are) not installed: .*\\(not installed: .*${escaped(CRD)}`),
    );

    // Another webhook answers through the API server: a GPU pod of a gold namespace gets its class.
    const team = await podReadyNamespace(t, 'team');
    await kubectl(['label', 'namespace', team, 'tenant.kubenexus.io/tier=gold']);
    const pinned = await waitFor('the GPU-class webhook to pin a pod', async () => {
      const created = await core.createNamespacedPod({
        namespace: team,
        body: pod(`gpu-${Date.now()}`, '100m'),
        dryRun: 'All',
      });
      return created.spec?.nodeSelector?.['gpu.nvidia.com/class'];
    });
    assert.equal(pinned, 'h100');

    // The CRD appears (Koordinator's chart installed): watched within seconds, no restart.
    await installCrds(CRD);
    await waitFor('the replica to watch ElasticQuotas', async () => {
      const now = await presence(fresh);
      // Other kinds may still be absent (ElasticQuotaProfile's CRD is Koordinator's alone).
      return now.gauge === '1' && !now.detail.includes(CRD) ? now : undefined;
    });
    assert.ok(
      logsMatching(operator, /^CRD installed; watching its objects$/).some((line) => line.crd === CRD),
    );
    assert.match(
      await waitFor('the KindInstalled Event', () => eventMessages(operatorNamespace, 'KindInstalled')),
      new RegExp(`The CRD ${escaped(CRD)} appeared; its objects are watched and its rules apply`),
    );

    // Its rule applies: a quota of 1 CPU for the namespace, and a pod past it is refused.
    await kubectl(
      ['apply', '-f', '-'],
      quotaYaml(team, team, {}, { min: '{cpu: "1", memory: 1Gi}', max: '{cpu: "1", memory: 4Gi}' }),
    );
    const refusal = await waitFor('the quota to refuse a pod past it', async () => {
      try {
        await core.createNamespacedPod({
          namespace: team,
          body: pod(`big-${Date.now()}`, '2', false),
          dryRun: 'All',
        });
        return undefined;
      } catch (error) {
        return String((error as { body?: unknown }).body);
      }
    });
    assert.match(
      refusal,
      new RegExp(`exceeded quota: ${team}/${team}, requested: cpu=2, used: .*limited: cpu=1`),
    );
    // Under the quota, admitted.
    await core.createNamespacedPod({ namespace: team, body: pod('fits', '500m', false), dryRun: 'All' });
    assert.equal(operator.child.exitCode, null, 'the same process throughout');

    // Deleted again (Koordinator's chart uninstalled): noticed the same way, every other webhook still served.
    await kubectl(['delete', 'crd', CRD, '--wait=true']);
    await waitFor('the replica to find the CRD gone', async () => {
      const now = await presence(fresh);
      return now.gauge === '0' ? now : undefined;
    });
    const admitted = await core.createNamespacedPod({
      namespace: team,
      body: pod('after', '2'),
      dryRun: 'All',
    });
    assert.equal(admitted.spec?.nodeSelector?.['gpu.nvidia.com/class'], 'h100');
  });
});
