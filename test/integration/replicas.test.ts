/**
 * Several replicas behind one address, called by the real API server: a rolling restart and a
 * CA rotation refuse no pod, a kill -9 refuses pods only within the endpoint-removal window the
 * balancer models, SIGTERM fails /readyz at once while reviews are still answered, and a
 * burst into one quota through two replicas admits exactly what fits (the follower hands quota
 * admissions to the leader, which decides them in one ledger).
 *
 * The replicas sit behind test/harness/balancer.ts: readiness probed every 1 s, each answer
 * taking effect 1 s later, so a replica that stops being ready still gets new connections for
 * up to 2 s.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { messageOf, statusOf } from '../../operator/kube/errors.js';
import { splitPemCertificates } from '../../operator/certificates/x509.js';
import { TcpBalancer } from '../harness/balancer.js';
import {
  clusterKubeConfig,
  createPod,
  installCrds,
  kubectl,
  podReadyNamespace,
  testNamespace,
  waitFor,
} from '../harness/cluster.js';
import {
  deleteConfigurations,
  httpGet,
  httpsCall,
  logsMatching,
  readSecret,
  secretValue,
  startOperator,
  waitForPublishedSecret,
  type StartOptions,
} from '../harness/operator.js';
import { Replicas, podStream, type Attempt } from '../harness/replicas.js';
import { kubeconfigPath } from '../../scripts/cluster/layout.js';
import { kubeconfigThrough, TcpProxy } from '../harness/tcp-proxy.js';
import type { OperatorProcess } from '../harness/operator.js';

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

/** The drain the replicas run with: the chart's default, above the balancer's 2 s removal window. */
const SHUTDOWN_DELAY = '5s';

interface Setup {
  balancer: TcpBalancer;
  replicas: Replicas;
  namespace: string;
  workload: string;
}

/** Two (or `count`) replicas behind a balancer, in service, and a namespace their pod webhooks see. */
async function replicated(
  t: TestContext,
  options: Omit<StartOptions, 'namespace' | 'port' | 'webhookPort'> = {},
  count = 2,
  /** What the n-th replica started gets on top of `options` (its own kubeconfig, say). */
  perReplica: (n: number) => Partial<StartOptions> = () => ({}),
): Promise<Setup> {
  // Registered first, so it runs first: a replica still running would recreate what is deleted.
  const started: { replicas?: Replicas } = {};
  t.after(async () => {
    await Promise.all((started.replicas?.members ?? []).map((replica) => replica.stop('SIGKILL')));
    await deleteConfigurations();
  });
  const namespace = await testNamespace(t, 'op');
  const workload = await podReadyNamespace(t);
  const balancer = new TcpBalancer();
  await balancer.listen();
  t.after(() => balancer.close());
  let startedCount = 0;
  const replicas = new Replicas(
    balancer,
    (start) => startOperator(t, { ...start, ...perReplica(startedCount++) }),
    {
      namespace,
      shutdownDelay: SHUTDOWN_DELAY,
      ...options,
    },
  );
  started.replicas = replicas;
  // The first replica issues the Secret before the others start; replicas starting at the same
  // instant are covered by certificate-rotation.test.ts.
  await replicas.add();
  await waitForPublishedSecret(namespace, 30_000);
  for (let i = 1; i < count; i++) await replicas.add();
  for (const replica of replicas.members) await replicas.inService(replica);
  await waitFor('a pod admitted through the balancer', () => createPod(workload), { timeoutMs: 30_000 });
  return { balancer, replicas, namespace, workload };
}

function failuresOf(attempts: readonly Attempt[]): Attempt[] {
  return attempts.filter((attempt) => attempt.error !== undefined);
}

function summary(attempts: readonly Attempt[]): string {
  const failed = failuresOf(attempts);
  const first = failed.slice(0, 3).map((attempt) => attempt.error);
  return `${attempts.length - failed.length} admitted, ${failed.length} failed${first.length ? `: ${first.join(' | ')}` : ''}`;
}

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

/** Refusals by the API server (a webhook's or its own) other than for the quota. */
function otherRefusals({ refusals }: BurstResult): [string, number][] {
  return [...refusals].filter(([message]) => !QUOTA_EXCEEDED.test(message));
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
  return { replicas, leaderIndex, leader, follower, quotas, metric, leaders, burstInto, forwards };
}

