/**
 * Drives an HTTPS server from a load generator in a child process: the server (this process)
 * on one core, the load generator on the other, when `taskset` is there to pin them.
 */
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { LoadOptions, LoadResult } from './load.js';

const LOAD_SCRIPT = fileURLToPath(new URL('./load.ts', import.meta.url));

function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const cores = (): number => {
  try {
    return Number(execFileSync('nproc', { encoding: 'utf8' }).trim());
  } catch {
    return 1;
  }
};

export const pinning = hasTaskset() && cores() >= 2;

/**
 * Pins this process (every thread: libuv's pool too) to core 0; the load generator gets core 1.
 * Returns a sentence saying what was done, for the report.
 */
export function pinServer(pid = process.pid): string {
  if (!pinning) return 'not pinned (taskset missing or a single core): server and load share the cores';
  execFileSync('taskset', ['-a', '-p', '-c', '0', String(pid)], { stdio: 'ignore' });
  return 'server pinned to core 0, load generator to core 1 (taskset)';
}

/**
 * Lets this process use every core again. Processes started while it is pinned inherit the
 * pinning (a control plane, an operator), and the suites that are not about one core's rate
 * must not run on one.
 */
export function unpinServer(pid = process.pid): void {
  if (!pinning) return;
  execFileSync('taskset', ['-a', '-p', '-c', `0-${cores() - 1}`, String(pid)], { stdio: 'ignore' });
}

/** Runs the load generator once in its own process and resolves with what it measured. */
export function runLoadChild(options: LoadOptions): Promise<LoadResult> {
  const node = [process.execPath, '--import', 'tsx', LOAD_SCRIPT, JSON.stringify(options)];
  const [command, ...args] = pinning ? ['taskset', '-c', '1', ...node] : node;
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command!, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`load generator exited with ${code}`));
      else resolvePromise(JSON.parse(out) as LoadResult);
    });
  });
}

export interface PathFigures {
  /** Reviews per second at the peak: 20 connections, each sending as soon as it is answered. */
  rate: number;
  /**
   * Reviews per second of the server's own CPU time during the peak run: what one core it had
   * to itself would serve. On a machine shared with other work the wall-clock rate moves with
   * whatever else runs on the server's core; this figure much less so, so ratios use it.
   */
  capacity: number;
  /** Latencies at a fixed rate of half the peak. */
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

export interface DriveSettings {
  connections: number;
  durationMs: number;
}

/** CPU seconds (user + system) this process has used. */
export const ownCpuSeconds = (): number => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

/** CPU seconds (user + system) process `pid` has used, from /proc. */
export function cpuSecondsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  // utime and stime are fields 14 and 15 of stat; fields[0] here is field 3.
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}
const CLOCK_TICKS = 100;

/**
 * The peak rate of one path, then p50/p99 at half that rate. `serverCpu` reads the CPU seconds
 * the server has used so far (this process unless told otherwise).
 */
export async function measurePath(
  target: { port: number; ca: string; client?: { cert: string; key: string } },
  path: string,
  body: string,
  settings: DriveSettings,
  serverCpu: () => number = ownCpuSeconds,
): Promise<PathFigures> {
  const base = { ...target, path, body, connections: settings.connections };
  // Warm-up: JIT, TLS sessions, caches.
  await runLoadChild({ ...base, durationMs: 1000 });
  const cpuBefore = serverCpu();
  const peak = await runLoadChild({ ...base, durationMs: settings.durationMs });
  const cpu = serverCpu() - cpuBefore;
  const half = await runLoadChild({ ...base, durationMs: settings.durationMs, rate: peak.rate / 2 });
  return {
    rate: peak.rate,
    capacity: peak.requests / cpu,
    p50Ms: half.p50Ms,
    p99Ms: half.p99Ms,
    errors: peak.errors + half.errors,
  };
}
