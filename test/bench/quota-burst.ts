/**
 * Exact quota at an AI job's burst: replicas behind one address (as a Deployment behind its
 * Service), concurrent 500m pod creates through the API server into a quota with room for a part
 * of them. Printed, never asserted (a miss is information, not a failure).
 *
 * Flags (or QUOTA_BURST_* in the environment): --burst=N pods (default 1000), --room=N pods that
 * fit (default half the burst), --replicas=N (default 2), --rounds=N, --modes=verified,unverified
 * (verified: the API server proves itself with its client certificate; unverified: verification
 * off, nothing reserves; network: verification off but --trust-network-callers, the managed
 * clusters' mode), --shapes=clients,replicaset (N client-side creates at once; or a ReplicaSet of
 * N, the controller's own shape), --kill-leader=1 (one more burst per mode in which the leader is
 * killed with -9 once half the creates have ended), --cut-leader=1 (one more burst per mode once the
 * leader's connections to the API server are held, the API server still calling its webhook, and
 * another replica has taken the lease over: leadership in doubt), --stop-leader=1 (one more burst per mode
 * once the leader is stopped with SIGSTOP and another replica has taken the lease over; the old
 * leader is resumed 5 s into the burst, the API server's calls held on its connections waiting for
 * it: a holder that has not seen the takeover), --client=admin|tenant (who sends the
 * client-side creates: the admin, whom flow control exempts, so that all of them reach the
 * webhooks at once, by default; or a ServiceAccount of the namespace, as a tenant's controller,
 * queued by flow control and retrying its 429s as client-go does), --probe-timeout-ms=N (how long the
 * balancer's readiness probe waits: the chart's 5 s by default; 1000 is the kubelet's default).
 *
 * Each burst reports: admitted, refused by reason (exceeded quota, a webhook that could not be
 * called, anything else), the p50/p99 of the client's create latency and of the pod webhooks'
 * admission latency as the API server measures it (its histogram: the bucket's upper bound), and
 * the replicas' forward outcomes (answered, failed, busy, batches sent).
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OutgoingHttpHeaders } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Agent, request } from 'node:https';
import type { TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  RbacAuthorizationV1Api,
  type V1Pod,
} from '@kubernetes/client-node';
import { PROBE_TIMEOUT_MS, TcpBalancer } from '../harness/balancer.js';
import { clusterKubeConfig, installCrds, kubectl, waitFor } from '../harness/cluster.js';
import {
  deleteConfigurations,
  httpGet,
  startOperator,
  waitForPublishedSecret,
  type OperatorProcess,
} from '../harness/operator.js';
import { Replicas } from '../harness/replicas.js';
import { kubeconfigThrough, TcpProxy } from '../harness/tcp-proxy.js';
import { kubeconfigPath } from '../../scripts/cluster/layout.js';
import { inform, percentile } from './report.js';
import {
  NOOP_LABEL,
  NOOP_WEBHOOK_NAMES,
  startNoopReference,
  type CallType,
  type NoopReference,
} from './noop-webhook-reference.js';

const QUOTA_LABEL = 'quota.scheduling.koordinator.sh/name';
const REQUEST_MILLICPU = 500;

export type BurstMode = 'verified' | 'unverified' | 'network';
export type BurstShape = 'clients' | 'replicaset';

export interface QuotaBurstSettings {
  burst: number;
  room: number;
  replicas: number;
  rounds: number;
  modes: BurstMode[];
  shapes: BurstShape[];
  killLeader: boolean;
  cutLeader: boolean;
  stopLeader: boolean;
  client: 'tenant' | 'admin';
  /** How long the balancer's readiness probe waits (the chart's timeoutSeconds; the kubelet's default is 1 s). */
  probeTimeoutMs: number;
}

