/**
 * Several replicas behind one address, called by the real API server: a kill -9 refuses pods only
 * within the endpoint-removal window the balancer models, and a burst into one quota through two
 * replicas admits exactly what fits (the follower hands quota admissions to the leader, which
 * decides them in one ledger), also while one replica's API server stops answering it.
 *
 * The replicas sit behind test/harness/balancer.ts: readiness probed every 1 s, each answer
 * taking effect 1 s later, so a replica that stops being ready still gets new connections for
 * up to 2 s. What these tests measure depends on the CPU they get (a follower's forwards time out
 * under another suite's load; the kill's window is timed by this process), so they run alone,
 * after the other files (scripts/integration-shards.ts); the rolling restart, the drain on SIGTERM
 * and the CA rotation with two replicas are in replica-rollout.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { messageOf, statusOf } from '../../operator/kube/errors.js';
import { clusterKubeConfig, installCrds, kubectl, waitFor } from '../harness/cluster.js';
import { httpGet, logsMatching, type StartOptions } from '../harness/operator.js';
import { failuresOf, podStream, replicated, summary, type Replicas } from '../harness/replicas.js';
import { kubeconfigPath } from '../../scripts/cluster/layout.js';
import { kubeconfigThrough, TcpProxy } from '../harness/tcp-proxy.js';
import type { OperatorProcess } from '../harness/operator.js';
import { RESERVATION_SETTLE_MS } from '../../operator/store/quota-usage.js';

/**
 * The quota burst: an AI job's burst in miniature, large enough that the follower's forwards to
 * the leader crowd each other (today's overshoot began there), small enough for seconds a run.
 */
const BURST = 800;
const BURST_RUNS = 2;
/** Managed clusters' mode (--trust-network-callers): without it nothing reserves, so a smaller burst overshoots. */
const NETWORK_BURST = 400;
/** A burst while one replica's API server stops answering it (leadership in doubt). */
const LOST_BURST = 400;

interface BurstResult {
  /** The burst's pods that exist afterwards: what the webhooks admitted. */
  admitted: number;
  /** Creates answered 201 (fewer than `admitted` when an answer was lost on the way back). */
  answered: number;
  /** Why the API server refused the others: each message (usage elided), with how many got it. */
  refusals: Map<string, number>;
  /** Creates that got no answer from the API server at all (the test client's own connection). */
  unanswered: Map<string, number>;
}

/** Koordinator's refusal of a pod past its quota (docs/rules/koordinator.md). */
const QUOTA_EXCEEDED = /exceeded quota: /;

const tally = (into: Map<string, number>, key: string): void => {
  into.set(key, (into.get(key) ?? 0) + 1);
};

/** A create's failure without an HTTP answer, with its cause (undici names it there). */
function transportFailure(error: unknown): string {
  const cause = (error as { cause?: unknown }).cause;
  const detail = cause instanceof Error ? ` (${(cause as { code?: string }).code ?? cause.message})` : '';
  return `${messageOf(error)}${detail}`.slice(0, 300);
}

/**
 * The API server's refusal when its call to a webhook failed (here: its timeout passed on a starved
 * machine). Our answer, if it came, was lost: an admission it carried may hold its reservation.
 */
const WEBHOOK_CALL_FAILED = /failed calling webhook "[^"]+": failed to call webhook: /;

/** Refusals by the API server (a webhook's or its own) other than for the quota. */
function otherRefusals({ refusals }: BurstResult): [string, number][] {
  return [...refusals].filter(([message]) => !QUOTA_EXCEEDED.test(message));
}

/** Refusals that are neither for the quota nor a failed webhook call: a rule said no. */
function ruleRefusals(result: BurstResult): [string, number][] {
  return otherRefusals(result).filter(([message]) => !WEBHOOK_CALL_FAILED.test(message));
}

/**
 * Creates whose outcome was lost on the way: the API server's call to a webhook failed, or the
 * test's own client got no answer. Each may have been admitted by the leader, its reservation held
 * for a pod that never came, until the ledger lets it go (RESERVATION_SETTLE_MS, then the pod
 * watch's next bookmark).
 */
function lostCreates(result: BurstResult): number {
  const failedCalls = otherRefusals(result)
    .filter(([message]) => WEBHOOK_CALL_FAILED.test(message))
    .reduce((n, [, count]) => n + count, 0);
  return failedCalls + [...result.unanswered.values()].reduce((n, count) => n + count, 0);
}

