/**
 * `npm run bench -- scale --pods=150000 --nodes=5000 --namespaces=10000`: the operator as the image
 * runs it, on a fresh local control plane that grows to a cluster of that size (no node: the pods
 * stay Pending). Reports start to Ready against the raw paged list of the same pods measured in the
 * same run, the peak (VmHWM) and settled resident memory and heap, the same after a forced relist
 * (SIGHUP), the cost per pod, and the pod paths' rate at that state against the empty cluster.
 *
 * It stops any running local control plane and starts a fresh one (and stops that at the end):
 * the empty-cluster figures need an empty cluster.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import type { KubeConfig } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { startCluster, stopCluster } from '../../scripts/cluster/control-plane.js';
import { kubernetesVersion, repoRoot } from '../../scripts/cluster/layout.js';
import { pagedList } from '../../operator/kube/paged-list.js';
import { DEFAULT_TIER_LABEL_KEY, NAMESPACE_NAME_LABEL } from '../../webhook/names.js';
import { clusterKubeConfig, waitFor } from '../harness/cluster.js';
import { apiClient, createScaleObjects, type ScaleSize } from '../harness/scale-objects.js';
import { rawStreamingList } from '../harness/streaming-lists.js';
import type { DriveSettings, PathFigures } from './drive.js';
import { inform, record, recordShare } from './report.js';
import {
  heapMiB,
  measureOperator,
  metricsText,
  metricValue,
  rssMiB,
  startCompiledOperator,
  type RunningOperator,
} from './state-cluster.js';

const MiB = 2 ** 20;
/** V8's memory reducer runs a few seconds after allocation stops. */
const SETTLE_MS = 10_000;
const PREFIX = 'scale';
const READY_ROUNDS = 3;

function peakRssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN) / 1024;
}

