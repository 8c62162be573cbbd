/**
 * Side by side with koord-manager (`npm run bench -- koord-manager`): Koordinator v1.8.0's webhooks
 * as its chart runs them (koord-manager built from its Go module, its chart's configurations, flags
 * and gates plus quota admission: test/harness/koord-manager.ts), ours as the image runs it, and no
 * webhook at all, in turn on the same local control plane, round after round:
 *
 * - burst: --burst (1,000) concurrent 500m creates into an ElasticQuota with room for --room (500),
 *   with 1 and 2 replicas (--replicas=1,2) behind one address: admitted, refused by reason, create p50/p99;
 * - steady: --steady (1,000) creates at --rate (20/s) into a governed namespace (a quota with room
 *   for all), with the charts' 2 replicas: create p50/p99, as ratios to no webhook;
 * - decisions: every create one side refused and the other admitted on the steady creates, the
 *   burst's refusal messages, and the fields the two mutating webhooks add to the same pod;
 * - --scale-pods=N (off by default): N pods created first (in --scale-namespaces namespaces), then
 *   each webhook process started on them alone: start to Ready and peak RSS (VmHWM).
 *
 * Both webhook processes sit behind the same two relays (relay.ts) and the same balancer; each
 * order of the three is rotated from round to round. Printed, never asserted.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { freePorts } from '../../scripts/cluster/control-plane.js';
import { kubeconfigPath, repoRoot } from '../../scripts/cluster/layout.js';
import { ensureKoordManager, KOORD_MANAGER_VERSION } from '../../scripts/upstream/koord-manager.js';
import { TcpBalancer } from '../harness/balancer.js';
import { clientVerificationArgs, clusterKubeConfig, kubectl, waitFor } from '../harness/cluster.js';
import { KOORD_MANAGER_GATES } from '../harness/koord-manager-chart.js';
import {
  applyKoordinatorConfigurations,
  applyKoordinatorObjects,
  deleteKoordinatorConfigurations,
  renderKoordinatorChart,
  startKoordManagerReplica,
  startRelayedProcess,
  type KoordinatorRender,
  type RelayedReplica,
} from '../harness/koord-manager.js';
import { deleteConfigurations, httpGet } from '../harness/operator.js';
import { kubeconfigThrough } from '../harness/tcp-proxy.js';
import { apiClient } from '../harness/scale-objects.js';
import { ensureScaleObjects } from './audit-scale.js';
import { applyQuota, podCreator, podIn, reasonOf, type PodCreator } from './quota-burst.js';
import { inform, percentile, record } from './report.js';
import { differingPaths, messageShape, podShape, QUOTA_LABEL } from './koord-manager-decisions.js';
import { rotation, type SideBySideSettings, type System } from './koord-manager-settings.js';
import { imageEntryPoint } from './state-cluster.js';

/** The webhook processes of one system, behind one balancer (none: no process, no configuration). */
interface Deployed {
  system: System;
  replicas: RelayedReplica[];
  /** From each process's start to its first passed readiness probe. */
  readyMs: number[];
  /** When each process was started (performance.now()). */
  startedAt: number[];
  stop: () => Promise<void>;
  /** Ours with several replicas: how many followers have had a quota admission answered by the leader. */
  followersReady?: () => Promise<number>;
}

interface Context {
  /** The scale part's figures, by size and system. */
  scale: { readyMs: Map<string, number[]>; decidedMs: Map<string, number[]>; peak: Map<string, number[]> };
  render: KoordinatorRender;
  binary: string;
  creator: PodCreator;
  core: CoreV1Api;
  suffix: string;
}

/** How long a process sits on the scale objects once Ready before its peak is read: its controllers' first pass. */
const SCALE_SETTLE_MS = 20_000;

let sequence = 0;
const unique = (ctx: Context, prefix: string): string =>
  `${prefix}-${ctx.suffix}-${(sequence++).toString(36)}`;