/** The settings from the bench's flags, else QUOTA_BURST_* variables, else the defaults. */
export function quotaBurstSettings(flags: ReadonlyMap<string, string>, rounds: number): QuotaBurstSettings {
  const read = (name: string): string | undefined =>
    flags.get(name) ?? process.env[`QUOTA_BURST_${name.toUpperCase().replaceAll('-', '_')}`];
  const count = (name: string, fallback: number): number => {
    const value = Number(read(name) ?? fallback);
    if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} must be a positive integer`);
    return value;
  };
  const list = <T extends string>(name: string, allowed: readonly T[], fallback: T[]): T[] => {
    const text = read(name);
    if (text === undefined) return fallback;
    const items = text.split(',').filter((item) => item !== '');
    for (const item of items)
      if (!(allowed as readonly string[]).includes(item))
        throw new Error(`--${name} takes ${allowed.join(', ')}; got ${item}`);
    return items as T[];
  };
  const burst = count('burst', 1000);
  return {
    burst,
    room: count('room', Math.floor(burst / 2)),
    replicas: count('replicas', 2),
    rounds,
    modes: list('modes', ['verified', 'unverified', 'network'] as const, ['verified', 'unverified']),
    shapes: list('shapes', ['clients', 'replicaset'] as const, ['clients', 'replicaset']),
    killLeader: read('kill-leader') === '1',
    cutLeader: read('cut-leader') === '1',
    stopLeader: read('stop-leader') === '1',
    client: read('client') === 'tenant' ? 'tenant' : 'admin',
    probeTimeoutMs: count('probe-timeout-ms', PROBE_TIMEOUT_MS),
  };
}

/** A counter's or histogram series' value, summed over the series whose labels include `labels`. */
function sampleSum(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const match = /^[^{ ]+(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const seriesLabels = match[1] ?? '';
    if (Object.entries(labels).every(([key, value]) => seriesLabels.includes(`${key}="${value}"`)))
      total += Number(match[2]);
  }
  return total;
}

interface ForwardCounts {
  answered: number;
  failed: number;
  busy: number;
  batches: number;
  batched: number;
  /** Not forwards: the CPU the replicas spent (s), and their pod reviews answered in ≤ 100 ms, of all. */
  cpu: number;
  fast: number;
  reviews: number;
  /** Connections the replicas dropped at their connection cap. */
  dropped: number;
  /** Quota reviews a replica decided alone while it neither led nor knew a leader (a second decider). */
  alone: number;
  /**
   * The replicas' worst event-loop delay (ms) since the previous scrape (prom-client resets its
   * histogram at each): the longest any request waited for the loop, TLS handshakes included.
   */
  loopMaxMs: number;
}

async function forwardCounts(replicas: readonly OperatorProcess[]): Promise<ForwardCounts> {
  const counts: ForwardCounts = {
    answered: 0,
    failed: 0,
    busy: 0,
    batches: 0,
    batched: 0,
    cpu: 0,
    fast: 0,
    reviews: 0,
    dropped: 0,
    alone: 0,
    loopMaxMs: 0,
  };
  for (const replica of replicas) {
    if (replica.child.exitCode !== null || replica.child.signalCode !== null) continue;
    if (stoppedReplicas.has(replica)) continue;
    const text = await httpGet(replica.metricsPort, '/metrics')
      .then((answer) => answer.body)
      .catch(() => '');
    for (const result of ['answered', 'failed', 'busy'] as const)
      counts[result] += sampleSum(text, 'admission_quota_forward_total', { result });
    counts.batches += sampleSum(text, 'admission_quota_forward_batch_reviews_count', { side: 'sent' });
    counts.batched += sampleSum(text, 'admission_quota_forward_batch_reviews_sum', { side: 'sent' });
    counts.cpu += sampleSum(text, 'process_cpu_seconds_total');
    counts.fast += sampleSum(text, 'admission_request_duration_seconds_bucket', { le: '0.1' });
    counts.reviews += sampleSum(text, 'admission_request_duration_seconds_count');
    counts.dropped += sampleSum(text, 'admission_connections_dropped_total');
    counts.alone += sampleSum(text, 'admission_quota_decided_without_leader_total');
    counts.loopMaxMs = Math.max(counts.loopMaxMs, sampleSum(text, 'nodejs_eventloop_lag_max_seconds') * 1000);
  }
  return counts;
}

/**
 * The kernel's count of connections refused because a listen queue was full (TcpExt
 * ListenOverflows; ListenDrops adds the SYNs dropped for any reason): the client hears nothing and
 * retransmits its SYN after 1 s, then 3 s, 7 s. Undefined where /proc/net/netstat is not Linux's.
 */
async function listenOverflows(): Promise<{ overflows: number; drops: number } | undefined> {
  const text = await readFile('/proc/net/netstat', 'utf8').catch(() => '');
  const lines = text.split('\n').filter((line) => line.startsWith('TcpExt:'));
  const [names, values] = lines.map((line) => line.split(/\s+/).slice(1));
  if (!names || !values) return undefined;
  const value = (name: string): number => Number(values[names.indexOf(name)]);
  return { overflows: value('ListenOverflows'), drops: value('ListenDrops') };
}

/** The control plane's processes, by the name the kernel knows them by. */
const CONTROL_PLANE = ['kube-apiserver', 'etcd', 'kube-controller-manager'] as const;

/**
 * CPU-seconds used so far: the machine's (all cores, busy time) and, on Linux, each control-plane
 * process's, each replica's and this process's (the client's creates and the balancer). Where the
 * burst's time goes on a 2-core machine is what these split.
 */
async function cpuSeconds(
  replicas: readonly OperatorProcess[],
  others: ReadonlyMap<string, readonly number[]> = new Map(),
): Promise<Map<string, number>> {
  const seconds = new Map<string, number>();
  const ticks = 100; // USER_HZ: /proc's unit on every Linux architecture Node runs on
  const stat = await readFile('/proc/stat', 'utf8').catch(() => '');
  const cpu = /^cpu\s+(.*)$/m.exec(stat)?.[1]?.split(/\s+/).map(Number);
  if (!cpu) return seconds;
  // user nice system idle iowait irq softirq steal: busy is all but idle and iowait.
  const busy = cpu
    .slice(0, 8)
    .reduce((sum, value, index) => (index === 3 || index === 4 ? sum : sum + value), 0);
  seconds.set('machine', busy / ticks);
  const processTime = async (pid: number): Promise<{ name: string; seconds: number } | undefined> => {
    const text = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    const close = text.lastIndexOf(')');
    if (close < 0) return undefined;
    const fields = text.slice(close + 2).split(' ');
    // utime and stime: fields 14 and 15 of stat, 12 and 13 after the name.
    return {
      name: text.slice(text.indexOf('(') + 1, close),
      seconds: (Number(fields[11]) + Number(fields[12])) / ticks,
    };
  };
  for (const entry of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const usage = await processTime(Number(entry));
    if (usage && (CONTROL_PLANE as readonly string[]).includes(usage.name))
      seconds.set(usage.name, (seconds.get(usage.name) ?? 0) + usage.seconds);
  }
  let total = 0;
  for (const replica of replicas) {
    const usage = replica.child.pid === undefined ? undefined : await processTime(replica.child.pid);
    total += usage?.seconds ?? 0;
  }
  if (replicas.length > 0) seconds.set('replicas', total);
  for (const [name, pids] of others) {
    let sum = 0;
    for (const pid of pids) sum += (await processTime(pid))?.seconds ?? 0;
    seconds.set(name, sum);
  }
  const own = process.cpuUsage();
  seconds.set('bench', (own.user + own.system) / 1e6);
  return seconds;
}

/** The API server's /metrics text (tens of MiB: more than kubectl's output buffer here). */
async function apiServerMetrics(): Promise<string> {
  const kubeConfig = await clusterKubeConfig();
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig names no cluster');
  const options: {
    ca?: Buffer | string;
    cert?: Buffer | string;
    key?: Buffer | string;
    headers?: OutgoingHttpHeaders;
  } = {};
  await kubeConfig.applyToHTTPSOptions(options);
  return new Promise((resolvePromise, reject) => {
    const req = request(
      new URL('/metrics', cluster.server),
      {
        ...(options.ca ? { ca: options.ca } : {}),
        ...(options.cert ? { cert: options.cert } : {}),
        ...(options.key ? { key: options.key } : {}),
        headers: options.headers ?? {},
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          resolvePromise(Buffer.concat(chunks).toString('utf8'));
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** The operator's pod webhooks, by the names the API server's metrics label them with. */
const OUR_POD_WEBHOOKS = /^(mutate|validate)-pod\./;

/**
 * The API server's histogram of pod-create admission latency for the webhooks `names` matches:
 * bucket bound -> cumulative count.
 */
async function webhookLatency(names: RegExp = OUR_POD_WEBHOOKS): Promise<Map<number, number>> {
  const stdout = await apiServerMetrics();
  const buckets = new Map<number, number>();
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('apiserver_admission_webhook_admission_duration_seconds_bucket{')) continue;
    const name = /name="([^"]+)"/.exec(line)?.[1];
    if (!name || !names.test(name) || !line.includes('operation="CREATE"')) continue;
    const match = /le="([^"]+)"\} (\S+)$/.exec(line);
    if (!match) continue;
    const bound = match[1] === '+Inf' ? Number.POSITIVE_INFINITY : Number(match[1]);
    buckets.set(bound, (buckets.get(bound) ?? 0) + Number(match[2]));
  }
  return buckets;
}

/** Pod-create webhook calls so far by webhook name, with their type (admit or validating). */
async function webhookCalls(names: RegExp): Promise<Map<string, { type: CallType; calls: number }>> {
  const calls = new Map<string, { type: CallType; calls: number }>();
  for (const line of (await apiServerMetrics()).split('\n')) {
    if (!line.startsWith('apiserver_admission_webhook_admission_duration_seconds_count{')) continue;
    const name = /name="([^"]+)"/.exec(line)?.[1];
    const type = /type="([^"]+)"/.exec(line)?.[1];
    if (!name || !names.test(name) || !line.includes('operation="CREATE"')) continue;
    if (type !== 'admit' && type !== 'validating') continue;
    const seen = calls.get(name) ?? { type, calls: 0 };
    seen.calls += Number(/\} (\S+)$/.exec(line)?.[1] ?? 0);
    calls.set(name, seen);
  }
  return calls;
}

/**
 * The calls one burst pod meets from the operator's webhooks at create, measured (20 creates into
 * the warm-up quota): what the no-op reference registers as many of.
 */
async function callsPerCreate(setup: Setup, warmUp: string): Promise<CallType[]> {
  const creates = 20;
  const before = await webhookCalls(OUR_POD_WEBHOOKS);
  await Promise.all(Array.from({ length: creates }, () => setup.client(setup.workload, podIn(warmUp))));
  const after = await webhookCalls(OUR_POD_WEBHOOKS);
  const types: CallType[] = [];
  for (const [name, { type, calls }] of after) {
    const each = Math.round((calls - (before.get(name)?.calls ?? 0)) / creates);
    for (let i = 0; i < each; i++) types.push(type);
  }
  return types;
}

/** The upper bound (ms) of the bucket holding the p-th percentile of the calls between two reads. */
function bucketPercentile(before: Map<number, number>, after: Map<number, number>, p: number): number {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const total = (after.get(Number.POSITIVE_INFINITY) ?? 0) - (before.get(Number.POSITIVE_INFINITY) ?? 0);
  for (const bound of bounds) {
    const count = (after.get(bound) ?? 0) - (before.get(bound) ?? 0);
    if (count >= (p / 100) * total) return bound * 1000;
  }
  return Number.NaN;
}

export function reasonOf(message: string): string {
  if (message.includes('exceeded quota')) return 'exceeded quota';
  if (/failed calling webhook/i.test(message)) return 'webhook not called';
  if (/timeout|deadline/i.test(message)) return 'timeout';
  // The bench's own connection to the API server failed (1,000 sockets at once): no answer at all.
  if (message.startsWith('no answer:')) return 'client connection';
  return 'other';
}

/**
 * A client of the workload namespace's ServiceAccount `burst` (allowed to edit there), as a
 * tenant's job controller is: the API server's flow control queues its requests, where the admin's
 * (system:masters, exempt) all reach the webhooks at the same instant.
 */
async function tenantClient(admin: KubeConfig, namespace: string, ...alsoIn: string[]): Promise<PodCreator> {
  const core = admin.makeApiClient(CoreV1Api);
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'burst' } } });
  // The reference burst goes to the operator's namespace: allowed there too.
  for (const bound of [namespace, ...alsoIn]) {
    await rbac.createNamespacedRoleBinding({
      namespace: bound,
      body: {
        metadata: { name: 'burst-edit' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
        subjects: [{ kind: 'ServiceAccount', name: 'burst', namespace }],
      },
    });
  }
  const token = await core.createNamespacedServiceAccountToken({
    namespace,
    name: 'burst',
    body: { spec: { expirationSeconds: 3600, audiences: [] } },
  });
  const cluster = admin.getCurrentCluster();
  if (!cluster || !token.status?.token) throw new Error('no cluster, or no token for the tenant');
  const tenant = new KubeConfig();
  tenant.loadFromOptions({
    clusters: [cluster],
    users: [{ name: 'tenant', token: token.status.token }],
    contexts: [{ name: 'tenant', cluster: cluster.name, user: 'tenant' }],
    currentContext: 'tenant',
  });
  return podCreator(tenant);
}

/** Connections the bench opens to the API server at most: 5,000 at once fail to connect here. */
const MAX_CLIENT_CONNECTIONS = 1000;

/** A create's failure: the API server's status code and message, or none when it never answered. */
class CreateError extends Error {
  constructor(
    message: string,
    readonly code?: number,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

export type PodCreator = (namespace: string, body: V1Pod) => Promise<void>;

/** Pod creates over one keep-alive pool of at most MAX_CLIENT_CONNECTIONS, as the kubeconfig's user. */
export async function podCreator(kubeConfig: KubeConfig): Promise<PodCreator> {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig names no cluster');
  const options: {
    ca?: Buffer | string;
    cert?: Buffer | string;
    key?: Buffer | string;
    headers?: OutgoingHttpHeaders;
  } = {};
  await kubeConfig.applyToHTTPSOptions(options);
  const agent = new Agent({
    keepAlive: true,
    maxSockets: MAX_CLIENT_CONNECTIONS,
    ...(options.ca ? { ca: options.ca } : {}),
    ...(options.cert ? { cert: options.cert } : {}),
    ...(options.key ? { key: options.key } : {}),
  });
  return (namespace, body) =>
    new Promise((resolvePromise, reject) => {
      const text = JSON.stringify(body);
      const req = request(
        new URL(`/api/v1/namespaces/${namespace}/pods`, cluster.server),
        {
          method: 'POST',
          agent,
          headers: {
            ...(options.headers ?? {}),
            'Content-Type': 'application/json',
            Accept: 'application/json',
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            if (status >= 200 && status < 300) {
              resolvePromise();
              return;
            }
            const answer = Buffer.concat(chunks).toString('utf8');
            let message = answer;
            try {
              message = (JSON.parse(answer) as { message?: string }).message ?? answer;
            } catch {
              // Not a Status: the body itself says what happened.
            }
            const retryAfter = Number(res.headers['retry-after']);
            reject(new CreateError(message, status, Number.isFinite(retryAfter) ? retryAfter : undefined));
          });
          res.on('error', reject);
        },
      );
      req.on('error', (error) => {
        reject(new CreateError(`no answer: ${error.message}`));
      });
      req.end(text);
    });
}

interface Setup {
  balancer: TcpBalancer;
  replicas: Replicas;
  core: CoreV1Api;
  /** Who sends the client-side burst: the admin (exempt from flow control) or a tenant. */
  client: PodCreator;
  apps: AppsV1Api;
  workload: string;
  namespace: string;
  /** Each replica's own way to the API server, in the order started, when set up to be cut off. */
  proxies: TcpProxy[];
  /** A quota with room for everything, which every replica knows. */
  warmUp: string;
  finish: () => Promise<void>;
}

async function setUp(
  settings: QuotaBurstSettings,
  mode: BurstMode,
  suffix: string,
  proxied = false,
): Promise<Setup> {
  const afters: (() => Promise<unknown> | undefined)[] = [];
  const t = { after: (fn: () => Promise<unknown> | undefined) => afters.push(fn) } as unknown as TestContext;
  const kubeConfig = await clusterKubeConfig();
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const apps = kubeConfig.makeApiClient(AppsV1Api);
  const namespace = `bench-burst-op-${suffix}`;
  const workload = `bench-burst-${suffix}`;
  for (const name of [namespace, workload]) await core.createNamespace({ body: { metadata: { name } } });
  const balancer = new TcpBalancer({ probeTimeoutMs: settings.probeTimeoutMs });
  await balancer.listen();
  const proxies: TcpProxy[] = [];
  const dir = proxied ? await mkdtemp(join(tmpdir(), 'quota-burst-')) : undefined;
  const startProxied = async (): Promise<Record<string, string>> => {
    if (!dir) return {};
    const { target } = await kubeconfigThrough(kubeconfigPath, dir, 0);
    const proxy = await TcpProxy.start(target);
    proxies.push(proxy);
    return { KUBECONFIG: (await kubeconfigThrough(kubeconfigPath, dir, proxy.port)).path };
  };
  const replicas = new Replicas(
    balancer,
    async (start) => startOperator(t, { ...start, env: await startProxied() }),
    {
      namespace,
      verifyCallers: mode === 'verified',
      // Decisions logged at info, as the chart runs it (tests log at debug); the last flag wins.
      args: ['--log-level=info', ...(mode === 'network' ? ['--trust-network-callers=true'] : [])],
    },
  );
  const finish = async (): Promise<void> => {
    await Promise.all(replicas.members.map((replica) => replica.stop('SIGKILL')));
    await deleteConfigurations();
    await balancer.close();
    await Promise.all(proxies.map((proxy) => proxy.close()));
    if (dir) await rm(dir, { recursive: true, force: true });
    for (const after of afters) await after();
    for (const name of [workload, namespace]) await core.deleteNamespace({ name }).catch(() => undefined);
  };
  try {
    await deleteConfigurations();
    await replicas.add();
    await waitForPublishedSecret(namespace, 30_000);
    for (let i = 1; i < settings.replicas; i++) await replicas.add();
    for (const replica of replicas.members) await replicas.inService(replica);
    await waitFor('the default ServiceAccount', () =>
      core.readNamespacedServiceAccount({ namespace: workload, name: 'default' }),
    );
    // Quota names are the cluster's, not a namespace's (Koordinator refuses a second of a name).
    const warmUp = `warm-up-${suffix}`;
    await applyQuota(workload, warmUp, 1_000_000);
    await knownQuota(replicas, warmUp);
    // Followers learn the leader's address from the Lease within a retry period: until each has
    // had a forward answered, a burst would be decided in two places.
    if (mode !== 'unverified') {
      await waitFor(
        'every follower to hand a quota admission to the leader',
        async () => {
          await Promise.all(
            Array.from({ length: 8 * settings.replicas }, () =>
              core.createNamespacedPod({ namespace: workload, body: podIn(warmUp) }),
            ),
          );
          return (await followersAnswered(replicas)) === settings.replicas - 1;
        },
        { timeoutMs: 60_000, intervalMs: 500 },
      );
    }
    const client =
      settings.client === 'tenant'
        ? await tenantClient(kubeConfig, workload, namespace)
        : await podCreator(kubeConfig);
    return { balancer, replicas, core, client, apps, workload, namespace, proxies, warmUp, finish };
  } catch (error) {
    await finish();
    throw error;
  }
}

async function followersAnswered(replicas: Replicas): Promise<number> {
  let answered = 0;
  for (const replica of replicas.members) {
    const text = (await httpGet(replica.metricsPort, '/metrics')).body;
    if (sampleSum(text, 'admission_quota_forward_total', { result: 'answered' }) > 0) answered += 1;
  }
  return answered;
}

async function leaderOf(replicas: Replicas): Promise<OperatorProcess> {
  return waitFor('one leader', async () => {
    for (const replica of replicas.members) {
      const text = (await httpGet(replica.metricsPort, '/metrics')).body;
      if (sampleSum(text, 'admission_leader') === 1) return replica;
    }
    return undefined;
  });
}

export function podIn(quota: string, labels: Record<string, string> = {}): V1Pod {
  return {
    metadata: { generateName: `${quota}-`, labels: { [QUOTA_LABEL]: quota, ...labels } },
    spec: {
      containers: [
        {
          name: 'main',
          image: 'registry.invalid/app:1',
          resources: { requests: { cpu: `${REQUEST_MILLICPU}m` } },
        },
      ],
    },
  };
}

export async function applyQuota(namespace: string, name: string, pods: number): Promise<void> {
  await kubectl(
    ['apply', '-f', '-'],
    `apiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: ElasticQuota\nmetadata: {name: ${name}, namespace: ${namespace}}\nspec: {min: {cpu: "0"}, max: {cpu: "${pods * REQUEST_MILLICPU}m"}}\n`,
  );
}

/** Every live replica must know the quota before the burst (a pod naming an unknown quota is refused). */
async function knownQuota(replicas: Replicas, quota: string): Promise<void> {
  for (const replica of replicas.members) {
    if (stoppedReplicas.has(replica)) continue;
    await waitFor(`replica ${replica.port} to know quota ${quota}`, async () => {
      const view = JSON.parse((await httpGet(replica.metricsPort, '/elasticQuota')).body) as {
        quotas: Record<string, unknown>;
      };
      return quota in view.quotas;
    });
  }
}

interface BurstResult {
  admitted: number;
  refused: Map<string, number>;
  createMs: number[];
  webhookP50: number;
  webhookP99: number;
  forwards: ForwardCounts;
  seconds: number;
  /** This process's event-loop delay, p99 (ms): it runs the balancer. */
  benchLoopP99: number;
  /** New connections to the replicas during the burst: each a TLS handshake. */
  connections: number;
  /** The balancer's connections that found no ready replica (or were refused), and readiness lost. */
  balancer: { failed: number; turnedUnready: number };
  /** How long each kubelet-like readiness probe of a replica took during the burst (ms), sorted. */
  probesMs: number[];
  /** CPU-seconds used during the burst: the machine's and its processes' (see cpuSeconds). */
  cpu: Map<string, number>;
  /** The machine's listen-queue overflows and drops during the burst (any listener). */
  listen: { overflows: number; drops: number } | undefined;
}

async function clientBurst(
  setup: Setup,
  settings: QuotaBurstSettings,
  quota: string,
  kill: boolean,
  namespace = setup.workload,
  labels: Record<string, string> = {},
) {
  const { client } = setup;
  const workload = namespace;
  const leader = kill ? await leaderOf(setup.replicas) : undefined;
  const killed = leader ? killHalfway(setup, settings, leader) : undefined;
  const createMs: number[] = [];
  const refused = new Map<string, number>();
  const samples = new Map<string, string>();
  let admitted = 0;
  await Promise.all(
    Array.from({ length: settings.burst }, async () => {
      const started = performance.now();
      try {
        await createRetrying(client, workload, podIn(quota, labels));
        admitted += 1;
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        const reason = reasonOf(message);
        refused.set(reason, (refused.get(reason) ?? 0) + 1);
        if (reason !== 'exceeded quota' && !samples.has(reason)) samples.set(reason, message.slice(0, 300));
      }
      createMs.push(performance.now() - started);
    }),
  );
  const decidedBeforeKill = await killed;
  if (decidedBeforeKill !== undefined)
    console.log(`      the leader was killed with ${decidedBeforeKill} of the burst's reviews decided`);
  for (const [reason, message] of samples) console.log(`      ${reason}, e.g.: ${message}`);
  return { admitted, refused, createMs };
}