/** Starts VmHWM over from the current RSS (proc(5), clear_refs "5"). */
function resetPeakRss(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/** The reference: every pod, listed in pages of 500 and parsed, keeping nothing. */
async function rawPagedList(kubeConfig: KubeConfig): Promise<{ ms: number; pods: number }> {
  const started = performance.now();
  let pods = 0;
  for await (const page of pagedList(kubeConfig, '/api/v1/pods', { limit: 500 })) pods += page.items.length;
  return { ms: performance.now() - started, pods };
}

interface Settled {
  rss: number;
  heapUsed: number;
  heapTotal: number;
}

async function settle(operator: RunningOperator, label: string): Promise<Settled> {
  await sleep(SETTLE_MS);
  const pid = operator.child.pid ?? 0;
  const heap = await heapMiB(operator.metricsPort);
  const settled = { rss: rssMiB(pid), heapUsed: heap.used, heapTotal: heap.total };
  inform(`scale: ${label}: RSS settled (${SETTLE_MS / 1000} s idle)`, settled.rss, 'MiB');
  inform(`scale: ${label}: V8 heap used, settled`, settled.heapUsed, 'MiB');
  inform(`scale: ${label}: V8 heap committed, settled`, settled.heapTotal, 'MiB');
  return settled;
}

/** The pods' lists so far (a streaming list or pages: the API server's WatchList decides), and the pods kept. */
async function podsListed(operator: RunningOperator): Promise<{ lists: number; mode: string; pods: number }> {
  const text = await metricsText(operator.metricsPort);
  const modes = ['stream', 'pages'].map((mode) => ({
    mode,
    lists: metricValue(text, `admission_store_lists_total{kind="pods",mode="${mode}"}`),
  }));
  const listed = modes.filter((entry) => entry.lists > 0);
  return {
    lists: listed.reduce((sum, entry) => sum + entry.lists, 0),
    mode: listed.map((entry) => entry.mode).join('+') || 'none',
    pods: metricValue(text, 'admission_store_objects{kind="pods"}'),
  };
}

/** What one size measured, for the closing table. */
interface StepFigures {
  size: ScaleSize;
  referenceMs: number;
  streamedMs: number;
  readyMs: number;
  peak: number;
  settled: Settled;
  relistPeak: number;
  perPodRss: number;
  perPodHeap: number;
}

/** The sizes to measure on the way to `size`: each of `steps` pods below it, nodes and namespaces in proportion. */
function scaleSteps(size: ScaleSize, steps: readonly number[]): ScaleSize[] {
  const below = [...new Set(steps)].filter((pods) => pods > 0 && pods < size.pods).sort((a, b) => a - b);
  const part = (pods: number): ScaleSize => ({
    pods,
    nodes: Math.max(1, Math.round((size.nodes * pods) / size.pods)),
    namespaces: Math.max(1, Math.round((size.namespaces * pods) / size.pods)),
  });
  return [...below.map(part), size];
}

/** The operator started at `size`: start to Ready, memory while listing, settled and during a relist. */
async function measureSize(
  kubeConfig: KubeConfig,
  operatorNamespace: string,
  size: ScaleSize,
  emptySettled: Settled,
  target: boolean,
): Promise<{ operator: RunningOperator; figures: StepFigures }> {
  const label = `${size.pods} pods`;
  // Let the controller-manager finish its own writes (ServiceAccounts, root CA ConfigMaps).
  await sleep(15_000);
  // Start to Ready against the raw paged list, in interleaved rounds, the quickest of each: on a
  // shared machine the API server's speed drifts, and a reference taken minutes apart would
  // measure the drift.
  let referenceMs = Number.POSITIVE_INFINITY;
  let readyMs = Number.POSITIVE_INFINITY;
  for (let round = 1; round <= READY_ROUNDS; round++) {
    const reference = await rawPagedList(kubeConfig);
    const probe = await startCompiledOperator(operatorNamespace);
    await probe.stop();
    inform(
      `scale: ${label}: round ${round}: raw paged list of ${reference.pods} pods (limit 500, parsed)`,
      reference.ms,
      'ms',
    );
    inform(`scale: ${label}: round ${round}: start to Ready`, probe.readyMs, 'ms');
    referenceMs = Math.min(referenceMs, reference.ms);
    readyMs = Math.min(readyMs, probe.readyMs);
  }
  // The target is for the largest size: below it the operator's fixed start (about a second on an
  // empty cluster) weighs on a list of a few seconds.
  (target ? record : inform)(
    `scale: ${label}: start to Ready, as a multiple of the raw paged list (quickest of ${READY_ROUNDS})`,
    readyMs / referenceMs,
    '×',
    1.25,
  );
  // The other way to list, where the API server offers it (WatchList: docs/kubernetes-versions.md).
  const streamed = await rawStreamingList(kubeConfig, '/api/v1/pods');
  if (streamed)
    inform(`scale: ${label}: raw streaming list of ${streamed.objects} pods (parsed)`, streamed.ms, 'ms');
  else console.log(`scale: ${label}: the API server refuses streaming lists`);

  const operator = await startCompiledOperator(operatorNamespace);
  const pid = operator.child.pid ?? 0;
  const startPeak = peakRssMiB(pid);
  const listed = await podsListed(operator);
  console.log(
    `scale: ${label}: the operator listed the pods with ${listed.mode === 'stream' ? 'a streaming list' : listed.mode}`,
  );
  inform(`scale: ${label}: pods in the store at Ready`, listed.pods, 'pods');
  inform(`scale: ${label}: start to Ready`, operator.readyMs, 'ms');
  const settled = await settle(operator, label);
  const peak = Math.max(startPeak, peakRssMiB(pid));
  record(`scale: ${label}: peak RSS (VmHWM) while listing`, peak, 'MiB', 400);
  record(
    `scale: ${label}: list peak above the settled RSS`,
    (100 * (peak - settled.rss)) / settled.rss,
    '%',
    25,
  );
  const perPodRss = ((settled.rss - emptySettled.rss) * MiB) / size.pods;
  const perPodHeap = ((settled.heapUsed - emptySettled.heapUsed) * MiB) / size.pods;
  record(`scale: ${label}: RSS per pod, settled (nodes and namespaces counted in)`, perPodRss, 'B', 1024);
  inform(`scale: ${label}: V8 heap per pod, settled (nodes and namespaces counted in)`, perPodHeap, 'B');

  // A forced relist, as after the API server lost the watch's resourceVersion.
  resetPeakRss(pid);
  const relistStarted = performance.now();
  operator.child.kill('SIGHUP');
  await waitFor(
    'the pods to be listed again',
    async () => (await podsListed(operator)).lists > listed.lists,
    {
      timeoutMs: 300_000,
      intervalMs: 50,
    },
  );
  inform(
    `scale: ${label}: relist (SIGHUP) until the pods are listed`,
    performance.now() - relistStarted,
    'ms',
  );
  const relistPeak = peakRssMiB(pid);
  record(`scale: ${label}: peak RSS (VmHWM) during a forced relist`, relistPeak, 'MiB', 400);
  const afterRelist = await settle(operator, `${label}, after the relist`);
  inform(
    `scale: ${label}: RSS settled after the relist, against before it`,
    afterRelist.rss - settled.rss,
    'MiB',
  );
  return {
    operator,
    figures: {
      size,
      referenceMs,
      streamedMs: streamed?.ms ?? Number.NaN,
      readyMs,
      peak,
      settled,
      relistPeak,
      perPodRss,
      perPodHeap,
    },
  };
}

function table(empty: { readyMs: number; settled: Settled }, steps: readonly StepFigures[]): string {
  const row = (cells: (string | number)[]): string => `| ${cells.join(' | ')} |`;
  const fixed = (value: number, digits = 0): string => value.toFixed(digits);
  return [
    row([
      'pods',
      'nodes',
      'namespaces',
      'raw paged list',
      'raw streaming list',
      'start to Ready',
      'ratio',
      'peak RSS',
      'RSS settled',
      'heap used',
      'relist peak',
      'RSS / pod',
      'heap / pod',
    ]),
    row(Array.from({ length: 13 }, () => '---')),
    row([
      0,
      0,
      0,
      '',
      '',
      `${fixed(empty.readyMs / 1000, 2)} s`,
      '',
      '',
      `${fixed(empty.settled.rss)} MiB`,
      `${fixed(empty.settled.heapUsed)} MiB`,
      '',
      '',
      '',
    ]),
    ...steps.map((step) =>
      row([
        step.size.pods.toLocaleString('en'),
        step.size.nodes.toLocaleString('en'),
        step.size.namespaces.toLocaleString('en'),
        `${fixed(step.referenceMs / 1000, 2)} s`,
        Number.isNaN(step.streamedMs) ? 'refused' : `${fixed(step.streamedMs / 1000, 2)} s`,
        `${fixed(step.readyMs / 1000, 2)} s`,
        `${fixed(step.readyMs / step.referenceMs, 2)}×`,
        `${fixed(step.peak)} MiB`,
        `${fixed(step.settled.rss)} MiB`,
        `${fixed(step.settled.heapUsed)} MiB`,
        `${fixed(step.relistPeak)} MiB`,
        `${fixed(step.perPodRss)} B`,
        `${fixed(step.perPodHeap)} B`,
      ]),
    ),
  ].join('\n');
}

export async function benchScale(
  settings: DriveSettings,
  size: ScaleSize,
  steps: readonly number[],
): Promise<void> {
  const sizes = scaleSteps(size, steps);
  console.log(
    `scale: Kubernetes ${kubernetesVersion}, up to ${size.pods} pods, ${size.nodes} nodes, ${size.namespaces} namespaces, measured at ${sizes.map((s) => s.pods).join(', ')} pods (a fresh local control plane)`,
  );
  const log = (line: string): void => {
    console.error(`[cluster] ${line}`);
  };
  execFileSync('npm', ['run', '-s', 'build'], { cwd: repoRoot, stdio: 'inherit' });
  await stopCluster(log);
  await startCluster(log);
  const kubeConfig = await clusterKubeConfig();
  const client = await apiClient(kubeConfig);
  try {
    const operatorNamespace = `${PREFIX}-operator`;
    const reviews = { plain: `${PREFIX}-plain`, tiered: `${PREFIX}-tiered` };
    for (const [name, labels] of [
      [operatorNamespace, {}],
      [reviews.plain, {}],
      [reviews.tiered, { [DEFAULT_TIER_LABEL_KEY]: 'gold' }],
    ] as const) {
      await client.create('/api/v1/namespaces', {
        metadata: { name, labels: { ...labels, [NAMESPACE_NAME_LABEL]: name } },
      });
    }

    // The empty cluster: the first start issues the certificates, the second is measured.
    await (await startCompiledOperator(operatorNamespace)).stop();
    let operator = await startCompiledOperator(operatorNamespace);
    const emptyReadyMs = operator.readyMs;
    const emptySettled = await settle(operator, 'empty cluster');
    const empty = await measureOperator(operator, settings, 'empty cluster', reviews);
    await operator.stop();

    const measured: StepFigures[] = [];
    let created: ScaleSize = { pods: 0, nodes: 0, namespaces: 0 };
    for (const step of sizes) {
      const populating = performance.now();
      await createScaleObjects(
        client,
        PREFIX,
        step,
        (line) => {
          console.error(`[scale] created ${line} (${Math.round((performance.now() - populating) / 1000)} s)`);
        },
        created,
      );
      created = step;
      inform(
        `scale: ${step.pods} pods: objects created through the API server`,
        (performance.now() - populating) / 1000,
        's',
      );
      const result = await measureSize(
        kubeConfig,
        operatorNamespace,
        step,
        emptySettled,
        step === sizes.at(-1),
      );
      operator = result.operator;
      measured.push(result.figures);
      if (step === sizes.at(-1)) {
        const large = await measureOperator(operator, settings, `${step.pods} pods`, reviews);
        for (const [path, figures] of large) {
          const base = empty.get(path) as PathFigures;
          recordShare(
            `scale: ${path} at ${step.pods} pods, share of its empty-cluster rate (per CPU-s)`,
            figures.capacity,
            base.capacity,
            90,
          );
        }
      }
      await operator.stop();
    }
    console.log(`\n${table({ readyMs: emptyReadyMs, settled: emptySettled }, measured)}\n`);
  } finally {
    client.close();
    await stopCluster(log);
  }
}
