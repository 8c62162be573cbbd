/**
 * The quota ledger's reservations, through the real API server: a pod our webhook admits holds
 * its room from that moment, before the pod exists, so that concurrent creates cannot squeeze
 * past the quota. When the create fails after us (another admission step refuses it, or the API
 * server gives up on the call), the pod never comes: its room must come back, and only once it is
 * certain that it never will (operator/store/quota-usage.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { messageOf } from '../../operator/kube/errors.js';
import { RESERVATION_SETTLE_MS } from '../../operator/store/quota-usage.js';
import { clusterKubeConfig, installCrds, kubectl, podReadyNamespace, waitFor } from '../harness/cluster.js';
import { quotaYaml } from '../harness/elastic-quota.js';
import { freshOperator, httpGet } from '../harness/operator.js';

const P = 'quota.scheduling.koordinator.sh';

describe('the quota ledger through the API server', () => {
  it('gives back the room of a pod refused after our webhook admitted it, once its create has surely failed', async (t) => {
    await installCrds('elasticquotas.scheduling.sigs.k8s.io');
    const { operator } = await freshOperator(t);
    const namespace = await podReadyNamespace(t, 'ledger');
    const quota = `room-for-two-${namespace}`;
    const core = (await clusterKubeConfig()).makeApiClient(CoreV1Api);
    const podIn = (name: string): V1Pod => ({
      metadata: { name, labels: { [`${P}/name`]: quota } },
      spec: {
        containers: [
          { name: 'main', image: 'registry.invalid/app:1', resources: { requests: { cpu: '500m' } } },
        ],
      },
    });
    const refusal = async (name: string): Promise<string> => {
      try {
        await core.createNamespacedPod({ namespace, body: podIn(name) });
      } catch (error) {
        return messageOf(error);
      }
      return '';
    };
    await waitFor('the ElasticQuota to be admitted', () =>
      kubectl(
        ['apply', '-f', '-'],
        quotaYaml(quota, namespace, {}, { min: '{cpu: "0"}', max: '{cpu: "1"}' }),
      ),
    );
    // The API server's own ResourceQuota admission runs after the webhooks: one pod in this namespace.
    await kubectl(['create', 'quota', 'one-pod', '-n', namespace, '--hard=pods=1']);
    await waitFor('the ResourceQuota to be counted', async () => {
      const { stdout } = await kubectl([
        'get',
        'quota',
        'one-pod',
        '-n',
        namespace,
        '-o',
        'jsonpath={.status.hard.pods}',
      ]);
      return stdout.trim() === '1';
    });
    // A dry run reserves nothing: it is admitted once the operator knows the ElasticQuota.
    await waitFor('the operator to know the quota', () =>
      core.createNamespacedPod({ namespace, body: podIn('dry'), dryRun: 'All' }),
    );

    await core.createNamespacedPod({ namespace, body: podIn('first') });
    // Room for one more in the ElasticQuota: ours admits and reserves it, the ResourceQuota refuses it.
    // Taken before the create: the admission, and so the settle time, can only start after it.
    const admittedAt = Date.now();
    const refusedAfterUs = await refusal('second');
    assert.match(refusedAfterUs, /exceeded quota: one-pod, requested: pods=1/);
    await kubectl(['delete', 'quota', 'one-pod', '-n', namespace]);

    // The pod that never came holds its room: the ledger cannot know yet that it never will.
    const held = await refusal('third');
    assert.match(
      held,
      new RegExp(`exceeded quota: ${namespace}/${quota}, requested: cpu=500m, used: cpu=1, limited: cpu=1`),
    );
    // Once the pod watch is current past the settle time (the next bookmark after it), the room is back.
    let attempts = 0;
    await waitFor(
      'the room of the pod refused after us to come back',
      async () => {
        attempts += 1;
        const message = await refusal(`third-${attempts}`);
        if (message !== '' && !message.includes(`exceeded quota: ${namespace}/${quota}`))
          throw new Error(message);
        return message === '';
      },
      { timeoutMs: RESERVATION_SETTLE_MS + 120_000, intervalMs: 5000 },
    );
    const releasedAfter = Date.now() - admittedAt;
    t.diagnostic(
      `the room came back ${Math.round(releasedAfter / 1000)} s after the refused pod's admission`,
    );
    // Never before the settle time: the create might still have been under way.
    assert.ok(releasedAfter >= RESERVATION_SETTLE_MS, `released after ${releasedAfter} ms`);
    assert.match(
      await refusal('fourth'),
      new RegExp(`exceeded quota: ${namespace}/${quota}, requested: cpu=500m, used: cpu=1, limited: cpu=1`),
    );
    const view = JSON.parse((await httpGet(operator.metricsPort, '/elasticQuota')).body) as {
      used: Record<string, Record<string, string>>;
    };
    assert.deepEqual(view.used[quota], { cpu: '1' });
  });
});