/**
 * Kills the leader with -9 once the replicas have decided half the burst's reviews (the creates
 * themselves all end together, so their count says nothing of how far the decisions are); the
 * reviews decided by then.
 */
async function killHalfway(
  setup: Setup,
  settings: QuotaBurstSettings,
  leader: OperatorProcess,
): Promise<number> {
  const members = setup.replicas.members;
  const before = (await forwardCounts(members)).reviews;
  const deadline = performance.now() + 60_000;
  for (;;) {
    const decided = (await forwardCounts(members)).reviews - before;
    if (decided >= settings.burst / 2 || performance.now() > deadline) {
      await leader.stop('SIGKILL');
      return decided;
    }
    await sleep(20);
  }
}

/** Until a replica other than `leader` holds the lease. */
async function anotherLeads(setup: Setup, leader: OperatorProcess): Promise<void> {
  await waitFor(
    'another replica to take the lease',
    async () => {
      for (const replica of setup.replicas.members) {
        if (replica === leader) continue;
        const text = (await httpGet(replica.metricsPort, '/metrics')).body;
        if (sampleSum(text, 'admission_leader') === 1) return true;
      }
      return false;
    },
    { timeoutMs: 90_000, intervalMs: 250 },
  );
}

/**
 * Holds the leader's connections to the API server (its renewals stall; the API server still calls
 * its webhook) until another replica leads; how long that took.
 */
