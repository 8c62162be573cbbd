/**
 * How the integration suite's files are shared among the local clusters it runs on at once
 * (scripts/run-tests.ts, `--clusters`). Most files spend their time waiting on the API server,
 * leases and bookmarks, so two clusters side by side take about half the time on 2 cores. The files
 * form one queue, longest first, from which each cluster takes the next file when it is free: a
 * file's time moves by up to 25 s between runs with what runs beside it, so a deal made in advance
 * left one cluster idle for up to a minute while the other finished.
 */

/**
 * Seconds each longer file takes (only its place in the queue depends on it), its tests' time in CI plus about 3 s to start its process (.ci/run
 * at 7947c8c and 7095b42 on 2 cores, the two clusters side by side; a file's time moves by up to 25 s
 * between runs with what runs beside it). A file not listed counts as DEFAULT_SECONDS; a
 * wrong figure makes a run slower, never wrong: a long file taken last keeps one cluster busy
 * while the other has nothing left.
 */
export const FILE_SECONDS: Readonly<Record<string, number>> = {
  'stalled-watches.test.ts': 183,
  'scale.test.ts': 150,
  'quota-ledger.test.ts': 110,
  'replicas.test.ts': 100,
  'replica-rollout.test.ts': 70,
  'operator-lifecycle.test.ts': 68,
  'beside-upstream.test.ts': 61,
  'certificate-rotation.test.ts': 58,
  'hostile-reviews.test.ts': 39,
  'blast-radius.test.ts': 32,
  'uninstall-safety.test.ts': 32,
  'leader-election.test.ts': 31,
  'audit-cli.test.ts': 30,
  'helm-chart.test.ts': 27,
  'container-image.test.ts': 26,
  'tenant-isolation.test.ts': 20,
  'admit-cli.test.ts': 20,
  'readme.test.ts': 16,
  'kthena-examples.test.ts': 15,
  'colocation.test.ts': 13,
};
export const DEFAULT_SECONDS = 8;

/**
 * Files that run alone, after the others, on the first cluster: their figures depend on the CPU
 * they get. The replica tests burst 800 creates through two replicas that forward to the leader;
 * beside another suite's load, forwards time out and a follower decides alone (counted, and the
 * quota's exactness is what they check).
 */
export const EXCLUSIVE: ReadonlySet<string> = new Set(['replicas.test.ts']);

/**
 * Names a file the integration run writes when its files side by side have ended, before the ones
 * that run alone (or when the suite ends): `npm test` starts the CPU-bound unit suite then, in the
 * idle scheduling class, beside the replica tests' waits (scripts/test-all.ts), and .ci/run its checks.
 */
export const SHARED_ENDED_ENV = 'INTEGRATION_SHARED_ENDED_FILE';

export interface IntegrationPlan {
  /** The files the clusters share, longest first: each cluster takes the next one when it is free. */
  queue: string[];
  /** Run after every cluster's share has ended, on the first cluster. */
  exclusive: string[];
}

const fileName = (path: string): string => path.slice(path.lastIndexOf('/') + 1);
const secondsOf = (path: string): number => FILE_SECONDS[fileName(path)] ?? DEFAULT_SECONDS;

/** The shared files in the order the clusters take them, the exclusive ones kept apart. */
export function planIntegration(files: readonly string[]): IntegrationPlan {
  const exclusive = files.filter((file) => EXCLUSIVE.has(fileName(file)));
  const queue = files
    .filter((file) => !EXCLUSIVE.has(fileName(file)))
    .sort((a, b) => secondsOf(b) - secondsOf(a) || a.localeCompare(b));
  return { queue, exclusive };
}
