/**
 * `npm run bench -- audit-scale --pods=40000 --nodes=1000 --namespaces=400`: the audit of a large
 * cluster, on the local control plane grown to that size with the scale bench's objects
 * (test/harness/scale-objects.ts; created once, a second run on a kept cluster finds them):
 *
 * - `admission-operator audit` as the image runs it (`audit -o json`, then `audit --policy-report`):
 *   wall time, peak resident memory (`/usr/bin/time`'s maximum RSS), and the objects it judged
 *   against those the cluster holds;
 * - the operator as the chart runs it (its environment, and V8's heap limit as the chart's
 *   percentage of its memory limit), its periodic audit with PolicyReports: the resident set
 *   settled before the audit, the peak (`VmHWM`, reset once settled) through the audit and the
 *   reports' writes, against the chart's limit, and the audit's duration;
 * - the PolicyReports written: how many, and their sizes against the API server's 1.5 MiB.
 *
 * It uses the running local control plane (or starts one) and stops it at the end unless it was
 * running already or KEEP_CLUSTER=1.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import type { AuditReport } from '../../operator/audit/audit.js';
import type { PolicyReport } from '../../operator/audit/policy-report.js';
import { pagedList } from '../../operator/kube/paged-list.js';
import { startCluster, stopCluster } from '../../scripts/cluster/control-plane.js';
import { kubeconfigPath, kubernetesVersion, repoRoot } from '../../scripts/cluster/layout.js';
import { NAMESPACE_NAME_LABEL } from '../../webhook/names.js';
import { clusterKubeConfig, installCrds, waitFor } from '../harness/cluster.js';
import { apiClient, createScaleObjects, type ApiClient, type ScaleSize } from '../harness/scale-objects.js';
import { chartContainer, underLimit } from './chart-container.js';
import { inform, record } from './report.js';
import {
  heapMiB,
  imageEntryPoint,
  metricsText,
  metricValue,
  rssMiB,
  startCompiledOperator,
} from './state-cluster.js';

const MiB = 2 ** 20;
const PREFIX = 'audit-scale';
const OPERATOR_NAMESPACE = `${PREFIX}-operator`;
/** Where a run records the size it created, so a second run on a kept cluster does not create it again. */
const CREATED_MARKER = 'audit-scale-created';
/** The API server's limit on a stored object (etcd's request size). */
const OBJECT_LIMIT_BYTES = 1.5 * MiB;
/** Long enough for the operator to list the cluster and settle before its first audit. */
const AUDIT_INTERVAL_S = 120;
const SETTLE_MS = 10_000;

export const AUDIT_SCALE_DEFAULTS: ScaleSize = { pods: 40_000, nodes: 1_000, namespaces: 400 };

function peakRssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN) / 1024;
}

/** Creates the scale objects unless a run before created them (the marker ConfigMap says what it created). */
export async function ensureScaleObjects(client: ApiClient, size: ScaleSize): Promise<void> {
  const markerPath = `/api/v1/namespaces/${OPERATOR_NAMESPACE}/configmaps`;
  await client.create('/api/v1/namespaces', {
    metadata: { name: OPERATOR_NAMESPACE, labels: { [NAMESPACE_NAME_LABEL]: OPERATOR_NAMESPACE } },
  });
  const marker = await client
    .getJson(`${markerPath}/${CREATED_MARKER}`)
    .then((object) => (object as { data?: { size?: string } }).data?.size)
    .catch(() => undefined);
  if (marker === JSON.stringify(size)) {
    console.log(`audit scale: the cluster holds the objects of ${marker} already`);
    return;
  }
  const started = performance.now();
  await createScaleObjects(client, PREFIX, size, (line) => {
    console.error(`[audit scale] created ${line} (${Math.round((performance.now() - started) / 1000)} s)`);
  });
  inform('audit scale: objects created through the API server', (performance.now() - started) / 1000, 's');
  await client.delete(`${markerPath}/${CREATED_MARKER}`);
  await client.create(markerPath, {
    metadata: { name: CREATED_MARKER },
    data: { size: JSON.stringify(size) },
  });
}

/** Every object of a collection counted, and the time a plain paged list of it takes. */
async function countAll(kubeConfig: KubeConfig, path: string): Promise<{ count: number; ms: number }> {
  const started = performance.now();
  let count = 0;
  for await (const page of pagedList(kubeConfig, path, { limit: 500 })) count += page.items.length;
  return { count, ms: performance.now() - started };
}