async function cutLeaderOff(setup: Setup): Promise<number> {
  const leader = await leaderOf(setup.replicas);
  const proxy = setup.proxies[setup.replicas.members.indexOf(leader)];
  if (!proxy) throw new Error('the replicas were not set up behind proxies');
  proxy.hold();
  const heldAt = performance.now();
  await anotherLeads(setup, leader);
  return performance.now() - heldAt;
}

/** When the stopped leader is resumed into the burst (--stop-leader). */
const RESUME_AFTER_MS = 5000;

/** Replicas stopped with SIGSTOP: their metrics port answers nothing until they are resumed. */
const stoppedReplicas = new WeakSet<OperatorProcess>();

/** Stops the leader with SIGSTOP until another replica leads; the stopped one, and how long that took. */
async function stopLeader(setup: Setup): Promise<{ stopped: OperatorProcess; tookOverMs: number }> {
  const leader = await leaderOf(setup.replicas);
  leader.child.kill('SIGSTOP');
  stoppedReplicas.add(leader);
  const stoppedAt = performance.now();
  await anotherLeads(setup, leader);
  return { stopped: leader, tookOverMs: performance.now() - stoppedAt };
}

/** A create retried on 429 after the Retry-After the API server names, as client-go retries it. */
export async function createRetrying(create: PodCreator, namespace: string, body: V1Pod): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await create(namespace, body);
      return;
    } catch (error) {
      if (!(error instanceof CreateError) || error.code !== 429 || attempt >= 10) throw error;
      await sleep((error.retryAfterSeconds ?? 1) * 1000 * (0.5 + Math.random()));
    }
  }
}

