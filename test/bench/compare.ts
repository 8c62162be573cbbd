/**
 * `npm run bench:compare -- <other checkout> [suites] [--rounds=3]`: the same bench suites run
 * in another checkout of the project (e.g. a worktree at the commit before a refactor) and in
 * this one, alternately, round after round, so both meet the same machine and its drift. Prints
 * each figure's median in both and their ratio (this checkout ÷ the other): for a figure where
 * lower is better (µs, ms, ×) above 1 means slower here; for a rate or share, below 1 does.
 */
// First: an unsupported Node.js gets one line saying so, not a dependency's stack trace.
import '../../scripts/runtime/require-node.js';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { repoRoot } from '../../scripts/cluster/layout.js';

// A figure's line: its name, value and unit, then its target when it has one (report.ts).
const LINE = /^(?:info|met |MISS)\s{2}(.+?)\s+(-?[\d.]+) (\S+?)(?:\s+\(target [^)]*\))?\s*$/;

function runBench(dir: string, suites: string[]): Map<string, { value: number; unit: string }> {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'test/bench/run.ts', ...suites], {
    cwd: dir,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.status !== 0) throw new Error(`the bench in ${dir} failed:\n${run.stdout}\n${run.stderr}`);
  const figures = new Map<string, { value: number; unit: string }>();
  for (const line of run.stdout.split('\n')) {
    const match = LINE.exec(line);
    if (match) figures.set(match[1]!.trim(), { value: Number(match[2]), unit: match[3]! });
  }
  return figures;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const args = process.argv.slice(2);
const rounds = Number(args.find((arg) => arg.startsWith('--rounds='))?.slice('--rounds='.length) ?? 3);
const [other, ...suites] = args.filter((arg) => !arg.startsWith('--'));
if (!other || !Number.isInteger(rounds) || rounds < 1) {
  console.error('usage: npm run bench:compare -- <other checkout> [suites] [--rounds=N]');
  process.exit(2);
}
const dirs = { before: resolve(other), after: repoRoot };
const samples = { before: new Map<string, number[]>(), after: new Map<string, number[]>() };
const units = new Map<string, string>();
for (let round = 1; round <= rounds; round++) {
  for (const side of ['before', 'after'] as const) {
    console.error(`round ${round}/${rounds}: ${side} (${dirs[side]})`);
    for (const [name, { value, unit }] of runBench(dirs[side], suites)) {
      units.set(name, unit);
      samples[side].set(name, [...(samples[side].get(name) ?? []), value]);
    }
  }
}
console.log(`figure | unit | ${other} (median of ${rounds}) | this checkout | ratio`);
for (const [name, unit] of units) {
  const before = samples.before.get(name);
  const after = samples.after.get(name);
  if (!before || !after) {
    console.log(
      `${name} | ${unit} | ${before ? median(before) : '-'} | ${after ? median(after) : '-'} | only one side`,
    );
    continue;
  }
  const ratio = median(before) === 0 ? Number.NaN : median(after) / median(before);
  console.log(`${name} | ${unit} | ${median(before)} | ${median(after)} | ${ratio.toFixed(2)}`);
}
