/**
 * Drives an HTTPS server from a load generator in a child process: the server (this process)
 * on one core, the load generator on the other, when `taskset` is there to pin them.
 */
import { execFileSync, spawn } from 'node:child_process';
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
  /** Latencies at a fixed rate of half the peak. */
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

export interface DriveSettings {
  connections: number;
  durationMs: number;
}

/** The peak rate of one path, then p50/p99 at half that rate. */
export async function measurePath(
  target: { port: number; ca: string },
  path: string,
  body: string,
  settings: DriveSettings,
): Promise<PathFigures> {
  const base = { ...target, path, body, connections: settings.connections };
  // Warm-up: JIT, TLS sessions, caches.
  await runLoadChild({ ...base, durationMs: 1000 });
  const peak = await runLoadChild({ ...base, durationMs: settings.durationMs });
  const half = await runLoadChild({ ...base, durationMs: settings.durationMs, rate: peak.rate / 2 });
  return { rate: peak.rate, p50Ms: half.p50Ms, p99Ms: half.p99Ms, errors: peak.errors + half.errors };
}