/**
 * The kubelet's readiness probe of each replica, every second during a burst (the chart's period is
 * 2 s; each probe costs a replica two handshakes, its own and /readyz's TLS self-check): a new TLS
 * connection each time (the kubelet keeps none), one probe at a time per replica; the time each took
 * to be answered, capped at 5 s. The chart's probe fails a replica whose answer takes over its timeoutSeconds.
 */
function probeDuring(replicas: readonly OperatorProcess[]): { stop: () => Promise<number[]> } {
  let stopped = false;
  const took: number[] = [];
  const probeOnce = (port: number): Promise<void> =>
    new Promise((resolvePromise) => {
      const started = performance.now();
      const done = (): void => {
        took.push(performance.now() - started);
        resolvePromise();
      };
      const req = request(
        { host: '127.0.0.1', port, path: '/readyz', agent: false, rejectUnauthorized: false, timeout: 5000 },
        (res) => {
          res.resume();
          res.on('end', done);
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', done);
      req.end();
    });
  const loops = replicas.map(async (replica) => {
    while (!stopped) {
      await probeOnce(replica.port);
      await sleep(1000);
    }
  });
  return {
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
      return took.sort((a, b) => a - b);
    },
  };
}

/** kube-controller-manager's default --kube-api-qps, which the local control plane keeps. */
const CONTROLLER_QPS = 20;

async function replicaSetBurst(setup: Setup, settings: QuotaBurstSettings, quota: string) {
  const { apps, core, workload } = setup;
  const template = podIn(quota);
  await apps.createNamespacedReplicaSet({
    namespace: workload,
    body: {
      metadata: { name: quota },
      spec: {
        replicas: settings.burst,
        selector: { matchLabels: { [QUOTA_LABEL]: quota } },
        template: { metadata: { labels: { [QUOTA_LABEL]: quota } }, spec: template.spec },
      },
    },
  });
  // The controller keeps trying the refused creates (with its back-off): admitted is what stays.
  let last = -1;
  let stableSince = performance.now();
  const count = async (): Promise<number> =>
    (await core.listNamespacedPod({ namespace: workload, labelSelector: `${QUOTA_LABEL}=${quota}` })).items
      .length;
  await waitFor(
    'the ReplicaSet to stop growing',
    async () => {
      const now = await count();
      if (now !== last) {
        last = now;
        stableSince = performance.now();
      }
      return now >= settings.room && performance.now() - stableSince > 5000;
    },
    // The controller creates at its client's rate (kube-controller-manager's --kube-api-qps, 20 by
    // default): 2,500 admitted alone take 125 s, so the bound follows the room.
    { timeoutMs: Math.max(120_000, (2 * settings.room * 1000) / CONTROLLER_QPS), intervalMs: 500 },
  );
  const events = await core.listNamespacedEvent({
    namespace: workload,
    fieldSelector: `involvedObject.name=${quota},reason=FailedCreate`,
  });
  const refused = new Map<string, number>();
  for (const event of events.items) {
    const reason = reasonOf(event.message ?? '');
    refused.set(reason, (refused.get(reason) ?? 0) + (event.count ?? 1));
  }
  const admitted = await count();
  // Its pods stay (they hold the quota); the controller stops retrying, so the next burst is alone.
  await apps.deleteNamespacedReplicaSet({ namespace: workload, name: quota, propagationPolicy: 'Orphan' });
  return { admitted, refused, createMs: [] as number[] };
}

async function burstOnce(
  setup: Setup,
  settings: QuotaBurstSettings,
  shape: BurstShape,
  quota: string,
  kill: boolean,
  /** Run beside the burst (resuming a stopped replica, say). */
  alongside?: () => Promise<void>,
): Promise<BurstResult> {
  await applyQuota(setup.workload, quota, settings.room);
  await knownQuota(setup.replicas, quota);
  const forwardsBefore = await forwardCounts(setup.replicas.members);
  const latencyBefore = await webhookLatency();
  const connectionsBefore = totalConnections(setup.balancer);
  const balancerBefore = setup.balancer.stats();
  const listenBefore = await listenOverflows();
  const logsBefore = setup.replicas.members.map((replica) => replica.logs.length);
  const cpuBefore = await cpuSeconds(setup.replicas.members);
  // The balancer runs in this process: its delay is the harness's, not the operator's.
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const probes = probeDuring(setup.replicas.members);
  const started = performance.now();
  const beside = alongside?.();
  const { admitted, refused, createMs } =
    shape === 'clients'
      ? await clientBurst(setup, settings, quota, kill)
      : await replicaSetBurst(setup, settings, quota);
  await beside;
  const seconds = (performance.now() - started) / 1000;
  const probesMs = await probes.stop();
  loop.disable();
  const connections = totalConnections(setup.balancer) - connectionsBefore;
  const balancerAfter = setup.balancer.stats();
  const listenAfter = await listenOverflows();
  const cpuAfter = await cpuSeconds(setup.replicas.members);
  leadershipChanges(setup.replicas.members, logsBefore);
  const benchLoopP99 = loop.percentile(99) / 1e6;
  const latencyAfter = await webhookLatency();
  const forwardsAfter = await forwardCounts(setup.replicas.members);
  const forwards = Object.fromEntries(
    Object.entries(forwardsAfter).map(([key, value]) => [
      key,
      value - forwardsBefore[key as keyof ForwardCounts],
    ]),
  ) as unknown as ForwardCounts;
  return {
    admitted,
    refused,
    createMs: createMs.sort((a, b) => a - b),
    webhookP50: bucketPercentile(latencyBefore, latencyAfter, 50),
    webhookP99: bucketPercentile(latencyBefore, latencyAfter, 99),
    forwards,
    seconds,
    benchLoopP99,
    connections,
    probesMs,
    balancer: {
      failed: balancerAfter.failedConnections - balancerBefore.failedConnections,
      turnedUnready: balancerAfter.turnedUnready - balancerBefore.turnedUnready,
    },
    cpu: new Map([...cpuAfter].map(([name, value]) => [name, value - (cpuBefore.get(name) ?? 0)])),
    listen:
      listenBefore && listenAfter
        ? {
            overflows: listenAfter.overflows - listenBefore.overflows,
            drops: listenAfter.drops - listenBefore.drops,
          }
        : undefined,
  };
}

/**
 * Prints the replicas' leadership transitions logged during the burst: a leader that could not
 * renew its Lease in time (the API server is what a burst saturates) leaves the quota to be
 * decided in more than one place until a leader is known again.
 */
function leadershipChanges(replicas: readonly OperatorProcess[], logsBefore: readonly number[]): void {
  replicas.forEach((replica, index) => {
    for (const line of replica.logs.slice(logsBefore[index] ?? 0)) {
      if (!/being the leader|became the leader/.test(line)) continue;
      let entry: { msg?: string; reason?: string; time?: number } = {};
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        continue;
      }
      console.log(
        `      replica ${replica.port}: ${entry.msg ?? ''} (${entry.reason ?? ''}) at ${new Date(entry.time ?? 0).toISOString()}`,
      );
    }
  });
}

