/**
 * The Kthena part of `npm run test:differential`: generated reviews for every Kthena v1.0.0 path
 * sent to Kthena's own handlers (the oracle, built from its Go module) and to ours, answer against
 * answer, the totals printed per path as the Koordinator part prints them.
 */
import { caseSeed, mulberry32 } from '../../fuzz/prng.js';
import { KTHENA_VERSION } from '../../harness/kthena-module.js';
import { OurWebhooks } from '../ours.js';
import { type Judged, judge, KTHENA_DOCUMENTED } from './judge.js';
import { ensureKthenaOracle } from './oracle-build.js';
import { KthenaOracle } from './oracle-client.js';
import { generateKthenaReview, KTHENA_PATHS } from './reviews.js';

export interface KthenaOptions {
  /** Reviews per path. */
  perPath: number;
  seed: number;
  /** Undocumented differences printed in full. */
  show: number;
  /** Only this review index (a replay), printed in full. */
  review?: number;
}

interface Tally {
  compared: number;
  agreeing: number;
  documented: number;
  undocumented: { index: number; judged: Judged }[];
}

/** Runs the suite; resolves with the number of undocumented differences. */
export async function runKthenaSuite(options: KthenaOptions): Promise<number> {
  const binary = await ensureKthenaOracle((line) => process.stderr.write(`${line}\n`));
  const oracle = new KthenaOracle(binary);
  const ours = new OurWebhooks('');
  // No Kthena v1.0.0 webhook reads another object: an empty world.
  const state = await ours.state({ objects: [] });
  const byPath = new Map<string, Tally>(
    KTHENA_PATHS.map((path) => [path, { compared: 0, agreeing: 0, documented: 0, undocumented: [] }]),
  );
  const classes = new Map<string, number>();
  const started = Date.now();
  try {
    for (let index = 0; index < options.perPath * KTHENA_PATHS.length; index++) {
      if (options.review !== undefined && index !== options.review) continue;
      const path = KTHENA_PATHS[index % KTHENA_PATHS.length] ?? '/validate/modelserver';
      const review = generateKthenaReview(
        mulberry32(caseSeed(options.seed ^ 0x6b74686e, index)),
        path,
        index,
      );
      const judged = judge(
        path,
        review,
        ours.answer(path, review, state),
        await oracle.answer(path, JSON.stringify(review)),
      );
      const tally = byPath.get(path);
      if (!tally) continue;
      tally.compared++;
      if (options.review !== undefined) console.log(JSON.stringify({ review, judged }, null, 2));
      if (judged.differences.length === 0) tally.agreeing++;
      else if (judged.documented) {
        tally.documented++;
        classes.set(judged.documented, (classes.get(judged.documented) ?? 0) + 1);
      } else tally.undocumented.push({ index, judged });
    }
  } finally {
    await oracle.close();
  }
  const total = [...byPath.values()].reduce((n, tally) => n + tally.compared, 0);
  console.log(
    `differential: ours against Kthena ${KTHENA_VERSION}, seed ${options.seed}, ${total} reviews in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  console.log('path                                          compared  agreeing  documented  undocumented');
  let undocumented = 0;
  for (const [path, tally] of byPath) {
    undocumented += tally.undocumented.length;
    console.log(
      `${path.padEnd(44)} ${String(tally.compared).padStart(9)} ${String(tally.agreeing).padStart(9)} ${String(tally.documented).padStart(11)} ${String(tally.undocumented.length).padStart(13)}`,
    );
  }
  console.log('documented Kthena differences by class:');
  for (const { id, page } of KTHENA_DOCUMENTED)
    console.log(`  ${String(classes.get(id) ?? 0).padStart(6)}  ${id} (${page})`);
  for (const tally of byPath.values()) {
    for (const { index, judged } of tally.undocumented.slice(0, options.show)) {
      console.log(
        `kthena review ${index}: differs in ${judged.differences.join(', ')} (replay: --suite kthena --review ${index})`,
      );
      console.log(`  ours:   ${JSON.stringify(judged.ours)}`);
      console.log(`  theirs: ${JSON.stringify(judged.theirs)}`);
    }
  }
  const empty = [...byPath].filter(([, tally]) => tally.compared === 0).map(([path]) => path);
  if (options.review === undefined && empty.length > 0) {
    console.error(`no Kthena review compared on ${empty.join(', ')}`);
    undocumented += empty.length;
  }
  return undocumented;
}
