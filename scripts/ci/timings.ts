/**
 * What .ci/run's closing table is made of: one tab-separated line per event, appended to the file
 * $CI_TIMINGS_FILE names (nothing is written when it is unset, as outside CI). Appends of a line
 * this short are atomic, so the background builds and the suites can share the file.
 *
 *   phase   <name> <seconds> <exit code> <start>   a step of .ci/run (written by .ci/run itself)
 *   suite   <name> <seconds> <exit code> <start>   a test suite (scripts/run-tests.ts)
 *   built   <name> <seconds> [<CPU seconds>] a Go build that ran (scripts/go-build.ts)
 *   reused  <name>                         a Go build found complete
 */
import { appendFile } from 'node:fs/promises';

export type TimingKind = 'phase' | 'suite' | 'built' | 'reused';

/**
 * <start> is the second of the run it began at ($CI_STARTED_AT, the run's start in Unix seconds, set
 * by .ci/run): the suites and lanes run side by side, and the table lays them out in time.
 */
export async function recordTiming(kind: TimingKind, name: string, ...numbers: number[]): Promise<void> {
  const file = process.env.CI_TIMINGS_FILE;
  if (!file) return;
  const runStarted = Number(process.env.CI_STARTED_AT);
  const [seconds] = numbers;
  const start =
    (kind === 'phase' || kind === 'suite') &&
    Number.isFinite(runStarted) &&
    runStarted > 0 &&
    seconds !== undefined
      ? [Math.max(0, Math.round(Date.now() / 1000 - runStarted - seconds))]
      : [];
  await appendFile(file, `${[kind, name.replace(/\s+/g, ' '), ...numbers, ...start].join('\t')}\n`);
}