/** Connections the balancer has passed to the replicas (the API server's, mostly, and the forwards'). */
function totalConnections(balancer: TcpBalancer): number {
  return Object.values(balancer.stats().connections).reduce((sum, count) => sum + count, 0);
}

/** A burst of the no-op reference: the same creates, met by webhooks that do nothing. */
interface NoopResult {
  createMs: number[];
  refused: number;
  webhookP50: number;
  webhookP99: number;
  seconds: number;
  connections: number;
  cpu: Map<string, number>;
}

async function noopBurst(
  setup: Setup,
  settings: QuotaBurstSettings,
  noop: NoopReference,
): Promise<NoopResult> {
  const latencyBefore = await webhookLatency(NOOP_WEBHOOK_NAMES);
  const servers = new Map([['no-op servers', noop.pids()]]);
  const cpuBefore = await cpuSeconds([], servers);
  const connectionsBefore = noop.connections();
  const started = performance.now();
  const { createMs, refused } = await clientBurst(setup, settings, 'noop-reference', false, setup.namespace, {
    [NOOP_LABEL]: 'true',
  });
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = await cpuSeconds([], servers);
  const latencyAfter = await webhookLatency(NOOP_WEBHOOK_NAMES);
  return {
    createMs: createMs.sort((a, b) => a - b),
    refused: [...refused.values()].reduce((sum, count) => sum + count, 0),
    webhookP50: bucketPercentile(latencyBefore, latencyAfter, 50),
    webhookP99: bucketPercentile(latencyBefore, latencyAfter, 99),
    seconds,
    connections: noop.connections() - connectionsBefore,
    cpu: new Map([...cpuAfter].map(([name, value]) => [name, value - (cpuBefore.get(name) ?? 0)])),
  };
}

