/**
 * Runs one suite with Node's built-in test runner.
 *
 *   unit         test/unit and each webhook's folder (webhook/webhooks/<name>/): pure functions, no cluster.
 *   integration  test/integration: shares one real control plane for the whole run; starts it
 *                if it is not running and stops it at the end if this run started it.
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
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { recordTiming } from './ci/timings.js';
import { bundleTestOperator } from './operator-bundle.js';
import { takeKubernetesOption } from './cluster/kubernetes-versions.js';

let args: string[];
try {
  args = takeKubernetesOption(process.argv.slice(2));
} catch (error) {
  console.error((error as Error).message);
  process.exit(2);
}
// After the option is read: the layout resolves the release once, when it is loaded.
const { logTails, startCluster, stopCluster } = await import('./cluster/control-plane.js');
const { kubeconfigPath, kubernetesVersion, repoRoot } = await import('./cluster/layout.js');

async function testFiles(dir: string): Promise<string[]> {
  const entries = await readdir(join(repoRoot, dir), { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.test.ts'))
    .map((entry) => relative(repoRoot, join(entry.parentPath, entry.name)))
    .sort();
}

function runNodeTests(files: string[], env: NodeJS.ProcessEnv, serial: boolean): Promise<number> {
  const filter = process.env.TEST_NAME_PATTERN
    ? [`--test-name-pattern=${process.env.TEST_NAME_PATTERN}`]
    : [];
  // Integration tests share cluster-scoped objects (the admission-operator configurations): one file at a time.
  if (serial) filter.push('--test-concurrency=1');
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--test', ...filter, ...files], {
      cwd: repoRoot,
      stdio: 'inherit',
      env,
    });
    child.on('exit', (code, signal) => {
      resolvePromise(code ?? (signal ? 1 : 0));
    });
  });
}

const log = (line: string): void => {
  console.error(`[cluster] ${line}`);
};

async function main(suite: string | undefined): Promise<number> {
  if (suite !== 'unit' && suite !== 'integration' && suite !== 'e2e') {
    console.error('usage: tsx scripts/run-tests.ts unit|integration|e2e [--kubernetes=1.30.14] [files...]');
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
      `cluster up (Kubernetes ${kubernetesVersion}${suite === 'e2e' ? ', with its node' : ''})`,
      Math.round((Date.now() - clusterStarted) / 1000),
      0,
    );
  } catch (error) {
    await rm(bundleDir, { recursive: true, force: true });
    console.error(
      `\n${suite.toUpperCase()} TESTS FAILED: the local ${suite === 'e2e' ? 'cluster with its node' : 'control plane'} did not start.\n${(error as Error).message}\n${await logTails()}`,
    );
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
    return 1;
  }
  process.once('SIGINT', () => void stop().finally(() => process.exit(130)));
  try {
    return await runNodeTests(
      files,
      {
        ...process.env,
        KUBECONFIG: kubeconfigPath,
        ADMISSION_TEST_SHARED_CLUSTER: '1',
        ADMISSION_TEST_OPERATOR_BUNDLE: bundleDir,
      },
      true,
    );
  } finally {
    await rm(bundleDir, { recursive: true, force: true });
    await stop();
  }
}

const started = Date.now();
const code = await main(args[0]);
// The whole suite, its cluster's start included.
const label =
  args[0] === 'unit'
    ? 'unit'
    : `${args[0] ?? ''} (Kubernetes ${kubernetesVersion}${args.length > 1 ? `, ${args.length - 1} files` : ''})`;
await recordTiming('suite', label, Math.round((Date.now() - started) / 1000), code);
process.exitCode = code;
