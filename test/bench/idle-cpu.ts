/**
 * `idle-cpu`, only when named: the compiled operator, as the image runs it, idle on the local
 * control plane for a bounded window, its CPU time read from /proc. What is measured is what the
 * watches' liveness costs (docs/operations.md, "Stalled watches"): bookmarks, watches of under a
 * minute resumed when the API server ends them, the silence watchdog, TCP keepalive. The
 * reference, in the same run and on the same cluster, is the same build with them off
 * (ADMISSION_BENCH_WATCH_LIVENESS=off, operator/kube/watch-liveness.ts): watches asked for no
 * bookmarks and no timeoutSeconds, so the API server keeps them open for 30 minutes or more and
 * sends nothing to an idle kind. Everything else an idle replica does (the Lease renewed, the
 * loops' resyncs, the metrics' collectors, V8's own housekeeping) runs in both, so the ratio and
 * the difference are those mechanisms alone; a bare Node.js process as the reference would
 * measure the whole replica instead. The two alternate, round by round, so that a drift of the
 * shared machine falls on both.
 */
import { execFileSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api } from '@kubernetes/client-node';
import { repoRoot } from '../../scripts/cluster/layout.js';
import { clusterKubeConfig } from '../harness/cluster.js';
import { deleteConfigurations } from '../harness/operator.js';
import { cpuSecondsOf } from './drive.js';
import { inform, record } from './report.js';
import { metricsText, startCompiledOperator } from './state-cluster.js';

export interface IdleCpuSettings {
  /** How long each measured window lasts. */
  windowMs: number;
  /** Rounds of the operator and its reference, alternating. */
  rounds: number;
}

/** After Ready, before measuring: the start's own work (certificates checked, first writes) is over. */
const SETTLE_MS = 20_000;
/** The target: what the liveness mechanisms add to an idle replica, in % of one core. */
const TARGET_PERCENT_OF_CORE = 1;

/** The sum of one counter's samples on a /metrics page. */
function counterSum(text: string, name: string): number {
  let sum = 0;
  for (const [, value] of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm')))
    sum += Number(value);
  return sum;
}

/** One idle window of one operator: its CPU in % of a core, and the watches it replaced meanwhile. */
async function idleWindow(
  namespace: string,
  liveness: boolean,
  windowMs: number,
): Promise<{ percent: number; replaced: number }> {
  const operator = await startCompiledOperator(
    namespace,
    [],
    liveness ? {} : { env: { ADMISSION_BENCH_WATCH_LIVENESS: 'off' } },
  );
  try {
    const pid = operator.child.pid;
    if (pid === undefined) throw new Error('the operator has no pid');
    await sleep(SETTLE_MS);
    const before = counterSum(await metricsText(operator.metricsPort), 'admission_watch_replacements_total');
    const cpuBefore = cpuSecondsOf(pid);
    const startedAt = performance.now();
    await sleep(windowMs);
    const cpu = cpuSecondsOf(pid) - cpuBefore;
    const elapsedMs = performance.now() - startedAt;
    const after = counterSum(await metricsText(operator.metricsPort), 'admission_watch_replacements_total');
    return { percent: (100 * cpu) / (elapsedMs / 1000), replaced: after - before };
  } finally {
    await operator.stop();
  }
}

export async function benchIdleCpu(settings: IdleCpuSettings): Promise<void> {
  execFileSync('npm', ['run', '-s', 'build'], { cwd: repoRoot, stdio: 'inherit' });
  const core = (await clusterKubeConfig()).makeApiClient(CoreV1Api);
  const namespace = `bench-idle-${Date.now().toString(36)}`;
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  try {
    await deleteConfigurations();
    // The first start issues the serving certificates; the measured ones find them in place.
    await (await startCompiledOperator(namespace)).stop();
    const seconds = settings.windowMs / 1000;
    const withLiveness: number[] = [];
    const without: number[] = [];
    for (let round = 1; round <= settings.rounds; round++) {
      for (const liveness of round % 2 === 1 ? [true, false] : [false, true]) {
        const { percent, replaced } = await idleWindow(namespace, liveness, settings.windowMs);
        (liveness ? withLiveness : without).push(percent);
        const label = liveness ? 'bookmarks, short watches, watchdog, keepalive' : 'reference, all off';
        inform(`idle cpu: round ${round}, ${label}, ${seconds} s`, percent, '% core');
        if (liveness && replaced > 0) console.log(`info  idle cpu: ${replaced} watches replaced for silence`);
      }
    }
    const mean = (values: readonly number[]): number =>
      values.reduce((sum, value) => sum + value, 0) / values.length;
    const measured = mean(withLiveness);
    const reference = mean(without);
    inform(`idle cpu: the operator, idle (mean of ${settings.rounds} × ${seconds} s)`, measured, '% core');
    inform(`idle cpu: the same operator, watch liveness off (reference)`, reference, '% core');
    inform('idle cpu: the operator as a multiple of its reference', measured / reference, '×');
    record(
      'idle cpu: what watch liveness adds (the difference)',
      measured - reference,
      '% core',
      TARGET_PERCENT_OF_CORE,
    );
  } finally {
    await deleteConfigurations();
    await core.deleteNamespace({ name: namespace }).catch(() => undefined);
  }
}