/** How many of a burst were admitted, and every outcome other than a refusal for the quota. */
function describeBurst(result: BurstResult): string {
  const quota = [...result.refusals]
    .filter(([message]) => QUOTA_EXCEEDED.test(message))
    .reduce((n, [, count]) => n + count, 0);
  const listed = (entries: [string, number][]): string =>
    entries.map(([message, count]) => `${count} × ${message}`).join(' | ');
  const other = otherRefusals(result);
  return (
    `${result.admitted} admitted (${result.answered} answered so), ${quota} refused for the quota` +
    (other.length > 0 ? `; refused otherwise: ${listed(other)}` : '') +
    (result.unanswered.size > 0 ? `; no answer: ${listed([...result.unanswered])}` : '')
  );
}

interface QuotaBurst {
  replicas: Replicas;
  leaderIndex: number;
  leader: OperatorProcess;
  follower: OperatorProcess;
  /** One quota per run, each of room for half the burst. */
  quotas: string[];
  /** The value of `series` on a replica's metrics port (0 when absent). */
  metric: (port: number, series: string) => Promise<number>;
  /** Indices of the replicas that report leading. */
  leaders: () => Promise<number[]>;
  /** Creates `burst` 500m pods into `quota` at once; how many were admitted, and why the others were not. */
  burstInto: (quota: string) => Promise<BurstResult>;
  /**
   * One create into `quota` every few seconds until `missing` more are admitted (the held
   * reservations of lost creates let go); then one more, which must be refused for the quota.
   */
  topUp: (quota: string, missing: number) => Promise<void>;
  forwards: (result: string) => Promise<number>;
}