function showNoop(label: string, result: NoopResult, reference: number[]): void {
  const ratio = (p: number): string =>
    reference.length > 0
      ? ` (${(percentile(result.createMs, p) / percentile(reference, p)).toFixed(2)} ×)`
      : '';
  console.log(
    `info  ${label}: create p50 ${percentile(result.createMs, 50).toFixed(0)} ms${ratio(50)}, ` +
      `p99 ${percentile(result.createMs, 99).toFixed(0)} ms${ratio(99)} against no webhook; ` +
      `webhook p50 ≤ ${result.webhookP50} ms, p99 ≤ ${result.webhookP99} ms (API server's buckets); ` +
      `${result.refused} refused; ${result.seconds.toFixed(1)} s; ${result.connections} new connections`,
  );
  console.log(
    `      CPU-seconds in the burst's ${result.seconds.toFixed(1)} s: ` +
      [...result.cpu].map(([name, value]) => `${name} ${value.toFixed(1)}`).join(', '),
  );
}

function show(
  label: string,
  result: BurstResult,
  settings: QuotaBurstSettings,
  reference: number[],
  noop?: NoopResult,
): void {
  const refused = [...result.refused].map(([reason, count]) => `${reason} ${count}`).join(', ') || 'none';
  const { forwards } = result;
  const create =
    result.createMs.length > 0
      ? `create p50 ${percentile(result.createMs, 50).toFixed(0)} ms, p99 ${percentile(result.createMs, 99).toFixed(0)} ms` +
        (reference.length > 0
          ? ` (${(percentile(result.createMs, 50) / percentile(reference, 50)).toFixed(2)} ×, ` +
            `${(percentile(result.createMs, 99) / percentile(reference, 99)).toFixed(2)} × the reference)`
          : '') +
        '; '
      : '';
  console.log(
    `info  ${label}: admitted ${result.admitted} (room ${settings.room}); refused: ${refused}; ` +
      `${create}webhook p50 ≤ ${result.webhookP50} ms, p99 ≤ ${result.webhookP99} ms (API server's buckets` +
      (noop
        ? `; the no-op reference's just before: p50 ≤ ${noop.webhookP50} ms, p99 ≤ ${noop.webhookP99} ms, create ` +
          `p50 ${percentile(noop.createMs, 50).toFixed(0)} ms, p99 ${percentile(noop.createMs, 99).toFixed(0)} ms`
        : '') +
      '); ' +
      `forwards answered ${forwards.answered}, failed ${forwards.failed}, busy ${forwards.busy}, ` +
      `decided without a leader ${forwards.alone}, ` +
      `${forwards.batches} batches (mean ${(forwards.batched / Math.max(1, forwards.batches)).toFixed(1)}); ${result.seconds.toFixed(1)} s; ` +
      (forwards.reviews > 0
        ? `replicas' CPU ${forwards.cpu.toFixed(1)} s, their handlers ≤ 100 ms for ${forwards.fast} of ${forwards.reviews} reviews; `
        : "the survivors' counters only (the leader's died with it); ") +
      `the replicas' event loop delay max ${forwards.loopMaxMs.toFixed(0)} ms, ${forwards.dropped} connections dropped at their cap; ` +
      `the balancer's event loop delay p99 ${result.benchLoopP99.toFixed(0)} ms; ${result.connections} new connections to the replicas, ` +
      `${result.balancer.failed} failed at the balancer, a replica turned unready ${result.balancer.turnedUnready} times (readiness probe); ` +
      `readiness probes (a new TLS connection each, every second) answered in p50 ${percentile(result.probesMs, 50).toFixed(0)} ms, ` +
      `max ${(result.probesMs.at(-1) ?? 0).toFixed(0)} ms, ${result.probesMs.filter((ms) => ms > 1000).length} of ${result.probesMs.length} over 1 s; ` +
      (result.listen
        ? `listen queue overflows ${result.listen.overflows}, SYNs dropped ${result.listen.drops} (the machine's)`
        : 'listen queue overflows unknown here'),
  );
  if (result.cpu.size > 0)
    console.log(
      `      CPU-seconds in the burst's ${result.seconds.toFixed(1)} s (${navigator.hardwareConcurrency} cores): ` +
        [...result.cpu].map(([name, value]) => `${name} ${value.toFixed(1)}`).join(', ') +
        `; ${(result.connections / result.seconds).toFixed(0)} new connections (TLS handshakes) a second`,
    );
}

/**
 * The same burst into the operator's own namespace, which no pod webhook sees (a failurePolicy=Fail
 * webhook never blocks it): what 1,000 creates cost this API server without us, in the same run.
 */
async function referenceBurst(setup: Setup, settings: QuotaBurstSettings): Promise<number[]> {
  const { createMs } = await clientBurst(setup, settings, 'reference', false, setup.namespace);
  return createMs.sort((a, b) => a - b);
}

