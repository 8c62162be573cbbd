/**
 * Runs one suite with Node's built-in test runner.
 *
 *   unit         test/unit and each webhook's folder (webhook/webhooks/<name>/): pure functions, no cluster.
 *   integration  test/integration: one file at a time per real control plane, on two control
 *                planes side by side (`--clusters=N` or $INTEGRATION_CLUSTERS; 1 on a one-core
 *                machine), the files dealt by scripts/integration-shards.ts; starts each that is
 *                not running and stops at the end each this run started.
 *   e2e          test/e2e: the same with the node (`cluster:up -- --node`): the chart's pods run
 *                on it and the API server calls them through the chart's Service.
 *
 * `--kubernetes=1.30.14` (or $CLUSTER_KUBERNETES_VERSION) runs the cluster suites on that release;
 * the test files inherit the variable, so the kubectl and helm they run are of the same build.
 *
 * If the control plane cannot start, the run fails with the tail of its logs: integration
 * tests never skip.
 */
// First: an unsupported Node.js gets one line saying so, not a dependency's stack trace.
import './runtime/require-node.js';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { recordTiming } from './ci/timings.js';
import { CLUSTER_INSTANCE_ENV, takeKubernetesOption } from './cluster/kubernetes-versions.js';
import { planIntegration, SHARED_ENDED_ENV } from './integration-shards.js';
import { bundleTestOperator } from './operator-bundle.js';

const CLUSTERS_OPTION = '--clusters=';
/** Set by the first cluster's run for each other's: the directory where the clusters claim queued files. */
const QUEUE_OPTION = '--queue=';
/** How many clusters the integration suite runs its files on at once: --clusters, else this, else 2 (1 on one core). */
const CLUSTERS_ENV = 'INTEGRATION_CLUSTERS';

/** Writes the file $INTEGRATION_SHARED_ENDED_FILE names, where it is set (integration-shards.ts). */
async function signalSharedEnded(): Promise<void> {
  const file = process.env[SHARED_ENDED_ENV];
  if (file) await writeFile(file, `${new Date().toISOString()}\n`).catch(() => undefined);
}

let args: string[];
let clusters: number;
let queueDir: string | undefined;
try {
  args = takeKubernetesOption(process.argv.slice(2));
  const option = args.find((arg) => arg.startsWith(CLUSTERS_OPTION))?.slice(CLUSTERS_OPTION.length);
  queueDir = args.find((arg) => arg.startsWith(QUEUE_OPTION))?.slice(QUEUE_OPTION.length);
  args = args.filter((arg) => !arg.startsWith(CLUSTERS_OPTION) && !arg.startsWith(QUEUE_OPTION));
  const asked = option ?? process.env[CLUSTERS_ENV] ?? String(Math.min(2, availableParallelism()));
  if (!/^[1-9]$/.test(asked))
    throw new Error(`--clusters (or $${CLUSTERS_ENV}) must be 1 to 9, not ${asked.slice(0, 20)}`);
  clusters = Number(asked);
} catch (error) {
  console.error((error as Error).message);
  process.exit(2);
}
// After the option is read: the layout resolves the release once, when it is loaded.
const { logTails, startCluster, stopCluster } = await import('./cluster/control-plane.js');
const { clusterInstance, kubeconfigPath, kubernetesVersion, repoRoot } = await import('./cluster/layout.js');
/** How this process's cluster is named in its log lines and timings: nothing for the first. */
const onCluster = clusterInstance === 1 ? '' : ` on cluster ${clusterInstance}`;

async function testFiles(dir: string): Promise<string[]> {
  const entries = await readdir(join(repoRoot, dir), { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.test.ts'))
    .map((entry) => relative(repoRoot, join(entry.parentPath, entry.name)))
    .sort();
}

/** Copies `from` into `to` line by line, each line after `prefix`. */
function prefixLines(from: Readable | null, to: Writable, prefix: string): void {
  let partial = '';
  from?.setEncoding('utf8');
  from?.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) to.write(`${prefix}${line}\n`);
  });
  from?.on('end', () => {
    if (partial !== '') to.write(`${prefix}${partial}\n`);
  });
}

