/**
 * What .ci/run's closing table is made of: one tab-separated line per event, appended to the file
 * $CI_TIMINGS_FILE names (nothing is written when it is unset, as outside CI). Appends of a line
 * this short are atomic, so the background builds and the suites can share the file.
 *
 *   phase   <name> <seconds> <exit code>   a step of .ci/run (written by .ci/run itself)
 *   suite   <name> <seconds> <exit code>   a test suite (scripts/run-tests.ts)
 *   built   <name> <seconds> [<CPU seconds>] a Go build that ran (scripts/go-build.ts)
 *   reused  <name>                         a Go build found complete
 */
import { appendFile } from 'node:fs/promises';

export type TimingKind = 'phase' | 'suite' | 'built' | 'reused';

export async function recordTiming(kind: TimingKind, name: string, ...numbers: number[]): Promise<void> {
  const file = process.env.CI_TIMINGS_FILE;
  if (file) await appendFile(file, `${[kind, name.replace(/\s+/g, ' '), ...numbers].join('\t')}\n`);
}