async function burstExactly(
  t: TestContext,
  { burst, runs, options = {} }: { burst: number; runs: number; options?: Parameters<typeof replicated>[1] },
): Promise<void> {
  const { quotas, leaderIndex, burstInto, forwards } = await quotaBurst(t, { burst, runs, options });
  const before = {
    answered: await forwards('answered'),
    failed: await forwards('failed'),
    busy: await forwards('busy'),
  };
  const results: BurstResult[] = [];
  for (const quota of quotas) results.push(await burstInto(quota));
  const admittedPerRun = results.map((result) => result.admitted);
  const answered = (await forwards('answered')) - before.answered;
  const failed = (await forwards('failed')) - before.failed;
  const busy = (await forwards('busy')) - before.busy;
  const outcomes = results.map(describeBurst).join('; ');
  t.diagnostic(
    `${burst} concurrent 500m pods into a ${burst / 4}-CPU quota, 2 replicas, ${runs} runs: ${outcomes}; ` +
      `the follower handed ${answered} admissions to the leader (replica ${leaderIndex}), ${failed} forwards failed, ${busy} were decided locally as busy`,
  );
  assert.deepEqual(
    admittedPerRun,
    Array.from({ length: runs }, () => burst / 2),
    outcomes,
  );
  assert.deepEqual(results.flatMap(otherRefusals), [], 'every refusal is for the quota');
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

/** Lease timings (the chart's defaults): the follower's view of the lease lapses after this long. */
const LEASE_DURATION_MS = 15_000;

/**
 * Two replicas, and a burst while one of them cannot reach the API server though the API server
 * still calls it (a saturated or partitioned control plane): first the follower (its view of the
 * lease lapses), then the leader (its renewals stall, the follower takes the lease over).
 */
async function burstWithLeaseInDoubt(t: TestContext): Promise<void> {
  const { proxies, perReplica } = await proxiedReplicas(t);
  const setup = await quotaBurst(t, { burst: LOST_BURST, runs: 2, perReplica });
  const { replicas, leaderIndex, follower, leader, quotas, metric, burstInto } = setup;
  const followerIndex = replicas.members.indexOf(follower);
  const room = LOST_BURST / 2;
  const alone = async (replica: OperatorProcess): Promise<number> =>
    metric(replica.metricsPort, 'admission_quota_decided_without_leader_total');

  // 1. The follower's API server stops answering it for longer than a lease duration.
  proxies[followerIndex]!.hold();
  await sleep(LEASE_DURATION_MS + 2000);
  const aloneBefore1 = await alone(follower);
  const burst1 = await burstInto(quotas[0]!);
  const admitted1 = burst1.admitted;
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
  const admitted2 = burst2.admitted;
  const alone2 = (await alone(leader)) + (await alone(follower)) - aloneBefore2;
  proxies[leaderIndex]!.release();
  t.diagnostic(
    `leader cut off from the API server, the follower took the lease after ${tookOverAfter} ms: ` +
      `${LOST_BURST} into room for ${room}: ${describeBurst(burst2)}; ${alone2} decided by a replica neither leading nor knowing a leader; ` +
      `handovers logged by the old leader: ${logsMatching(leader, /handed quota decisions over/).length}`,
  );
  assert.equal(admitted1, room, `follower cut off: ${describeBurst(burst1)}`);
  assert.equal(admitted2, room, `leader cut off, the lease taken over: ${describeBurst(burst2)}`);
}

describe('several replicas behind one address', () => {
  it('refuses no pod while every replica is restarted one at a time under 20 creates/s', async (t) => {
    const { balancer, replicas, workload } = await replicated(t);
    const stream = podStream(workload, 20);
    await sleep(2000);
    for (let index = 0; index < replicas.members.length; index++) {
      const { exitCode } = await replicas.restart(index);
      assert.equal(exitCode, 0, `replica ${index} exits cleanly after its drain`);
      await sleep(1000);
    }
    await sleep(2000);
    const attempts = await stream.stop();
    t.diagnostic(`rolling restart of 2 replicas: ${summary(attempts)}`);
    t.diagnostic(`connections per replica port: ${JSON.stringify(balancer.stats().connections)}`);
    assert.deepEqual(failuresOf(attempts), []);
    assert.ok(attempts.length > 100, `only ${attempts.length} creates were tried`);
  });

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

  it('answers /readyz 503 at once on SIGTERM (measured, target 100 ms) while reviews are still answered during the delay', async (t) => {
    const { replicas, namespace, workload } = await replicated(t);
    const ca = secretValue(await readSecret(namespace), 'ca.crt');
    const stream = podStream(workload, 20);
    await sleep(1000);
    // The API server takes the idle connection it returned last (Go's pool is a stack), so at
    // 20 creates/s its reviews ride one connection: the replica signalled is the one that answered
    // the latest review. One merely holding connections can see none in the whole delay (CI did).
    const lastDecision = (member: (typeof replicas.members)[number]): number =>
      Math.max(0, ...logsMatching(member, /admission decision/).map((line) => Number(line.time)));
    const replica = await waitFor(
      'a replica to have answered a review in the last 200 ms',
      () => {
        const [latest, other] = [...replicas.members].sort((a, b) => lastDecision(b) - lastDecision(a));
        const at = latest ? lastDecision(latest) : 0;
        const fresh = latest && Date.now() - at < 200 && (!other || lastDecision(other) < at);
        return Promise.resolve(fresh ? latest : undefined);
      },
      { timeoutMs: 10_000, intervalMs: 20 },
    );
    assert.equal((await httpsCall(replica.port, '/readyz', { ca })).status, 200);
    const signalled = Date.now();
    replica.child.kill('SIGTERM');
    // Polled as fast as a request comes back; the first 503 bounds the time from above.
    const firstUnready = await waitFor(
      '/readyz to answer 503',
      async () =>
        (await httpsCall(replica.port, '/readyz', { ca })).status === 503 ? Date.now() : undefined,
      { timeoutMs: 5000, intervalMs: 5 },
    );
    const unreadyAfter = firstUnready - signalled;
    const exitCode = await replica.exited;
    const exitedAfter = Date.now() - signalled;
    await sleep(1000);
    const attempts = await stream.stop();
    // When the replica itself turned unready (its log line follows the switch in the same tick), apart
    // from how long the probe's TLS handshake took on a loaded machine.
    const drainLogged = logsMatching(replica, /shutting down: \/readyz fails/)[0];
    // Reviews the API server sent to the draining replica and got answered once it was unready: from
    // its own switch, since at 20 creates/s the one review on a connection can fall between the switch
    // and the probe's first 503 (CI saw 16 ms and 49 ms), and the connection closes after it.
    const unreadySince = drainLogged ? Math.min(Number(drainLogged.time), firstUnready) : firstUnready;
    const drained = logsMatching(replica, /admission decision/).filter(
      (line) => Number(line.time) > unreadySince,
    ).length;
    const switchedAfter = drainLogged ? `${Number(drainLogged.time) - signalled} ms` : 'not logged';
    t.diagnostic(
      `after SIGTERM: /readyz 503 within ${unreadyAfter} ms (the replica switched ${switchedAfter} after the ` +
        `signal); ${drained} reviews answered by the draining ` +
        `replica after that; exited ${exitedAfter} ms after the signal (delay ${SHUTDOWN_DELAY}); ` +
        `creates meanwhile: ${summary(attempts)}`,
    );
    // The figure (9-89 ms when measured) is reported above; the assertion only separates "at once"
    // from "after the drain": a shared machine's scheduling is not the operator's speed.
    assert.ok(unreadyAfter < 1000, `/readyz failed ${unreadyAfter} ms after SIGTERM`);
    assert.ok(drained > 0, 'the API server was answered by the draining replica after /readyz failed');
    assert.ok(exitedAfter >= 5000, 'it served for the whole delay');
    assert.deepEqual(
      logsMatching(replica, /shutdown grace over/),
      [],
      'no connection held the stop for the whole shutdown grace',
    );
    assert.equal(exitCode, 0);
    assert.deepEqual(failuresOf(attempts), []);
  });

  // Only the elected leader rotates: before leader election, the two replicas fought over the
  // caBundle during a rotation and about 35 creates failed.
  it('refuses no pod across a CA rotation with two replicas under load, with at most two CAs in the bundle', async (t) => {
    const { replicas, namespace, workload } = await replicated(t, {
      args: [
        '--cert-lifetime=6s',
        '--cert-renew-before=3s',
        '--ca-lifetime=24s',
        '--ca-renew-before=10s',
        '--bundle-propagation=1s',
      ],
    });
    const caSerials = new Set<string>();
    let mostCas = 0;
    let stop = false;
    const observer = (async (): Promise<void> => {
      while (!stop) {
        const bundle = splitPemCertificates(secretValue(await readSecret(namespace), 'ca.crt'));
        mostCas = Math.max(mostCas, bundle.length);
        for (const pem of bundle) caSerials.add(new X509Certificate(pem).serialNumber);
        await sleep(200);
      }
    })();
    const initialCas = await waitFor('the first CA', () => Promise.resolve(caSerials.size || undefined));
    const stream = podStream(workload, 20);
    await waitFor('a CA rotation', () => Promise.resolve(caSerials.size >= initialCas + 1), {
      timeoutMs: 60_000,
      intervalMs: 500,
    });
    // Past the rotation's serving-certificate switch (bundle propagation and a serving renewal).
    await sleep(8000);
    const attempts = await stream.stop();
    stop = true;
    await observer;
    t.diagnostic(
      `CA rotation with 2 replicas: ${summary(attempts)}; ${caSerials.size} CAs seen, at most ${mostCas} in the bundle`,
    );
    assert.deepEqual(failuresOf(attempts), []);
    assert.ok(mostCas <= 2, `${mostCas} CAs in the bundle`);
    assert.ok(attempts.length > 100);
    for (const replica of replicas.members) assert.equal(replica.child.exitCode, null);
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
