/**
 * .ci/run's closing table: every phase, the suites inside it and every Go build, in wall seconds,
 * and the cold estimate checked against the budget (docs/development.md, "CI time").
 *
 *   tsx scripts/ci/timings-report.ts <timings file> <total seconds>
 *
 * A run on a machine with warm caches reuses builds, or gets them from Go's build cache, that a new
 * machine must compile. The builds run in the background while the suites mostly wait on the API
 * server, so what a cold machine pays is their CPU, not their wall time: the cold estimate adds to
 * this run's total the CPU seconds each build took on a cold machine of this shape
 * (cold-build-cpu-seconds.json) beyond what it took here, spread over its cores. Measured: cold
 * 2,379 s at 79dd8b5, warm 1,210 s on the same code, for which the estimate says 2,288 s, 4 % under
 * (docs/development.md, "CI time"). Over the budget, the table says so.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The cold budget: .ci/run's limit is 90 minutes, and growth must show long before it. */
export const COLD_BUDGET_SECONDS = 45 * 60;
/** The cores of CI's machine shape, over which the background builds' CPU is spread. */
export const CI_CORES = 2;

export interface Row {
  kind: string;
  name: string;
  seconds?: number;
  /** A phase's or suite's exit code. */
  code?: number;
  /** A build's CPU seconds, its cost however busy the machine was. */
  cpu?: number;
  /** A phase's or suite's second of the run it began at. */
  start?: number;
}

export function parseTimings(text: string): Row[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [kind = '', name = '', seconds, last, start] = line.split('\t');
      return {
        kind,
        name,
        ...(seconds === undefined ? {} : { seconds: Number(seconds) }),
        ...(last === undefined ? {} : kind === 'built' ? { cpu: Number(last) } : { code: Number(last) }),
        ...(start === undefined ? {} : { start: Number(start) }),
      };
    });
}

const pad = (text: string, width: number): string => text.padEnd(width);
const num = (value: number | undefined): string => (value === undefined ? '' : String(value)).padStart(6);

/** The table's lines and whether the cold estimate is over the budget. */
export function report(
  rows: Row[],
  totalSeconds: number,
  coldReference: Record<string, number>,
): { lines: string[]; over: boolean } {
  const lines = [
    'CI timings (from: the second of the run it began at; wall seconds. Phases run side by side,',
    'the suites inside them, indented, and the background builds below overlap them)',
    '',
    `${'from'.padStart(6)}${'wall'.padStart(6)}`,
  ];
  // In the order they began; a row without its start (a line of an older form) keeps its place.
  const timed = rows
    .map((row, index) => ({ row, index }))
    .filter(({ row }) => row.kind === 'phase' || row.kind === 'suite')
    .sort((a, b) => (a.row.start ?? 0) - (b.row.start ?? 0) || a.index - b.index)
    .map(({ row }) => row);
  for (const row of timed) {
    const indent = row.kind === 'suite' ? '  ' : '';
    lines.push(
      `${num(row.start)}${num(row.seconds)}  ${indent}${pad(row.name, 58 - indent.length)}${row.code ? `  exit ${row.code}` : ''}`.trimEnd(),
    );
  }
  lines.push('', 'Go builds');
  // Every process that needs a build looks for it (each integration test file starts the cluster):
  // a build counts once, as built when any process built it in this run.
  const builds = rows.filter((row) => row.kind === 'built');
  const built = new Map(builds.map((row) => [row.name, row.seconds ?? 0]));
  const cpu = new Map(builds.map((row) => [row.name, row.cpu]));
  const reused = new Set(
    rows.filter((row) => row.kind === 'reused' && !built.has(row.name)).map((row) => row.name),
  );
  // CPU seconds a cold machine would spend on builds this run did not pay for in full.
  let coldCpu = 0;
  const unknown: string[] = [];
  const coldOf = (reference: number | undefined): string =>
    reference === undefined ? 'no cold reference' : `cold ${reference} CPU s`;
  for (const [name, seconds] of built) {
    const reference = coldReference[name];
    const used = cpu.get(name);
    // A build Go's cache served (a fresh clone on a warm machine) cost less than its cold CPU.
    if (reference !== undefined) coldCpu += Math.max(0, reference - (used ?? 0));
    lines.push(
      `  ${pad(name, 56)}${num(seconds)}  built (${used === undefined ? '' : `${used} CPU s; `}${coldOf(reference)})`,
    );
  }
  for (const name of reused) {
    const reference = coldReference[name];
    lines.push(`  ${pad(name, 56)}${num(undefined)}  reused (${coldOf(reference)})`);
    if (reference === undefined) unknown.push(name);
    else coldCpu += reference;
  }
  const measured = Object.fromEntries(
    builds.filter((row) => row.cpu !== undefined).map((row) => [row.name, row.cpu]),
  );
  const estimate = totalSeconds + Math.ceil(coldCpu / CI_CORES);
  const over = estimate > COLD_BUDGET_SECONDS;
  lines.push(
    '',
    `total ${totalSeconds} s (${(totalSeconds / 60).toFixed(1)} min); cold estimate ${estimate} s ` +
      `(${(estimate / 60).toFixed(1)} min: + ${coldCpu} CPU s of builds reused or served by Go's cache, over ${CI_CORES} cores) of the ${COLD_BUDGET_SECONDS / 60}-minute budget`,
  );
  if (unknown.length > 0)
    lines.push(`no cold reference for ${unknown.join(', ')}: the estimate leaves them out`);
  if (Object.keys(measured).length > 0)
    lines.push(
      `this run's build CPU seconds (cold-build-cpu-seconds.json's form): ${JSON.stringify(measured)}`,
    );
  if (over)
    lines.push(
      `WARNING: the cold estimate passes ${COLD_BUDGET_SECONDS / 60} minutes: find the growth in the table above`,
    );
  return { lines, over };
}

function main(): void {
  const [file, total] = process.argv.slice(2);
  if (!file || !total) {
    console.error('usage: tsx scripts/ci/timings-report.ts <timings file> <total seconds>');
    process.exitCode = 2;
    return;
  }
  const here = dirname(fileURLToPath(import.meta.url));
  const reference = JSON.parse(readFileSync(join(here, 'cold-build-cpu-seconds.json'), 'utf8')) as Record<
    string,
    number
  >;
  const { lines } = report(parseTimings(readFileSync(file, 'utf8')), Number(total), reference);
  console.log(lines.join('\n'));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