/** The CLI as the image runs it, under /usr/bin/time: exit code, stdout, wall seconds, peak RSS. */
async function timedCli(
  args: readonly string[],
): Promise<{ code: number; stdout: string; stderr: string; seconds: number; peakMiB: number }> {
  const image = imageEntryPoint();
  const dir = mkdtempSync(join(tmpdir(), 'audit-scale-'));
  const timing = join(dir, 'time');
  try {
    const child = spawn(
      '/usr/bin/time',
      ['-f', '%e %M', '-o', timing, process.execPath, ...image.nodeFlags, image.script, ...args],
      { cwd: repoRoot, env: { ...process.env, ...image.env, KUBECONFIG: kubeconfigPath } },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const code = await new Promise<number>((resolvePromise) => {
      child.once('close', (exit) => {
        resolvePromise(exit ?? -1);
      });
    });
    const [seconds = Number.NaN, kiB = Number.NaN] = readFileSync(timing, 'utf8')
      .trim()
      .split('\n')
      .at(-1)!
      .split(' ')
      .map(Number);
    return { code, stdout, stderr, seconds, peakMiB: kiB / 1024 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measureCli(held: { pods: number; nodes: number }): Promise<void> {
  const common = [`--kubeconfig=${kubeconfigPath}`, `--operator-namespace=${OPERATOR_NAMESPACE}`];
  const json = await timedCli(['audit', ...common, '-o', 'json']);
  if (json.code === 2) throw new Error(`audit failed: ${json.stderr.trim()}`);
  const report = JSON.parse(json.stdout) as AuditReport;
  console.log(
    `audit scale: CLI judged ${JSON.stringify(report.judged)}; held ${JSON.stringify(report.held)}`,
  );
  console.log(
    `audit scale: CLI findings: ${report.findings.length} kept, ${report.dropped} more counted; stdout ${(json.stdout.length / MiB).toFixed(1)} MiB`,
  );
  if (report.judged.Pod !== held.pods || report.judged.Node !== held.nodes)
    throw new Error(
      `the CLI judged ${JSON.stringify(report.judged)}, the cluster holds ${JSON.stringify(held)}`,
    );
  inform('audit scale: `audit -o json`: wall time', json.seconds, 's');
  inform('audit scale: `audit -o json`: peak RSS', json.peakMiB, 'MiB');
  const reports = await timedCli(['audit', ...common, '--policy-report']);
  if (reports.code === 2) throw new Error(`audit --policy-report failed: ${reports.stderr.trim()}`);
  console.log(`audit scale: ${reports.stdout.split('\n')[0] ?? ''}`);
  console.log(`audit scale: ${reports.stderr.trim().split('\n').at(-1) ?? ''}`);
  inform('audit scale: `audit --policy-report`: wall time', reports.seconds, 's');
  inform('audit scale: `audit --policy-report`: peak RSS', reports.peakMiB, 'MiB');
}

/** The operator as the chart runs it, through one periodic audit with PolicyReports. */
async function measureOperator(): Promise<void> {
  const chart = await chartContainer();
  const limit = chart.memoryLimitBytes;
  const env: Record<string, string> = { ...chart.env, ADMISSION_MEMORY_LIMIT: String(limit) };
  if (env.NODE_OPTIONS !== undefined) env.NODE_OPTIONS = underLimit(env.NODE_OPTIONS, limit);
  console.log(`audit scale: the operator's environment beyond the image's: ${JSON.stringify(env)}`);
  const args = [`--audit-interval=${AUDIT_INTERVAL_S}s`, '--audit-policy-reports=true'];
  // The first start issues the serving certificates; the measured start finds them in place.
  await (await startCompiledOperator(OPERATOR_NAMESPACE, [], { env })).stop();
  const started = performance.now();
  const operator = await startCompiledOperator(OPERATOR_NAMESPACE, args, { env });
  try {
    const pid = operator.child.pid ?? 0;
    inform('audit scale: operator start to Ready', operator.readyMs, 'ms');
    await sleep(SETTLE_MS);
    const startPeak = peakRssMiB(pid);
    const settled = rssMiB(pid);
    const heap = await heapMiB(operator.metricsPort);
    inform('audit scale: operator peak RSS (VmHWM) from start to settled', startPeak, 'MiB');
    inform('audit scale: operator RSS settled before the audit', settled, 'MiB');
    inform('audit scale: operator V8 heap used, settled before the audit', heap.used, 'MiB');
    const auditAt = started + AUDIT_INTERVAL_S * 1000;
    if (performance.now() > auditAt - 5000)
      throw new Error('the operator settled after its audit began: raise AUDIT_INTERVAL_S');
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    const outcome = await waitFor(
      'the periodic audit to finish or fail',
      async () => {
        const text = await metricsText(operator.metricsPort);
        const failed = metricValue(text, 'admission_audit_failures_total{stage="list"}');
        if (failed > 0) return 'failed';
        return metricValue(text, 'admission_audit_last_success_timestamp_seconds') > 0
          ? 'finished'
          : undefined;
      },
      { timeoutMs: 3_600_000, intervalMs: 1000 },
    );
    const text = await metricsText(operator.metricsPort);
    const peak = peakRssMiB(pid);
    const afterHeap = await heapMiB(operator.metricsPort);
    console.log(`audit scale: the periodic audit ${outcome}`);
    if (outcome === 'failed') throw new Error('the periodic audit failed: see the operator log');
    inform(
      'audit scale: periodic audit duration',
      metricValue(text, 'admission_audit_duration_seconds'),
      's',
    );
    const reportsFailed = metricValue(text, 'admission_audit_failures_total{stage="reports"}');
    if (reportsFailed > 0) throw new Error('the periodic audit could not write its PolicyReports');
    inform("audit scale: the chart's memory limit", limit / MiB, 'MiB');
    inform('audit scale: operator V8 heap used after the audit', afterHeap.used, 'MiB');
    record(
      'audit scale: operator peak RSS (VmHWM) through the periodic audit and its reports',
      peak,
      'MiB',
      limit / MiB,
    );
    record(
      "audit scale: operator peak RSS through the audit, share of the chart's limit",
      (100 * peak * MiB) / limit,
      '%',
      80,
    );
  } finally {
    await operator.stop();
  }
}

/** How many PolicyReports the cluster holds of ours, and their sizes as stored. */
async function measureReports(kubeConfig: KubeConfig): Promise<void> {
  for (const plural of ['policyreports', 'clusterpolicyreports']) {
    const sizes: number[] = [];
    const pages = pagedList(kubeConfig, `/apis/wgpolicyk8s.io/v1alpha2/${plural}`, {
      limit: 20,
      labelSelector: 'app.kubernetes.io/managed-by=admission-operator',
    });
    // Each object the reports name (their results, at most 1,000 a report, list passes too).
    const named = new Set<string>();
    for await (const page of pages) {
      for (const item of page.items) {
        sizes.push(Buffer.byteLength(JSON.stringify(item)));
        for (const result of (item as unknown as PolicyReport).results) {
          const [resource] = result.resources;
          if (resource) named.add(`${resource.kind} ${resource.namespace ?? ''}/${resource.name}`);
        }
      }
    }
    sizes.sort((a, b) => a - b);
    const total = sizes.reduce((sum, size) => sum + size, 0);
    inform(`audit scale: ${plural} written`, sizes.length, '');
    inform(`audit scale: ${plural}: objects their results name`, named.size, '');
    if (sizes.length === 0) continue;
    inform(`audit scale: ${plural}: median size`, (sizes[Math.floor(sizes.length / 2)] ?? 0) / 1024, 'KiB');
    inform(`audit scale: ${plural}: all together`, total / MiB, 'MiB');
    record(
      `audit scale: ${plural}: largest, share of the API server's object limit`,
      (100 * (sizes.at(-1) ?? 0)) / OBJECT_LIMIT_BYTES,
      '%',
      70,
    );
  }
}

export async function benchAuditScale(size: ScaleSize): Promise<void> {
  console.log(
    `audit scale: Kubernetes ${kubernetesVersion}, ${size.pods} pods, ${size.nodes} nodes, ${size.namespaces} namespaces`,
  );
  const log = (line: string): void => {
    console.error(`[cluster] ${line}`);
  };
  execFileSync('npm', ['run', '-s', 'build'], { cwd: repoRoot, stdio: 'inherit' });
  const { startedNow } = await startCluster(log);
  const kubeConfig = await clusterKubeConfig();
  const client = await apiClient(kubeConfig);
  try {
    await installCrds(
      'policy-reports/policyreports.wgpolicyk8s.io',
      'policy-reports/clusterpolicyreports.wgpolicyk8s.io',
    );
    await ensureScaleObjects(client, size);
    const pods = await countAll(kubeConfig, '/api/v1/pods');
    const nodes = await countAll(kubeConfig, '/api/v1/nodes');
    inform(
      `audit scale: a plain paged list of the cluster's ${pods.count} pods (limit 500, parsed)`,
      pods.ms / 1000,
      's',
    );
    await measureCli({ pods: pods.count, nodes: nodes.count });
    await measureOperator();
    await measureReports(kubeConfig);
  } finally {
    client.close();
    if (startedNow && process.env.KEEP_CLUSTER !== '1') await stopCluster(log);
  }
}
