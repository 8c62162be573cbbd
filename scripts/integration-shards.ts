/**
 * How the integration suite's files are shared among the local clusters it runs on at once
 * (scripts/run-tests.ts, `--clusters`). Most files spend their time waiting on the API server,
 * leases and bookmarks, so two clusters side by side take about half the time on 2 cores; the
 * files are dealt longest first to the cluster with the least time so far.
 */

/**
 * Seconds each longer file takes, its tests' time in CI plus about 3 s to start its process (.ci/run
 * at 7947c8c and 7095b42 on 2 cores, the two clusters side by side; a file's time moves by up to 25 s
 * between runs with what runs beside it). Only for balance: a file not listed counts as
 * DEFAULT_SECONDS, and a wrong figure makes a run slower, never wrong. Out of date, they cost time:
 * with figures from an earlier layout (the 20,000-pod file at 240 s where it took 137) one cluster
 * ended 80 s after the other.
 */
export const FILE_SECONDS: Readonly<Record<string, number>> = {
  'stalled-watches.test.ts': 183,
  'scale.test.ts': 150,
  'replicas.test.ts': 141,
  'operator-lifecycle.test.ts': 68,
  'beside-upstream.test.ts': 61,
  'certificate-rotation.test.ts': 58,
  'audit-cli.test.ts': 45,
  'hostile-reviews.test.ts': 39,
  'blast-radius.test.ts': 32,
  'uninstall-safety.test.ts': 32,
  'leader-election.test.ts': 31,
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
  /** One list of files per cluster, run side by side. */
  shards: string[][];
  /** Run after every shard has ended, on the first cluster. */
  exclusive: string[];
}

const fileName = (path: string): string => path.slice(path.lastIndexOf('/') + 1);
const secondsOf = (path: string): number => FILE_SECONDS[fileName(path)] ?? DEFAULT_SECONDS;

/** Deals `files` among `clusters` clusters (at least 1), the exclusive ones kept apart. */
export function planIntegration(files: readonly string[], clusters: number): IntegrationPlan {
  const count = Math.max(1, Math.floor(clusters));
  const exclusive = files.filter((file) => EXCLUSIVE.has(fileName(file)));
  const shared = files.filter((file) => !EXCLUSIVE.has(fileName(file)));
  const shards: string[][] = Array.from({ length: count }, () => []);
  const load = new Array<number>(count).fill(0);
  const longestFirst = [...shared].sort((a, b) => secondsOf(b) - secondsOf(a) || a.localeCompare(b));
  for (const file of longestFirst) {
    const least = load.indexOf(Math.min(...load));
    shards[least]?.push(file);
    load[least] = (load[least] ?? 0) + secondsOf(file);
  }
  return { shards: shards.map((shard) => shard.sort()).filter((shard) => shard.length > 0), exclusive };
}
