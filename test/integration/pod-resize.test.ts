/**
 * Quota admission for what a pod asks since Kubernetes 1.33 and 1.34, through the real API server:
 * pod-level resources (`spec.resources`) counted as Koordinator v1.8.0 counts them, and in-place
 * resizes (`pods/resize`) checked against the ElasticQuota's max by /validate-pod-resize, the usage
 * then following the new size. On a release without the resize subresource (1.30) the API server
 * takes the configuration naming it, and nothing else changes: the subresource is not served.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AdmissionregistrationV1Api, VersionApi, type V1Pod } from '@kubernetes/client-node';
import { checkKubernetesVersion } from '../../operator/kubernetes-version.js';
import {
  clusterKubeConfig,
  coreApi,
  installCrds,
  kubectl,
  podReadyNamespace,
  waitFor,
} from '../harness/cluster.js';
import { quotaYaml } from '../harness/elastic-quota.js';
import { CONFIGURATION_NAME, freshOperator, httpGet } from '../harness/operator.js';

const P = 'quota.scheduling.koordinator.sh';

const bodyOf = (error: unknown): string => String((error as { body?: unknown }).body);

/** A pod of `quota` asking `cpu` in its one container (requests and limits alike), or at pod level only. */
function podOf(quota: string, cpu: string, podLevel = false): V1Pod {
  return {
    metadata: { generateName: 'worker-', labels: { [`${P}/name`]: quota } },
    spec: {
      containers: [
        {
          name: 'main',
          image: 'registry.invalid/app:1',
          ...(podLevel ? {} : { resources: { requests: { cpu }, limits: { cpu } } }),
        },
      ],
      ...(podLevel ? { resources: { requests: { cpu }, limits: { cpu } } } : {}),
    },
  };
}

async function minorVersion(): Promise<number> {
  const info = await (await clusterKubeConfig()).makeApiClient(VersionApi).getCode();
  const check = checkKubernetesVersion(info);
  assert.ok(check.verdict === 'supported', JSON.stringify(info));
  return check.version.minor;
}

describe('quota admission for pod-level resources and in-place resize', () => {
  it('refuses 3 CPU at pod level and a resize past max into a 2-CPU quota, and counts a resize that fits', async (t) => {
    await installCrds('elasticquotas.scheduling.sigs.k8s.io');
    const { operator } = await freshOperator(t);
    const minor = await minorVersion();
    const namespace = await podReadyNamespace(t, 'resize');
    const quota = `resize-${namespace}`;
    await waitFor('the quota to be admitted', () =>
      kubectl(
        ['apply', '-f', '-'],
        quotaYaml(quota, namespace, {}, { min: '{cpu: "0"}', max: '{cpu: "2"}' }),
      ),
    );
    const core = await coreApi();
    const one = await waitFor('the first pod to be admitted', () =>
      core.createNamespacedPod({ namespace, body: podOf(quota, '1') }),
    );
    const half = await core.createNamespacedPod({ namespace, body: podOf(quota, '500m') });
    const used = async (): Promise<Record<string, string> | undefined> => {
      const debug = JSON.parse((await httpGet(operator.metricsPort, '/elasticQuota')).body) as {
        used: Record<string, Record<string, string>>;
      };
      return debug.used[quota];
    };
    await waitFor('both pods counted from the watch', async () =>
      (await used())?.cpu === '1500m' ? true : undefined,
    );

    const resizeTo = async (cpu: string): Promise<V1Pod> => {
      const current = await core.readNamespacedPod({ namespace, name: half.metadata!.name! });
      current.spec!.containers[0]!.resources = { requests: { cpu }, limits: { cpu } };
      return core.replaceNamespacedPodResize({ namespace, name: half.metadata!.name!, body: current });
    };

    // The API server took the entry naming pods/resize, narrowed to the quota's namespace, whatever
    // its release serves.
    const admission = (await clusterKubeConfig()).makeApiClient(AdmissionregistrationV1Api);
    const resizeEntry = await waitFor('the resize webhook narrowed to the quota', async () => {
      const stored = await admission.readValidatingWebhookConfiguration({ name: CONFIGURATION_NAME });
      const entry = stored.webhooks?.find((webhook) => webhook.name.startsWith('validate-pod-resize.'));
      return entry?.matchConditions?.some((condition) => condition.expression.includes('quota.scheduling'))
        ? entry
        : undefined;
    });
    assert.deepEqual(resizeEntry.rules?.[0]?.resources, ['pods/resize']);
    assert.deepEqual(resizeEntry.rules?.[0]?.operations, ['UPDATE']);

    if (minor < 33) {
      t.diagnostic(
        `Kubernetes 1.${minor}: no resize subresource; the configuration is taken and never called`,
      );
      // The configuration naming pods/resize was taken (the operator serves), and a plain pod still
      // goes through; the subresource itself is not there to call.
      await assert.rejects(resizeTo('1500m'), (error: unknown) => {
        assert.match(bodyOf(error), /NotFound|not found|the server could not find/i);
        return true;
      });
      assert.ok(one.metadata?.name);
      return;
    }

    // Pod level only: Koordinator v1.8.0 counts 3 CPU (v1.7.0 would count nothing).
    await assert.rejects(core.createNamespacedPod({ namespace, body: podOf(quota, '3', true) }), (error) => {
      assert.match(
        bodyOf(error),
        new RegExp(
          `exceeded quota: ${namespace}/${quota}, requested: cpu=3, used: cpu=1500m, limited: cpu=2`,
        ),
      );
      return true;
    });

    // 500m to 1500m beside the 1-CPU pod: 2.5 CPU of 2.
    await assert.rejects(resizeTo('1500m'), (error) => {
      assert.match(
        bodyOf(error),
        new RegExp(
          `validate-pod-resize\\.\\S+ denied the request: spec\\.containers\\[\\*\\]\\.resources\\.requests: exceeded quota: ${namespace}/${quota}, requested: cpu=1500m, used: cpu=1, limited: cpu=2`,
        ),
      );
      return true;
    });

    const resized = await resizeTo('1');
    assert.equal(resized.spec?.containers[0]?.resources?.requests?.cpu, '1');
    await waitFor('the usage to count the new size', async () =>
      (await used())?.cpu === '2' ? true : undefined,
    );
    // The quota is full now: another pod is refused.
    await assert.rejects(core.createNamespacedPod({ namespace, body: podOf(quota, '100m') }), (error) => {
      assert.match(bodyOf(error), /exceeded quota: .*requested: cpu=100m, used: cpu=2, limited: cpu=2/);
      return true;
    });
  });
});
