/**
 * The cluster's processes: started detached with their output in a log file, recorded by pid
 * and binary so that `down` stops exactly what `up` started, even from another process.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { logsDir } from './layout.js';

export interface ClusterProcess {
  name: string;
  pid: number;
  binary: string;
}

export type Log = (line: string) => void;

const READY_TIMEOUT_MS = 120_000;

export function pidExists(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function isAlive(proc: ClusterProcess): boolean {
  if (!pidExists(proc.pid)) return false;
  // A recorded pid may have been reused by an unrelated process after a reboot.
  try {
    return readFileSync(`/proc/${proc.pid}/cmdline`, 'utf8').split('\0')[0] === proc.binary;
  } catch {
    return false;
  }
}

export function startProcess(
  name: string,
  binary: string,
  args: string[],
  env?: NodeJS.ProcessEnv,
): ClusterProcess & { exited: Promise<string> } {
  const out = openSync(join(logsDir, `${name}.log`), 'a');
  const child = spawn(binary, args, {
    detached: true,
    stdio: ['ignore', out, out],
    ...(env ? { env } : {}),
  });
  closeSync(out);
  if (child.pid === undefined) throw new Error(`could not start ${name}`);
  const exited = new Promise<string>((resolvePromise) => {
    child.on('exit', (code, signal) => {
      resolvePromise(`${name} exited (${signal ?? `code ${code}`})`);
    });
  });
  child.unref();
  return { name, pid: child.pid, binary, exited };
}

export async function waitFor(
  what: string,
  probe: () => Promise<boolean>,
  exited: Promise<string>[],
  timeoutMs = READY_TIMEOUT_MS,
): Promise<void> {
  let failure: string | undefined;
  void Promise.race(exited).then((reason) => (failure = reason));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (failure) throw new Error(`${failure} while waiting for ${what}`);
    if (await probe().catch(() => false)) return;
    await sleep(200);
  }
  throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
}

/** How long a stopped process has to exit on SIGTERM before SIGKILL, unless the caller says. */
const STOP_GRACE_MS = 15_000;

/**
 * Stops `processes` in reverse start order (the controller manager and API server before their
 * etcd): SIGTERM, then SIGKILL after `graceMs`.
 */
export async function stopProcesses(
  processes: ClusterProcess[],
  log: Log,
  graceMs = STOP_GRACE_MS,
): Promise<void> {
  for (const proc of [...processes].reverse()) {
    if (!isAlive(proc)) continue;
    process.kill(proc.pid, 'SIGTERM');
    const deadline = Date.now() + graceMs;
    while (isAlive(proc) && Date.now() < deadline) await sleep(100);
    if (isAlive(proc)) process.kill(proc.pid, 'SIGKILL');
    while (isAlive(proc)) await sleep(50);
    log(`stopped ${proc.name} (pid ${proc.pid})`);
  }
}