/**
 * Starts the no-op reference for this setup: as many servers as replicas, as many calls of each
 * type as a burst pod meets from the operator, in effect once the API server calls it.
 */
async function noopReference(setup: Setup): Promise<NoopReference> {
  const calls = await callsPerCreate(setup, setup.warmUp);
  console.log(
    `info  a burst pod meets ${calls.length} calls of the operator's webhooks at create ` +
      `(${calls.join(', ')}); the no-op reference registers as many, of the same types`,
  );
  const noop = await startNoopReference(setup.replicas.members.length, calls, setup.namespace);
  try {
    await waitFor(
      'the API server to call the no-op reference',
      async () => {
        const before = await webhookCalls(NOOP_WEBHOOK_NAMES);
        await setup.client(setup.namespace, podIn('noop-reference', { [NOOP_LABEL]: 'true' }));
        const after = await webhookCalls(NOOP_WEBHOOK_NAMES);
        const total = (calls: typeof after): number =>
          [...calls.values()].reduce((sum, entry) => sum + entry.calls, 0);
        return total(after) - total(before) >= calls.length;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
  } catch (error) {
    await noop.close();
    throw error;
  }
  return noop;
}

export async function benchQuotaBurst(settings: QuotaBurstSettings): Promise<void> {
  await installCrds('elasticquotas.scheduling.sigs.k8s.io');
  console.log(
    `quota burst: ${settings.burst} concurrent ${REQUEST_MILLICPU}m creates into room for ${settings.room}, ` +
      `${settings.replicas} replicas behind one address, ${settings.rounds} rounds per shape, client-side creates as the ${settings.client} ` +
      `over at most ${MAX_CLIENT_CONNECTIONS} connections`,
  );
  for (const mode of settings.modes) {
    const suffix = `${mode[0] ?? 'm'}${Date.now().toString(36)}`;
    const setup = await setUp(settings, mode, suffix);
    let referenceMs: number[] = [];
    let noop: NoopReference | undefined;
    try {
      if (settings.shapes.includes('clients')) {
        const reference = await referenceBurst(setup, settings);
        console.log(
          `info  reference: the same ${settings.burst} creates where no webhook is called: create p50 ` +
            `${percentile(reference, 50).toFixed(0)} ms, p99 ${percentile(reference, 99).toFixed(0)} ms`,
        );
        referenceMs = reference;
        noop = await noopReference(setup);
      }
      for (const shape of settings.shapes) {
        const admitted: number[] = [];
        const ours: number[] = [];
        const noops: number[] = [];
        const rounds = shape === 'clients' ? settings.rounds : 1;
        for (let round = 0; round < rounds; round++) {
          const quota = `${shape}-${round}-${suffix}`;
          // Just before each client-side round: the machine's weather moves between rounds.
          const noopResult = shape === 'clients' && noop ? await noopBurst(setup, settings, noop) : undefined;
          if (noopResult) showNoop(`no-op reference, round ${round + 1}`, noopResult, referenceMs);
          const result = await burstOnce(setup, settings, shape, quota, false);
          show(
            `quota burst, ${mode}, ${shape}, round ${round + 1}`,
            result,
            settings,
            referenceMs,
            noopResult,
          );
          admitted.push(result.admitted);
          if (noopResult) {
            ours.push(result.webhookP99);
            noops.push(noopResult.webhookP99);
          }
        }
        inform(
          `quota burst ${settings.burst}→${settings.room}, ${settings.replicas} replicas, ${mode}, ${shape}: worst of ${rounds}`,
          Math.max(...admitted),
          'pods',
        );
        if (ours.length > 0)
          console.log(
            `info  webhook p99 bucket bounds, ours against the no-op reference's of the same round: ` +
              ours.map((bound, i) => `${bound} / ${noops[i] ?? '?'} ms`).join(', '),
          );
      }
    } finally {
      await noop?.close();
      await setup.finish();
    }
    // A fresh set of replicas for each: the killed leader's successor has its own history.
    for (let round = 0; settings.killLeader && round < settings.rounds; round++) {
      const killSetup = await setUp(settings, mode, `${suffix}k${round}`);
      try {
        const result = await burstOnce(killSetup, settings, 'clients', `kill-${round}-${suffix}`, true);
        show(
          `quota burst, ${mode}, leader killed (-9) at half the burst, round ${round + 1}`,
          result,
          settings,
          [],
        );
      } finally {
        await killSetup.finish();
      }
    }
    for (let round = 0; settings.stopLeader && round < settings.rounds; round++) {
      const stopSetup = await setUp(settings, mode, `${suffix}s${round}`);
      try {
        const quota = `stop-${round}-${suffix}`;
        await applyQuota(stopSetup.workload, quota, settings.room);
        await knownQuota(stopSetup.replicas, quota);
        const { stopped, tookOverMs } = await stopLeader(stopSetup);
        const result = await burstOnce(stopSetup, settings, 'clients', quota, false, async () => {
          // After the new leader's handover to it has timed out (the forward's 4 s), before the
          // API server gives up the calls held on its connections (the webhooks' 10 s).
          await sleep(RESUME_AFTER_MS);
          stopped.child.kill('SIGCONT');
          stoppedReplicas.delete(stopped);
        });
        show(
          `quota burst, ${mode}, the leader stopped (SIGSTOP) until the lease was taken over after ${(tookOverMs / 1000).toFixed(1)} s, resumed ${RESUME_AFTER_MS / 1000} s into the burst, round ${round + 1}`,
          result,
          settings,
          [],
        );
      } finally {
        await stopSetup.finish();
      }
    }
    for (let round = 0; settings.cutLeader && round < settings.rounds; round++) {
      const cutSetup = await setUp(settings, mode, `${suffix}c${round}`, true);
      try {
        const quota = `cut-${round}-${suffix}`;
        // Known to every replica first: the one cut off sees nothing new from then on.
        await applyQuota(cutSetup.workload, quota, settings.room);
        await knownQuota(cutSetup.replicas, quota);
        const tookOver = await cutLeaderOff(cutSetup);
        const result = await burstOnce(cutSetup, settings, 'clients', quota, false);
        show(
          `quota burst, ${mode}, the leader cut off from the API server (lease taken over after ${(tookOver / 1000).toFixed(1)} s), round ${round + 1}`,
          result,
          settings,
          [],
        );
      } finally {
        await cutSetup.finish();
      }
    }
  }
}
