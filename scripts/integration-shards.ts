/**
 * How the integration suite's files are shared among the local clusters it runs on at once
 * (scripts/run-tests.ts, `--clusters`). Most files spend their time waiting on the API server,
 * leases and bookmarks, so two clusters side by side take about half the time on 2 cores; the
 * files are dealt longest first to the cluster with the least time so far.
 */

/**
 * Seconds each long file took on its own (2026-12-07, 2 cores, nothing else running; the operator
 * bundled). Only for balance: a file not listed counts as DEFAULT_SECONDS, and a wrong figure makes
 * a run slower, never wrong.
 */
export const FILE_SECONDS: Readonly<Record<string, number>> = {
  'scale.test.ts': 240,
  'stalled-watches.test.ts': 190,
  'replicas.test.ts': 170,
  'certificate-rotation.test.ts': 70,
  'operator-lifecycle.test.ts': 65,
  'beside-upstream.test.ts': 58,
  'leader-election.test.ts': 34,
  'audit-cli.test.ts': 35,
  'tenant-isolation.test.ts': 31,
  'blast-radius.test.ts': 30,
  'helm-chart.test.ts': 25,
  'hostile-reviews.test.ts': 25,
  'container-image.test.ts': 25,
};
export const DEFAULT_SECONDS = 12;

/**
 * Files that run alone, after the others, on the first cluster: their figures depend on the CPU
 * they get. The replica tests burst 800 creates through two replicas that forward to the leader;
 * beside another suite's load, forwards time out and a follower decides alone (counted, and the
 * quota's exactness is what they check).
 */
export const EXCLUSIVE: ReadonlySet<string> = new Set(['replicas.test.ts']);

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