/** Starts a process behind the balancer and waits for its readiness: resolves with its start-to-Ready. */
async function inService(
  balancer: TcpBalancer,
  start: () => Promise<RelayedReplica>,
): Promise<[RelayedReplica, number, number]> {
  const started = performance.now();
  const replica = await start();
  balancer.add(replica.backendPort, replica.probe);
  const probe = replica.probe ?? ((timeoutMs: number) => httpsReady(replica.backendPort, timeoutMs));
  await waitFor('the webhook process to be ready', () => probe(5000), { timeoutMs: 600_000, intervalMs: 50 });
  const readyMs = performance.now() - started;
  await waitFor('the balancer to send it connections', () =>
    Promise.resolve(balancer.readyPorts().includes(replica.backendPort)),
  );
  return [replica, readyMs, started];
}

async function httpsReady(port: number, timeoutMs: number): Promise<boolean> {
  const { request } = await import('node:https');
  return new Promise((resolvePromise) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/readyz',
        rejectUnauthorized: false,
        timeout: timeoutMs,
        agent: false,
      },
      (res) => {
        res.resume();
        resolvePromise(res.statusCode === 200);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => {
      resolvePromise(false);
    });
    req.end();
  });
}

/**
 * koord-manager with every controller off (`--controllers` naming none: its controllers run on the
 * leader only, its webhooks on every replica): what its webhooks alone hold at a cluster's size.
 */
const WEBHOOKS_ONLY = ['--controllers=none'];