/** Replicas, one quota per run, and a follower that has handed the leader an admission already. */
async function quotaBurst(
  t: TestContext,
  {
    burst,
    runs,
    options = {},
    perReplica,
  }: {
    burst: number;
    runs: number;
    options?: Parameters<typeof replicated>[1];
    perReplica?: Parameters<typeof replicated>[3];
  },
): Promise<QuotaBurst> {
  await installCrds('elasticquotas.scheduling.sigs.k8s.io');
  const { replicas, workload } = await replicated(t, options, 2, perReplica);
  const P = 'quota.scheduling.koordinator.sh';
  const warmUp = `warm-${workload}`;
  const quotas = Array.from({ length: runs }, (_, run) => `q${run}-${workload}`);
  for (const [quota, max] of [
    [warmUp, '1000'],
    ...quotas.map((quota) => [quota, String(burst / 4)]),
  ] as const) {
    await kubectl(
      ['apply', '-f', '-'],
      [
        'apiVersion: scheduling.sigs.k8s.io/v1alpha1',
        'kind: ElasticQuota',
        'metadata:',
        `  name: ${quota}`,
        `  namespace: ${workload}`,
        'spec:',
        '  min: {cpu: "0"}',
        `  max: {cpu: "${max}"}`,
        '',
      ].join('\n'),
    );
  }
  // Every replica must know every quota before the burst (a pod naming an unknown quota is refused).
  for (const replica of replicas.members) {
    await waitFor(`replica ${replica.port} to know the quotas`, async () => {
      const view = JSON.parse((await httpGet(replica.metricsPort, '/elasticQuota')).body) as {
        quotas: Record<string, unknown>;
      };
      return [warmUp, ...quotas].every((quota) => quota in view.quotas);
    });
  }
  const metric = async (port: number, series: string): Promise<number> => {
    const text = (await httpGet(port, '/metrics')).body;
    const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
    return line ? Number(line.slice(series.length + 1)) : 0;
  };
  const leaders = async (): Promise<number[]> => {
    const flags = await Promise.all(replicas.members.map((r) => metric(r.metricsPort, 'admission_leader')));
    return flags.flatMap((flag, index) => (flag === 1 ? [index] : []));
  };
  await waitFor('one leader', async () => (await leaders()).length === 1);
  const leaderIndex = (await leaders())[0]!;
  const leader = replicas.members[leaderIndex]!;
  const follower = replicas.members.find((_, index) => index !== leaderIndex)!;
  const core = (await clusterKubeConfig()).makeApiClient(CoreV1Api);
  const podIn = (quota: string): V1Pod => ({
    metadata: { generateName: 'worker-', labels: { [`${P}/name`]: quota } },
    spec: {
      containers: [
        { name: 'main', image: 'registry.invalid/app:1', resources: { requests: { cpu: '500m' } } },
      ],
    },
  });
  const forwards = (result: string): Promise<number> =>
    metric(follower.metricsPort, `admission_quota_forward_total{result="${result}"}`);
  // The follower learns the leader's address from the Lease within a retry period: until a
  // quota admission reaching it has been answered by the leader, a burst would be decided in two places.
  // Concurrent creates open more than one connection, so some reach the follower.
  await waitFor('the follower to hand a quota admission to the leader', async () => {
    await Promise.all(
      Array.from({ length: 8 }, () => core.createNamespacedPod({ namespace: workload, body: podIn(warmUp) })),
    );
    const answered = await forwards('answered');
    if (answered === 0) {
      t.diagnostic(`forwards so far: failed ${await forwards('failed')}, busy ${await forwards('busy')}`);
    }
    return answered > 0;
  });
  const burstInto = async (quota: string): Promise<BurstResult> => {
    const results = await Promise.allSettled(
      Array.from({ length: burst }, () =>
        core.createNamespacedPod({ namespace: workload, body: podIn(quota) }),
      ),
    );
    const refusals = new Map<string, number>();
    const unanswered = new Map<string, number>();
    for (const result of results) {
      if (result.status === 'fulfilled') continue;
      if (statusOf(result.reason) !== undefined)
        // The quota's figures differ per pod only in the usage: one line per kind of refusal.
        tally(
          refusals,
          messageOf(result.reason)
            .replace(/used: .*?, limited/, 'used: …, limited')
            .slice(0, 300),
        );
      else tally(unanswered, transportFailure(result.reason));
    }
    // What exists is what was admitted: a create whose answer the test's own client lost on a
    // loaded machine (undici's "fetch failed") may have been admitted all the same. Counted until
    // two lists a second apart agree, so that a create the API server was still finishing counts.
    let admitted = -1;
    await waitFor(
      `the pods of ${quota} to be counted`,
      async () => {
        const { items } = await core.listNamespacedPod({
          namespace: workload,
          labelSelector: `${P}/name=${quota}`,
        });
        const settled = items.length === admitted;
        admitted = items.length;
        return settled;
      },
      { intervalMs: 1000 },
    );
    const answered = results.filter((result) => result.status === 'fulfilled').length;
    return { admitted, answered, refusals, unanswered };
  };
  const topUp = async (quota: string, missing: number): Promise<void> => {
    let admitted = 0;
    await waitFor(
      `${missing} more pods admitted into ${quota} once the lost creates' reservations are released`,
      async () => {
        try {
          await core.createNamespacedPod({ namespace: workload, body: podIn(quota) });
          admitted += 1;
        } catch (error) {
          const message = messageOf(error);
          if (!QUOTA_EXCEEDED.test(message)) throw error;
        }
        return admitted === missing;
      },
      // Past the settle window, up to a bookmark later (each minute), with room for a starved machine.
      { timeoutMs: RESERVATION_SETTLE_MS + 120_000, intervalMs: 5000 },
    );
    await assert.rejects(
      core.createNamespacedPod({ namespace: workload, body: podIn(quota) }),
      (error) => QUOTA_EXCEEDED.test(messageOf(error)),
      'the quota is full again once the lost creates are made up',
    );
  };
  return { replicas, leaderIndex, leader, follower, quotas, metric, leaders, burstInto, topUp, forwards };
}

/**
 * A burst into room for `room` filled it exactly: never more; fewer only by creates lost on the way
 * (lostCreates), and those are made up once the reservations they held are released; every
 * refusal is for the quota or a failed webhook call.
 */
async function assertFilled(
  t: TestContext,
  label: string,
  result: BurstResult,
  room: number,
  makeUp: (missing: number) => Promise<void>,
): Promise<void> {
  const outcome = `${label}: ${describeBurst(result)}`;
  assert.ok(result.admitted <= room, `over the quota: ${outcome}`);
  assert.ok(room - result.admitted <= lostCreates(result), `fewer than fit, not by lost creates: ${outcome}`);
  assert.deepEqual(
    ruleRefusals(result),
    [],
    `every refusal is for the quota or a failed webhook call: ${outcome}`,
  );
  if (result.admitted === room) return;
  const missing = room - result.admitted;
  const started = Date.now();
  await makeUp(missing);
  t.diagnostic(
    `${label}: ${missing} lost create(s) held room until their reservations were released; made up ${Math.round((Date.now() - started) / 1000)} s after the burst, and the quota is full again`,
  );
}