/** Runs `command` with its output on ours (each line after `prefix`, when given); resolves its exit code. */
function run(command: string[], env: NodeJS.ProcessEnv, prefix?: string): Promise<number> {
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, command, {
      cwd: repoRoot,
      stdio: prefix === undefined ? 'inherit' : ['ignore', 'pipe', 'pipe'],
      env,
    });
    if (prefix !== undefined) {
      prefixLines(child.stdout, process.stdout, prefix);
      prefixLines(child.stderr, process.stderr, prefix);
    }
    child.on('close', (code, signal) => {
      resolvePromise(code ?? (signal ? 1 : 0));
    });
  });
}

function runNodeTests(
  files: string[],
  env: NodeJS.ProcessEnv,
  serial: boolean,
  prefix?: string,
): Promise<number> {
  const filter = process.env.TEST_NAME_PATTERN
    ? [`--test-name-pattern=${process.env.TEST_NAME_PATTERN}`]
    : [];
  // Integration tests share cluster-scoped objects (the admission-operator configurations): one file at a
  // time. Unit files share nothing: one per core (the runner's default leaves one core out: on 2 cores,
  // the suite took 111 s at one file at a time, 58 s at two).
  filter.push(`--test-concurrency=${serial ? 1 : availableParallelism()}`);
  return run(['--import', 'tsx', '--test', ...filter, ...files], env, prefix);
}

/** How many files this run's cluster took from the queue (its row in the timings table). */
let filesTaken = 0;

/**
 * Runs the queued files one at a time on this process's cluster, each that no other cluster has
 * claimed (a file created in `dir`: the claim is atomic); resolves the first failing exit code.
 */
async function runQueue(
  files: string[],
  dir: string,
  env: NodeJS.ProcessEnv,
  prefix: string,
): Promise<number> {
  const failed: string[] = [];
  let code = 0;
  for (const file of files) {
    const claim = join(dir, file.replaceAll('/', '_'));
    const claimed = await writeFile(claim, String(clusterInstance), { flag: 'wx' }).then(
      () => true,
      () => false,
    );
    if (!claimed) continue;
    filesTaken++;
    const fileCode = await runNodeTests([file], env, true, prefix);
    if (fileCode !== 0) {
      failed.push(relative('test/integration', file));
      code ||= fileCode;
    }
  }
  log(`${filesTaken} files run here${failed.length > 0 ? `; failed: ${failed.join(', ')}` : ''}`);
  return code;
}

/**
 * The integration files on `clusters` clusters at once (integration-shards.ts): one queue, longest
 * first, each cluster taking the next file when it is free. Each cluster but the first is a run of
 * this script on a cluster of its own ($CLUSTER_INSTANCE), started at once so that its cluster
 * starts beside this one's; this process's cluster takes from the queue once it is up; then the
 * files that run alone, here. Every file runs, whatever failed.
 */
async function startLanes(files: string[]): Promise<{
  queue: string[];
  dir: string;
  exclusive: string[];
  others: Promise<number[]>;
}> {
  const plan = planIntegration(files);
  const dir = await mkdtemp(join(tmpdir(), 'integration-queue-'));
  log(
    `${clusters} clusters side by side take ${plan.queue.length} files from one queue, longest first` +
      (plan.exclusive.length > 0
        ? `, then ${plan.exclusive.map((file) => relative('test/integration', file)).join(', ')} alone`
        : ''),
  );
  const others = Promise.all(
    Array.from({ length: plan.queue.length > 1 ? clusters - 1 : 0 }, (_, index) =>
      run(
        [
          '--import',
          'tsx',
          join('scripts', 'run-tests.ts'),
          'integration',
          `${QUEUE_OPTION}${dir}`,
          ...plan.queue,
        ],
        {
          ...process.env,
          [CLUSTER_INSTANCE_ENV]: String(index + 2),
          [CLUSTERS_ENV]: '1',
          // Only this run knows when every cluster's share has ended.
          [SHARED_ENDED_ENV]: '',
        },
        `[${index + 2}] `,
      ),
    ),
  );
  return { queue: plan.queue, dir, exclusive: plan.exclusive, others };
}

const log = (line: string): void => {
  console.error(`[cluster${clusterInstance === 1 ? '' : ` ${clusterInstance}`}] ${line}`);
};