async function deployKoordManager(
  ctx: Context,
  count: number,
  extraArgs: readonly string[] = [],
): Promise<Deployed> {
  const [port] = (await freePorts(1)) as [number];
  const balancer = new TcpBalancer({ port });
  await balancer.listen();
  await deleteConfigurations();
  await applyKoordinatorConfigurations(ctx.render);
  // A Lease left by the last run's managers would hold their controllers (not their webhooks) back.
  await kubectl(['-n', ctx.render.namespace, 'delete', 'lease', 'koordinator-manager', '--ignore-not-found']);
  const replicas: RelayedReplica[] = [];
  const readyMs: number[] = [];
  const startedAt: number[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(replicas.map((replica) => replica.stop()));
    await balancer.close();
    await deleteKoordinatorConfigurations(ctx.render);
  };
  try {
    for (let i = 0; i < count; i++) {
      const [replica, ms, at] = await inService(balancer, () =>
        startKoordManagerReplica(ctx.binary, ctx.render, port, extraArgs),
      );
      replicas.push(replica);
      readyMs.push(ms);
      startedAt.push(at);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { system: 'koord-manager', replicas, readyMs, startedAt, stop };
}

async function deployOurs(ctx: Context, count: number): Promise<Deployed> {
  const namespace = unique(ctx, 'bench-km-op');
  await ctx.core.createNamespace({ body: { metadata: { name: namespace } } });
  const balancer = new TcpBalancer();
  await balancer.listen();
  await deleteKoordinatorConfigurations(ctx.render);
  await deleteConfigurations();
  const dir = await mkdtemp(join(tmpdir(), 'bench-km-ours-'));
  const image = imageEntryPoint();
  const verification = await clientVerificationArgs();
  const replicas: RelayedReplica[] = [];
  const metricsPorts: number[] = [];
  const readyMs: number[] = [];
  const startedAt: number[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(replicas.map((replica) => replica.stop()));
    await balancer.close();
    await deleteConfigurations();
    await rm(dir, { recursive: true, force: true });
    await ctx.core.deleteNamespace({ name: namespace }).catch(() => undefined);
  };
  try {
    for (let i = 0; i < count; i++) {
      const [port, metricsPort, apiRelayPort] = (await freePorts(3)) as [number, number, number];
      const kubeconfig = (await kubeconfigThrough(kubeconfigPath, dir, apiRelayPort)).path;
      const [replica, ms, at] = await inService(balancer, () =>
        startRelayedProcess({
          apiRelayPort,
          port,
          command: [
            process.execPath,
            ...image.nodeFlags,
            image.script,
            `--namespace=${namespace}`,
            `--port=${port}`,
            `--webhook-port=${balancer.port}`,
            '--bind-address=127.0.0.1',
            `--metrics-bind-address=127.0.0.1:${metricsPort}`,
            // The chart's level (values.yaml logLevel) and caller verification, as quota-burst runs it.
            '--log-level=info',
            '--shutdown-delay=0s',
            ...verification,
          ],
          env: { ...image.env, KUBECONFIG: kubeconfig },
        }),
      );
      replicas.push(replica);
      metricsPorts.push(metricsPort);
      readyMs.push(ms);
      startedAt.push(at);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    system: 'ours',
    replicas,
    readyMs,
    startedAt,
    stop,
    ...(count > 1 ? { followersReady: () => followersAnswered(metricsPorts) } : {}),
  };
}

/** Replicas of ours that have had a quota admission answered by the leader (quota-burst's warm-up check). */
async function followersAnswered(metricsPorts: readonly number[]): Promise<number> {
  let answered = 0;
  for (const port of metricsPorts) {
    const text = (await httpGet(port, '/metrics')).body;
    if (/^admission_quota_forward_total\{[^}]*result="answered"[^}]*\} [1-9]/m.test(text)) answered += 1;
  }
  return answered;
}

async function deploy(ctx: Context, system: System, count: number): Promise<Deployed> {
  if (system === 'koord-manager') return deployKoordManager(ctx, count);
  if (system === 'ours') return deployOurs(ctx, count);
  await deleteConfigurations();
  await deleteKoordinatorConfigurations(ctx.render);
  return { system, replicas: [], readyMs: [], startedAt: [], stop: () => Promise.resolve() };
}

/** A pod far past any quota: refused without being counted, with a message saying whether the quota is known. */
function oversized(quota: string): V1Pod {
  const pod = podIn(quota);
  const container = pod.spec?.containers[0];
  if (container) container.resources = { requests: { cpu: '100000' } };
  return pod;
}

/**
 * Waits until the webhooks know `quota`: a dry-run pod far past it is refused for exceeding it (not
 * for naming an unknown quota, nor admitted by a webhook that has not seen it; dry run, so that
 * nothing is stored or counted either way).
 */
async function quotaKnown(ctx: Context, deployed: Deployed, namespace: string, quota: string): Promise<void> {
  const followers = deployed.followersReady;
  if (followers) {
    // Followers learn the leader from its Lease: until each has had a forward answered, a burst
    // would be decided in two places (quota-burst's warm-up, into a quota of its own).
    const warm = `${quota}-warm-up`;
    await applyQuota(namespace, warm, 1_000_000);
    await waitFor(
      'every follower to hand a quota admission to the leader',
      async () => {
        await Promise.all(
          Array.from({ length: 8 }, () => ctx.creator(namespace, podIn(warm)).catch(() => undefined)),
        );
        return (await followers()) === deployed.replicas.length - 1;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
  }
  // Several in a row: the API server's connections reach every replica, each with its own cache.
  let known = 0;
  await waitFor(
    `the webhooks to know quota ${quota}`,
    async () => {
      try {
        await ctx.core.createNamespacedPod({ namespace, body: oversized(quota), dryRun: 'All' });
        known = 0;
        return false;
      } catch (error) {
        known = /exceed/i.test(String(error)) ? known + 1 : 0;
        return known >= 4 * Math.max(1, deployed.replicas.length);
      }
    },
    { timeoutMs: 60_000, intervalMs: 50 },
  );
}

async function workNamespace(ctx: Context, prefix: string): Promise<string> {
  const name = unique(ctx, prefix);
  await ctx.core.createNamespace({ body: { metadata: { name } } });
  await waitFor('the default ServiceAccount', () =>
    ctx.core.readNamespacedServiceAccount({ namespace: name, name: 'default' }),
  );
  return name;
}

async function dropNamespace(ctx: Context, name: string): Promise<void> {
  await kubectl(['delete', 'namespace', name, '--wait=true', '--timeout=300s']).catch(() => undefined);
}

interface Creates {
  admitted: number;
  refused: Map<string, number>;
  /** One message per refusal reason, and every refusal's message with its count. */
  messages: Map<string, number>;
  createMs: number[];
  /** The creates refused, by their index (the steady creates': which one). */
  refusedAt: Map<number, string>;
}

function emptyCreates(): Creates {
  return { admitted: 0, refused: new Map(), messages: new Map(), createMs: [], refusedAt: new Map() };
}

async function createOne(
  ctx: Context,
  namespace: string,
  body: V1Pod,
  into: Creates,
  index: number,
): Promise<void> {
  const started = performance.now();
  try {
    await ctx.creator(namespace, body);
    into.admitted += 1;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const reason = reasonOf(message);
    into.refused.set(reason, (into.refused.get(reason) ?? 0) + 1);
    // Numbers differ from refusal to refusal (used, requested): the message's shape is what is compared.
    const quota = body.metadata?.labels?.[QUOTA_LABEL] ?? '';
    const shape = messageShape(message, { [namespace]: '<namespace>', [quota]: '<quota>' });
    into.messages.set(shape, (into.messages.get(shape) ?? 0) + 1);
    into.refusedAt.set(index, shape);
  }
  into.createMs.push(performance.now() - started);
}

async function firstPodShape(namespace: string): Promise<Record<string, unknown> | undefined> {
  const { stdout } = await kubectl(['-n', namespace, 'get', 'pods', '-l', 'bench-shape=true', '-o', 'json']);
  const pod = (JSON.parse(stdout) as { items: V1Pod[] }).items[0];
  return pod ? podShape(pod) : undefined;
}

async function burstOnce(ctx: Context, deployed: Deployed, settings: SideBySideSettings): Promise<Creates> {
  const namespace = await workNamespace(ctx, 'bench-km-burst');
  try {
    const quota = unique(ctx, 'burst');
    await applyQuota(namespace, quota, settings.room);
    if (deployed.system !== 'none') await quotaKnown(ctx, deployed, namespace, quota);
    const result = emptyCreates();
    await Promise.all(
      Array.from({ length: settings.burst }, (_, index) =>
        createOne(ctx, namespace, podIn(quota), result, index),
      ),
    );
    result.createMs.sort((a, b) => a - b);
    return result;
  } finally {
    await dropNamespace(ctx, namespace);
  }
}

/** Creates paced at `rate` a second (each started on time, whatever the ones before it take). */
async function steadyOnce(
  ctx: Context,
  deployed: Deployed,
  settings: SideBySideSettings,
): Promise<{ creates: Creates; shape: Record<string, unknown> | undefined }> {
  const namespace = await workNamespace(ctx, 'bench-km-steady');
  try {
    const quota = unique(ctx, 'steady');
    await applyQuota(namespace, quota, settings.steady * 10);
    if (deployed.system !== 'none') await quotaKnown(ctx, deployed, namespace, quota);
    const result = emptyCreates();
    const started = performance.now();
    const creates: Promise<void>[] = [];
    for (let index = 0; index < settings.steady; index++) {
      const due = started + (index * 1000) / settings.rate;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const labels: Record<string, string> = index === 0 ? { 'bench-shape': 'true' } : {};
      creates.push(createOne(ctx, namespace, podIn(quota, labels), result, index));
    }
    await Promise.all(creates);
    result.createMs.sort((a, b) => a - b);
    return { creates: result, shape: await firstPodShape(namespace) };
  } finally {
    await dropNamespace(ctx, namespace);
  }
}

/** The peak resident memory of a process so far (VmHWM), MiB. */
async function peakRssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN) / 1024;
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : (sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN);
};

type Key = string;
const key = (system: System, replicas: number): Key =>
  system === 'none' ? 'no webhook' : `${system} ×${replicas}`;

interface Tally {
  admitted: Map<Key, number[]>;
  p50: Map<Key, number[]>;
  p99: Map<Key, number[]>;
  messages: Map<Key, Map<string, number>>;
  steadyP50: Map<System, number[]>;
  steadyP99: Map<System, number[]>;
  steadyRefused: Map<System, Map<number, string>[]>;
  shapes: Map<System, Record<string, unknown> | undefined>;
  readyMs: Map<Key, number[]>;
}

function push<K>(map: Map<K, number[]>, k: K, value: number): void {
  map.set(k, [...(map.get(k) ?? []), value]);
}

/**
 * Each webhook process alone on the scale objects (audit-scale's, created once per kept cluster):
 * start to Ready, then the peak resident memory after its caches have settled. koord-manager runs
 * as its chart runs it (its controllers on the leader, caching what they watch) and again with
 * its controllers off: that second figure is its webhooks' share.
 */
async function scalePart(ctx: Context, settings: SideBySideSettings): Promise<void> {
  // No webhook while the objects are created.
  await deploy(ctx, 'none', 0);
  const size = {
    pods: settings.scalePods,
    nodes: Math.ceil(settings.scalePods / 40),
    namespaces: settings.scaleNamespaces,
  };
  await ensureScaleObjects(await apiClient(await clusterKubeConfig()), size);
  // A quota the processes find at start: the first quota decision needs each one's caches.
  const quotaNamespace = await workNamespace(ctx, 'bench-km-scale-quota');
  const quota = unique(ctx, 'scale');
  await applyQuota(quotaNamespace, quota, 10);
  const variants = [
    { label: 'koord-manager', start: () => deployKoordManager(ctx, 1) },
    { label: 'koord-manager, webhooks only', start: () => deployKoordManager(ctx, 1, WEBHOOKS_ONLY) },
    { label: 'ours', start: () => deployOurs(ctx, 1) },
  ];
  for (let round = 0; round < settings.rounds; round++) {
    const shift = round % variants.length;
    for (const variant of [...variants.slice(shift), ...variants.slice(0, shift)]) {
      const deployed = await variant.start();
      try {
        const replica = deployed.replicas[0];
        if (!replica) continue;
        await quotaKnown(ctx, deployed, quotaNamespace, quota);
        const decidedMs = performance.now() - (deployed.startedAt[0] ?? Number.NaN);
        await sleep(SCALE_SETTLE_MS);
        const k = `${size.pods} pods: ${variant.label}`;
        const peak = await peakRssMiB(replica.pid);
        push(ctx.scale.readyMs, k, deployed.readyMs[0] ?? Number.NaN);
        push(ctx.scale.decidedMs, k, decidedMs);
        push(ctx.scale.peak, k, peak);
        console.log(
          `  round ${round + 1} ${k}: start to Ready ${(deployed.readyMs[0] ?? Number.NaN).toFixed(0)} ms, ` +
            `to its first quota decision ${decidedMs.toFixed(0)} ms, peak RSS ${peak.toFixed(0)} MiB`,
        );
      } finally {
        await deployed.stop();
      }
    }
  }
  for (const [k, values] of ctx.scale.readyMs) {
    inform(`koord-manager bench: ${k}: start to Ready`, median(values), 'ms');
    inform(
      `koord-manager bench: ${k}: start to its first quota decision`,
      median(ctx.scale.decidedMs.get(k) ?? []),
      'ms',
    );
    inform(`koord-manager bench: ${k}: peak RSS (VmHWM)`, median(ctx.scale.peak.get(k) ?? []), 'MiB');
  }
  const ours = median(ctx.scale.peak.get(`${size.pods} pods: ours`) ?? []);
  const theirs = median(ctx.scale.peak.get(`${size.pods} pods: koord-manager`) ?? []);
  record(`koord-manager bench: ${size.pods} pods: our peak RSS / koord-manager's`, ours / theirs, '×', 1);
}

export async function benchKoordManager(settings: SideBySideSettings): Promise<void> {
  const log = (line: string): void => {
    console.error(`[koord-manager] ${line}`);
  };
  const binary = await ensureKoordManager(log);
  execFileSync('npm', ['run', '-s', 'build'], { cwd: repoRoot, stdio: 'inherit' });
  const render = await renderKoordinatorChart(Math.max(...settings.replicas));
  await applyKoordinatorObjects(render);
  const kubeConfig = await clusterKubeConfig();
  const ctx: Context = {
    render,
    binary,
    creator: await podCreator(kubeConfig),
    core: kubeConfig.makeApiClient(CoreV1Api),
    suffix: Date.now().toString(36),
    scale: { readyMs: new Map(), decidedMs: new Map(), peak: new Map() },
  };
  console.log(
    `koord-manager ${KOORD_MANAGER_VERSION} (gates: chart default + ${KOORD_MANAGER_GATES}), ` +
      `${settings.rounds} rounds, burst ${settings.burst} into room for ${settings.room}, ` +
      `steady ${settings.steady} at ${settings.rate}/s`,
  );
  const tally: Tally = {
    admitted: new Map(),
    p50: new Map(),
    p99: new Map(),
    messages: new Map(),
    steadyP50: new Map(),
    steadyP99: new Map(),
    steadyRefused: new Map(),
    shapes: new Map(),
    readyMs: new Map(),
  };
  const steadyReplicas = Math.max(...settings.replicas);
  const interleaved = settings.parts.includes('burst') || settings.parts.includes('steady');
  for (let round = 0; interleaved && round < settings.rounds; round++) {
    for (const system of rotation(round)) {
      const counts = system === 'none' ? [0] : settings.replicas;
      for (const count of counts) {
        const k = key(system, count);
        const deployed = await deploy(ctx, system, count);
        try {
          for (const ms of deployed.readyMs) push(tally.readyMs, k, ms);
          if (settings.parts.includes('burst')) {
            const burst = await burstOnce(ctx, deployed, settings);
            push(tally.admitted, k, burst.admitted);
            push(tally.p50, k, percentile(burst.createMs, 50));
            push(tally.p99, k, percentile(burst.createMs, 99));
            const messages = tally.messages.get(k) ?? new Map<string, number>();
            for (const [message, n] of burst.messages)
              messages.set(message, (messages.get(message) ?? 0) + n);
            tally.messages.set(k, messages);
            console.log(
              `  round ${round + 1} ${k}: burst admitted ${burst.admitted}, refused ` +
                `${JSON.stringify(Object.fromEntries(burst.refused))}, create p50 ` +
                `${percentile(burst.createMs, 50).toFixed(0)} ms, p99 ${percentile(burst.createMs, 99).toFixed(0)} ms`,
            );
          }
          if (settings.parts.includes('steady') && (count === steadyReplicas || system === 'none')) {
            const { creates, shape } = await steadyOnce(ctx, deployed, settings);
            push(tally.steadyP50, system, percentile(creates.createMs, 50));
            push(tally.steadyP99, system, percentile(creates.createMs, 99));
            tally.steadyRefused.set(system, [...(tally.steadyRefused.get(system) ?? []), creates.refusedAt]);
            tally.shapes.set(system, shape);
            console.log(
              `  round ${round + 1} ${k}: steady admitted ${creates.admitted}, create p50 ` +
                `${percentile(creates.createMs, 50).toFixed(1)} ms, p99 ${percentile(creates.createMs, 99).toFixed(1)} ms`,
            );
          }
        } finally {
          await deployed.stop();
        }
      }
    }
  }
  if (interleaved) report(tally, settings);
  if (settings.parts.includes('scale') && settings.scalePods > 0) await scalePart(ctx, settings);
}

/**
 * The median over the rounds of each round's value over the reference's in the same round: the
 * machine's load moves both alike within a round, not from one round to the next.
 */
function medianRatio(values: readonly number[] = [], reference: readonly number[] = []): number {
  return median(values.map((value, round) => value / (reference[round] ?? Number.NaN)));
}

function report(tally: Tally, settings: SideBySideSettings): void {
  console.log('\nmedians over the rounds:');
  for (const [k, values] of tally.admitted) {
    const exact = k === 'no webhook' ? settings.burst : settings.room;
    inform(`koord-manager bench: burst ${k}: admitted (exact ${exact})`, median(values), 'pods');
    inform(`koord-manager bench: burst ${k}: admitted, worst round`, Math.max(...values), 'pods');
    inform(`koord-manager bench: burst ${k}: create p50`, median(tally.p50.get(k) ?? []), 'ms');
    inform(`koord-manager bench: burst ${k}: create p99`, median(tally.p99.get(k) ?? []), 'ms');
    if (k === 'no webhook') continue;
    const none = key('none', 0);
    inform(
      `koord-manager bench: burst ${k}: p50 / no webhook's (same round)`,
      medianRatio(tally.p50.get(k), tally.p50.get(none)),
      '×',
    );
    inform(
      `koord-manager bench: burst ${k}: p99 / no webhook's (same round)`,
      medianRatio(tally.p99.get(k), tally.p99.get(none)),
      '×',
    );
  }
  for (const count of settings.replicas) {
    const ours = tally.p50.get(key('ours', count));
    const theirs = tally.p50.get(key('koord-manager', count));
    if (ours && theirs)
      record(
        `koord-manager bench: burst ×${count}: our create p50 / koord-manager's`,
        medianRatio(ours, theirs),
        '×',
        1,
      );
  }
  const none50 = median(tally.steadyP50.get('none') ?? []);
  const none99 = median(tally.steadyP99.get('none') ?? []);
  for (const system of ['koord-manager', 'ours'] as const) {
    const p50 = median(tally.steadyP50.get(system) ?? []);
    const p99 = median(tally.steadyP99.get(system) ?? []);
    if (!Number.isFinite(p50)) continue;
    inform(`koord-manager bench: steady ${system}: create p50`, p50, 'ms');
    inform(`koord-manager bench: steady ${system}: create p99`, p99, 'ms');
    inform(
      `koord-manager bench: steady ${system}: p50 / no webhook's (same round)`,
      medianRatio(tally.steadyP50.get(system), tally.steadyP50.get('none')),
      '×',
    );
    inform(
      `koord-manager bench: steady ${system}: p99 / no webhook's (same round)`,
      medianRatio(tally.steadyP99.get(system), tally.steadyP99.get('none')),
      '×',
    );
  }
  if (Number.isFinite(none50)) {
    inform('koord-manager bench: steady none: create p50', none50, 'ms');
    inform('koord-manager bench: steady none: create p99', none99, 'ms');
  }
  const ours50 = tally.steadyP50.get('ours');
  const theirs50 = tally.steadyP50.get('koord-manager');
  if (ours50 && theirs50)
    record(
      "koord-manager bench: steady: our create p50 / koord-manager's",
      medianRatio(ours50, theirs50),
      '×',
      1,
    );
  for (const [k, values] of tally.readyMs)
    inform(`koord-manager bench: ${k}: start to Ready (median)`, median(values), 'ms');

  console.log('\ndecisions that differ:');
  for (const [k, messages] of tally.messages)
    for (const [message, n] of messages) console.log(`  burst ${k}: ${n} × ${message}`);
  const refusedOurs = tally.steadyRefused.get('ours') ?? [];
  const refusedTheirs = tally.steadyRefused.get('koord-manager') ?? [];
  for (let round = 0; round < Math.max(refusedOurs.length, refusedTheirs.length); round++) {
    const ours = refusedOurs[round] ?? new Map<number, string>();
    const theirs = refusedTheirs[round] ?? new Map<number, string>();
    const indexes = [...new Set([...ours.keys(), ...theirs.keys()])].sort((a, b) => a - b);
    for (const index of indexes)
      console.log(
        `  steady round ${round + 1}, create ${index}: ours ${ours.get(index) ?? 'admitted'}; koord-manager ${theirs.get(index) ?? 'admitted'}`,
      );
    if (indexes.length === 0)
      console.log(`  steady round ${round + 1}: every create decided alike (admitted)`);
  }
  const none = tally.shapes.get('none');
  for (const system of ['koord-manager', 'ours'] as const) {
    const shape = tally.shapes.get(system);
    if (!shape || !none) continue;
    const changed = differingPaths(none, shape);
    console.log(
      `  ${system}'s mutating webhooks changed the steady pod: ${changed.length === 0 ? 'nothing' : ''}`,
    );
    for (const line of changed) console.log(`    ${line}`);
  }
}
