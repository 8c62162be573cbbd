/**
 * `npm test`: every suite, each as the README runs it alone (`npm run test:unit`, ...).
 *
 *   the integration suite, then the end-to-end suite; the unit suite beside them from the moment
 *   the integration files that run side by side have ended
 *
 * The unit suite is CPU from start to end. The integration suite's files on two clusters keep both
 * cores busy; the replica tests that run alone after them, and the end-to-end suite, mostly wait on
 * leases, rollouts, the node and the kubelet's probes (measured on 2 cores). So the unit suite starts
 * when the integration run signals that its side-by-side part has ended (scripts/run-tests.ts,
 * $INTEGRATION_SHARED_ENDED_FILE), in the idle scheduling class (`chrt --idle 0`, where the system
 * has it): it takes only CPU nothing else wants, and the replica tests' bursts and the end-to-end
 * suite's creates under load keep theirs. Its output is printed in one block when it ends, not
 * interleaved. When the integration suite fails, the end-to-end suite does not run (it installs the
 * same operator on a node: minutes); the unit suite still does.
 *
 * Exits with the first failing suite's code.
 */
// First: an unsupported Node.js gets one line saying so, not a dependency's stack trace.
import './runtime/require-node.js';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SHARED_ENDED_ENV } from './integration-shards.js';
import { fileURLToPath } from 'node:url';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** The command that starts a process in the idle scheduling class, or nothing where there is none. */
function idleClass(): string[] {
  if (process.platform !== 'linux') return [];
  return spawnSync('chrt', ['--idle', '0', 'true']).status === 0 ? ['chrt', '--idle', '0'] : [];
}

/** `npm run <script>` (a suite, as the README runs it) with its output on ours; resolves its exit code. */
function npmRun(script: string, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return new Promise((resolvePromise) => {
    const child = spawn(npm, ['run', '--silent', script], { cwd: repoRoot, stdio: 'inherit', env });
    child.on('close', (code, signal) => {
      resolvePromise(code ?? (signal ? 1 : 0));
    });
  });
}

/** `npm run <script>` in the idle class, its output kept and printed in one block when it ends. */
function npmRunBeside(script: string): Promise<number> {
  const idle = idleClass();
  const command = [...idle, npm, 'run', '--silent', script];
  return new Promise((resolvePromise) => {
    const child = spawn(command[0] ?? npm, command.slice(1), {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
    child.on('close', (code, signal) => {
      const result = code ?? (signal ? 1 : 0);
      process.stdout.write(
        `\n── npm run ${script} (beside the cluster suites${idle.length > 0 ? ', idle scheduling class' : ''}): ` +
          `${result === 0 ? 'passed' : `FAILED, exit ${result}`} ──\n`,
      );
      process.stdout.write(Buffer.concat(output));
      process.stdout.write(`── end of npm run ${script} ──\n\n`);
      resolvePromise(result);
    });
  });
}

/** Resolves once `file` exists, or when `ended` has settled. */
async function appears(file: string, ended: Promise<unknown>): Promise<void> {
  const stop = new AbortController();
  void ended.finally(() => {
    stop.abort();
  });
  while (!stop.signal.aborted) {
    if (existsSync(file)) return;
    await sleep(1000);
  }
}

// .ci/run names the file so that its checks start at the same moment; otherwise one of our own.
const ownSignalDir = process.env[SHARED_ENDED_ENV] ? undefined : await mkdtemp(join(tmpdir(), 'npm-test-'));
const sharedEnded = process.env[SHARED_ENDED_ENV] || join(ownSignalDir ?? '', 'integration-shared-ended');
try {
  const integrationRun = npmRun('test:integration', { ...process.env, [SHARED_ENDED_ENV]: sharedEnded });
  await appears(sharedEnded, integrationRun);
  const unitRun = npmRunBeside('test:unit');
  const integration = await integrationRun;
  const e2e = integration === 0 ? await npmRun('test:e2e') : undefined;
  if (e2e === undefined) console.error('the end-to-end suite did not run: the integration suite failed');
  const unit = await unitRun;
  process.exitCode = [integration, e2e ?? 0, unit].find((code) => code !== 0) ?? 0;
} finally {
  if (ownSignalDir) await rm(ownSignalDir, { recursive: true, force: true });
}
