/**
 * `npm test`: every suite, each as the README runs it alone (`npm run test:unit`, ...).
 *
 *   integration, then end-to-end, with the unit suite beside the end-to-end suite
 *
 * The unit suite is CPU from start to end; the end-to-end suite mostly waits on the node, the
 * kubelet's probes, rollouts and leases (measured on 2 cores: 60-80 % idle), and the integration
 * suite's two clusters keep both cores busy. So the unit suite runs beside the end-to-end suite, in
 * the idle scheduling class (`chrt --idle 0`, where the system has it): it takes only CPU nothing
 * else wants, and the end-to-end suite's creates under load, probes and lease periods keep theirs.
 * Its output is printed in one block when it ends, not interleaved. When the integration suite
 * fails, the end-to-end suite does not run (it installs the same operator on a node: minutes), the
 * unit suite still does.
 *
 * Exits with the first failing suite's code.
 */
// First: an unsupported Node.js gets one line saying so, not a dependency's stack trace.
import './runtime/require-node.js';
import { spawn, spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** The command that starts a process in the idle scheduling class, or nothing where there is none. */
function idleClass(): string[] {
  if (process.platform !== 'linux') return [];
  return spawnSync('chrt', ['--idle', '0', 'true']).status === 0 ? ['chrt', '--idle', '0'] : [];
}

/** `npm run <script>` (a suite, as the README runs it) with its output on ours; resolves its exit code. */
function npmRun(script: string): Promise<number> {
  return new Promise((resolvePromise) => {
    const child = spawn(npm, ['run', '--silent', script], { cwd: repoRoot, stdio: 'inherit' });
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
        `\n── npm run ${script} (beside the end-to-end suite${idle.length > 0 ? ', idle scheduling class' : ''}): ` +
          `${result === 0 ? 'passed' : `FAILED, exit ${result}`} ──\n`,
      );
      process.stdout.write(Buffer.concat(output));
      process.stdout.write(`── end of npm run ${script} ──\n\n`);
      resolvePromise(result);
    });
  });
}

const integration = await npmRun('test:integration');
const [unit, e2e] =
  integration === 0
    ? await Promise.all([npmRunBeside('test:unit'), npmRun('test:e2e')])
    : [await npmRunBeside('test:unit'), undefined];
if (e2e === undefined) console.error('the end-to-end suite did not run: the integration suite failed');
process.exitCode = [integration, e2e ?? 0, unit].find((code) => code !== 0) ?? 0;