async function main(suite: string | undefined): Promise<number> {
  if (suite !== 'unit' && suite !== 'integration' && suite !== 'e2e') {
    console.error(
      'usage: tsx scripts/run-tests.ts unit|integration|e2e [--kubernetes=1.30.14] [--clusters=2] [files...]',
    );
    return 2;
  }
  const onlyFiles = args.slice(1);
  // A webhook's own tests sit in its folder (webhook/webhooks/<name>/) and run with the unit suite.
  const files =
    onlyFiles.length > 0
      ? onlyFiles
      : [
          ...(await testFiles(join('test', suite))),
          ...(suite === 'unit' ? await testFiles(join('webhook', 'webhooks')) : []),
        ];
  if (files.length === 0) {
    console.error(`no test files under test/${suite}`);
    return 1;
  }
  if (suite === 'unit') return runNodeTests(files, process.env, false);

  log(`Kubernetes ${kubernetesVersion}`);
  const sharded =
    suite === 'integration' && queueDir === undefined && clusters > 1 && files.length > 1
      ? await startLanes(files)
      : undefined;
  /** The other clusters' exit codes, once they have ended (none when this run is not sharded); the queue's claims removed. */
  const othersEnded = async (): Promise<number[]> => {
    if (!sharded) return [];
    const codes = await sharded.others;
    await rm(sharded.dir, { recursive: true, force: true });
    return codes;
  };
  // The operator the tests start, bundled once for every file (test/harness/operator-bundle.ts),
  // while the cluster starts.
  const bundleDir = await mkdtemp(join(tmpdir(), 'admission-operator-bundle-'));
  const bundled = bundleTestOperator(repoRoot, bundleDir).then(
    () => undefined,
    (error: unknown) => error as Error,
  );
  let startedNow = false;
  const clusterStarted = Date.now();
  try {
    ({ startedNow } = await startCluster(log, { node: suite === 'e2e' }));
    // Apart from the suite's own time: the first start waits for builds (.ci/run's table shows them).
    await recordTiming(
      'suite',
      `cluster up${onCluster} (Kubernetes ${kubernetesVersion}${suite === 'e2e' ? ', with its node' : ''})`,
      Math.round((Date.now() - clusterStarted) / 1000),
      0,
    );
  } catch (error) {
    await rm(bundleDir, { recursive: true, force: true });
    console.error(
      `\n${suite.toUpperCase()} TESTS FAILED: the local ${suite === 'e2e' ? 'cluster with its node' : 'control plane'} did not start.\n${(error as Error).message}\n${await logTails()}`,
    );
    await othersEnded();
    return 1;
  }
  const stop = async (): Promise<void> => {
    if (startedNow && process.env.KEEP_CLUSTER !== '1') await stopCluster(log);
  };
  const bundleError = await bundled;
  if (bundleError) {
    console.error(
      `\n${suite.toUpperCase()} TESTS FAILED: the operator did not bundle.\n${bundleError.message}`,
    );
    await rm(bundleDir, { recursive: true, force: true });
    await stop();
    await othersEnded();
    return 1;
  }
  process.once('SIGINT', () => void stop().finally(() => process.exit(130)));
  const env = {
    ...process.env,
    KUBECONFIG: kubeconfigPath,
    ADMISSION_TEST_SHARED_CLUSTER: '1',
    ADMISSION_TEST_OPERATOR_BUNDLE: bundleDir,
  };
  try {
    if (queueDir !== undefined) return await runQueue(files, queueDir, env, '');
    if (!sharded) return await runNodeTests(files, env, true);
    const sideBySide = Date.now();
    const codes = [await runQueue(sharded.queue, sharded.dir, env, '[1] '), ...(await othersEnded())];
    await recordTiming(
      'suite',
      `integration side by side (${clusters} clusters, Kubernetes ${kubernetesVersion})`,
      Math.round((Date.now() - sideBySide) / 1000),
      codes.find((code) => code !== 0) ?? 0,
    );
    await signalSharedEnded();
    if (sharded.exclusive.length > 0) codes.push(await runNodeTests(sharded.exclusive, env, true));
    return codes.find((code) => code !== 0) ?? 0;
  } finally {
    await rm(bundleDir, { recursive: true, force: true });
    await stop();
  }
}

const started = Date.now();
const code = await main(args[0]);
if (args[0] === 'integration') await signalSharedEnded();
// The whole suite, its cluster's start included.
const label =
  args[0] === 'unit'
    ? 'unit'
    : `${args[0] ?? ''}${onCluster} (Kubernetes ${kubernetesVersion}${
        queueDir !== undefined
          ? `, ${filesTaken} files from the queue`
          : args.length > 1
            ? `, ${args.length - 1} files`
            : ''
      })`;
await recordTiming('suite', label, Math.round((Date.now() - started) / 1000), code);
process.exitCode = code;