async function burstExactly(
  t: TestContext,
  { burst, runs, options = {} }: { burst: number; runs: number; options?: Parameters<typeof replicated>[1] },
): Promise<void> {
  const { quotas, leaderIndex, burstInto, topUp, forwards } = await quotaBurst(t, { burst, runs, options });
  const before = {
    answered: await forwards('answered'),
    failed: await forwards('failed'),
    busy: await forwards('busy'),
  };
  const results: BurstResult[] = [];
  for (const quota of quotas) results.push(await burstInto(quota));
  const answered = (await forwards('answered')) - before.answered;
  const failed = (await forwards('failed')) - before.failed;
  const busy = (await forwards('busy')) - before.busy;
  const outcomes = results.map(describeBurst).join('; ');
  t.diagnostic(
    `${burst} concurrent 500m pods into a ${burst / 4}-CPU quota, 2 replicas, ${runs} runs: ${outcomes}; ` +
      `the follower handed ${answered} admissions to the leader (replica ${leaderIndex}), ${failed} forwards failed, ${busy} were decided locally as busy`,
  );
  for (const [run, result] of results.entries()) {
    await assertFilled(t, `run ${run + 1} of ${runs}`, result, burst / 2, (missing) =>
      topUp(quotas[run]!, missing),
    );
  }
  assert.ok(answered > 0, 'the follower handed no admission to the leader');
  assert.equal(failed, 0);
  assert.equal(busy, 0);
}

/** Each replica talks to the API server through a proxy of its own, which the test can freeze. */
async function proxiedReplicas(
  t: TestContext,
): Promise<{ proxies: TcpProxy[]; perReplica: (n: number) => Partial<StartOptions> }> {
  await clusterKubeConfig();
  const dir = await mkdtemp(join(tmpdir(), 'replicas-proxied-'));
  const { target } = await kubeconfigThrough(kubeconfigPath, dir, 0);
  const proxies: TcpProxy[] = [];
  const kubeconfigs: string[] = [];
  for (let i = 0; i < 2; i++) {
    const proxy = await TcpProxy.start(target);
    proxies.push(proxy);
    kubeconfigs.push((await kubeconfigThrough(kubeconfigPath, dir, proxy.port)).path);
  }
  t.after(async () => {
    await Promise.all(proxies.map((proxy) => proxy.close()));
    await rm(dir, { recursive: true, force: true });
  });
  return { proxies, perReplica: (n) => ({ env: { KUBECONFIG: kubeconfigs[n]! } }) };
}

/**
 * Lease timings for the lease in doubt: the defaults' proportions (15 s, 10 s, 2 s) at about half
 * their length, so that the follower's view lapses, and the takeover comes, in seconds fewer. The
 * follower's view of the lease lapses after LEASE_DURATION_MS.
 */
const LEASE_DURATION_MS = 8000;
const LEASE_ARGS = [
  `--leader-elect-lease-duration=${LEASE_DURATION_MS}ms`,
  '--leader-elect-renew-deadline=5s',
  '--leader-elect-retry-period=1s',
];

/**
 * Two replicas, and a burst while one of them cannot reach the API server though the API server
 * still calls it (a saturated or partitioned control plane): first the follower (its view of the
 * lease lapses), then the leader (its renewals stall, the follower takes the lease over).
 */
