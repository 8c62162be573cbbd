/**
 * One tenant's crafted pod must not cost the cluster its pod admission: a quantity with a huge
 * exponent (which the API server accepts and hands to mutating webhooks before its own
 * validation) used to hold the admission server for 12 s, so every other tenant's pod create
 * failed meanwhile and /healthz stalled past the liveness probe.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { coreApi, createPod, podReadyNamespace, waitFor } from '../harness/cluster.js';
import { freshOperator, httpsGet, logsMatching } from '../harness/operator.js';

const HUGE = '1e50000000';

function craftedPod(): V1Pod {
  return {
    metadata: { name: 'dos' },
    spec: {
      containers: [
        {
          name: 'c',
          image: 'busybox',
          resources: {
            requests: { 'kubernetes.io/batch-cpu': HUGE },
            limits: { 'kubernetes.io/batch-cpu': HUGE },
          },
        },
      ],
    },
  };
}

describe('hostile reviews through the API server', () => {
  it('answers a pod with a 1e50000000 quantity at once while another tenant is admitted', async (t) => {
    const { operator, ca } = await freshOperator(t);
    await waitFor(
      '/readyz to answer 200',
      async () => (await httpsGet(operator.port, '/readyz', ca)).status === 200,
      {
        timeoutMs: 20_000,
      },
    );
    const attacker = await podReadyNamespace(t, 'dos');
    const tenant = await podReadyNamespace(t, 'tenant');
    // Warm the path (connections, code) so the timings below are about the review itself.
    await waitFor('a first pod to be admitted', () => createPod(tenant), { timeoutMs: 20_000 });

    let slowestHealthMs = 0;
    let polling = true;
    const poller = (async (): Promise<void> => {
      while (polling) {
        const started = performance.now();
        const health = await httpsGet(operator.port, '/healthz', ca);
        assert.equal(health.status, 200);
        slowestHealthMs = Math.max(slowestHealthMs, performance.now() - started);
        await new Promise((resolveTimer) => setTimeout(resolveTimer, 10));
      }
    })();

    const core = await coreApi();
    const started = performance.now();
    const [crafted, ordinary] = await Promise.allSettled([
      core.createNamespacedPod({ namespace: attacker, body: craftedPod() }),
      createPod(tenant),
    ]);
    const answeredMs = performance.now() - started;
    polling = false;
    await poller;

    assert.equal(ordinary.status, 'fulfilled', String(ordinary.status === 'rejected' && ordinary.reason));
    // Refused or admitted unchanged: either way an answer, and never a webhook time-out.
    if (crafted.status === 'rejected') {
      assert.doesNotMatch(String(crafted.reason), /deadline exceeded|timeout|failed calling webhook/i);
    }
    assert.equal(answeredMs < 1000, true, `both pod creates took ${Math.round(answeredMs)} ms`);
    assert.equal(slowestHealthMs < 100, true, `/healthz took up to ${Math.round(slowestHealthMs)} ms`);

    const decisions = logsMatching(operator, /admission decision/).filter(
      (line) => line.object === `${attacker}/dos`,
    );
    assert.equal(decisions.length > 0, true, 'the crafted pod reached our webhooks');
    for (const line of decisions) {
      assert.equal(Number(line.ms) < 100, true, `${String(line.webhook)} took ${String(line.ms)} ms`);
      assert.equal(typeof line.message !== 'string' || line.message.length <= 256, true);
    }
  });
});