async function burstWithLeaseInDoubt(t: TestContext): Promise<void> {
  const { proxies, perReplica } = await proxiedReplicas(t);
  const setup = await quotaBurst(t, {
    burst: LOST_BURST,
    runs: 2,
    options: { args: LEASE_ARGS },
    perReplica,
  });
  const { replicas, leaderIndex, follower, leader, quotas, metric, burstInto, topUp } = setup;
  const followerIndex = replicas.members.indexOf(follower);
  const room = LOST_BURST / 2;
  const alone = async (replica: OperatorProcess): Promise<number> =>
    metric(replica.metricsPort, 'admission_quota_decided_without_leader_total');

  // 1. The follower's API server stops answering it for longer than a lease duration.
  proxies[followerIndex]!.hold();
  await sleep(LEASE_DURATION_MS + 2000);
  const aloneBefore1 = await alone(follower);
  const burst1 = await burstInto(quotas[0]!);
  const alone1 = (await alone(follower)) - aloneBefore1;
  proxies[followerIndex]!.release();
  t.diagnostic(
    `follower cut off from the API server for ${LEASE_DURATION_MS + 2000} ms, ${LOST_BURST} into room for ${room}: ${describeBurst(burst1)}; ` +
      `the follower decided ${alone1} alone`,
  );

  // 2. The leader's API server stops answering it: its renewals stall, the follower takes over
  // (once its own calls get through again, on new connections).
  proxies[leaderIndex]!.hold();
  const frozenAt = Date.now();
  await waitFor(
    'the follower to take the lease over',
    async () => (await metric(follower.metricsPort, 'admission_leader')) === 1,
    { timeoutMs: 60_000, intervalMs: 250 },
  );
  const tookOverAfter = Date.now() - frozenAt;
  const aloneBefore2 = (await alone(leader)) + (await alone(follower));
  const burst2 = await burstInto(quotas[1]!);
  const alone2 = (await alone(leader)) + (await alone(follower)) - aloneBefore2;
  proxies[leaderIndex]!.release();
  t.diagnostic(
    `leader cut off from the API server, the follower took the lease after ${tookOverAfter} ms: ` +
      `${LOST_BURST} into room for ${room}: ${describeBurst(burst2)}; ${alone2} decided by a replica neither leading nor knowing a leader; ` +
      `handovers logged by the old leader: ${logsMatching(leader, /handed quota decisions over/).length}`,
  );
  await assertFilled(t, 'follower cut off', burst1, room, (missing) => topUp(quotas[0]!, missing));
  await assertFilled(t, 'leader cut off, the lease taken over', burst2, room, (missing) =>
    topUp(quotas[1]!, missing),
  );
}

describe('several replicas behind one address', () => {
  it('refuses pods only within the endpoint-removal window when a replica is killed with -9', async (t) => {
    const { balancer, replicas, workload } = await replicated(t);
    const stream = podStream(workload, 20);
    await sleep(2000);
    const victim = replicas.members[0]!;
    const killedAt = Date.now();
    await victim.stop('SIGKILL');
    await waitFor('the dead replica to leave the balancer', () =>
      Promise.resolve(!balancer.readyPorts().includes(victim.port)),
    );
    const removedAfter = Date.now() - killedAt;
    await sleep(4000);
    const attempts = await stream.stop();
    const failed = failuresOf(attempts);
    // A create fails when it was sent to the dead replica: in flight at the kill, or routed to it
    // before its endpoint was removed. Either way it ends within the window plus one round trip.
    const windowEnd = killedAt + balancer.removalWindowMs + 1000;
    const late = failed.filter(
      (attempt) => attempt.endedAt > windowEnd || attempt.startedAt < killedAt - 1000,
    );
    t.diagnostic(
      `kill -9 of 1 of 2 replicas: ${summary(attempts)}; endpoint removed ${removedAfter} ms after the kill ` +
        `(window modelled: ${balancer.removalWindowMs} ms); failures ended ` +
        `${failed.map((attempt) => attempt.endedAt - killedAt).join(', ') || 'none'} ms after the kill`,
    );
    assert.deepEqual(late, [], 'every failure lies within the removal window');
    assert.ok(removedAfter <= balancer.removalWindowMs + 1000, `removed after ${removedAfter} ms`);
    // The creates the window can hold at 20/s, each of which may have reached the dead replica.
    assert.ok(
      failed.length <= Math.ceil((balancer.removalWindowMs + 1000) / 50),
      `${failed.length} failures`,
    );
    const after = attempts.filter((attempt) => attempt.startedAt > windowEnd);
    assert.ok(after.length > 40, `only ${after.length} creates after the window`);
  });

  it(`admits exactly ${BURST / 2} of ${BURST} concurrent 500m pods into a ${BURST / 4}-CPU quota with two replicas, in each of ${BURST_RUNS} runs`, async (t) => {
    await burstExactly(t, { burst: BURST, runs: BURST_RUNS });
  });

  it(`admits exactly ${LOST_BURST / 2} of ${LOST_BURST} while a replica's API server stops answering it, follower then leader (the lease in doubt)`, async (t) => {
    await burstWithLeaseInDoubt(t);
  });

  it(`admits exactly ${NETWORK_BURST / 2} of ${NETWORK_BURST} with caller verification off but the network trusted (managed clusters' mode)`, async (t) => {
    await burstExactly(t, {
      burst: NETWORK_BURST,
      runs: 1,
      options: { verifyCallers: false, args: ['--trust-network-callers=true'] },
    });
  });
});
