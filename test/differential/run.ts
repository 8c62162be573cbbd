/**
 * `npm run test:differential`: the same generated reviews and the same state sent to Koordinator's
 * own webhooks (the oracle, built from its Go module) and to ours, answer against answer. Every
 * difference must be one the rule pages document (expected.ts); any other fails the run.
 *
 *   npm run test:differential -- [--reviews N] [--seed S] [--per-world K] [--show N]
 *                                [--world W --review K]   (replay one review, printed in full)
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { JsonObject, KubeObject } from '../../webhook/admission/types.js';
import { caseSeed, mulberry32 } from '../fuzz/prng.js';
import { compareVerdicts, verdictOf, type Verdict } from './compare.js';
import { classify, DOCUMENTED, type Observed } from './expected.js';
import { ensureOracle, KOORDINATOR_VERSION } from './oracle-build.js';
import { OracleClient } from './oracle-client.js';
import { OurWebhooks } from './ours.js';
import { generateReview, KOORDINATOR_PATHS, type GeneratedReview } from './reviews.js';
import { ORACLE_GATES, OUR_GATES } from './gates.js';
import { text } from './vocabulary.js';
import { generateWorld, withChildRequests, type World } from './world.js';

const { values: args } = parseArgs({
  options: {
    reviews: { type: 'string', default: '10000' },
    seed: { type: 'string', default: '1' },
    'per-world': { type: 'string', default: '48' },
    show: { type: 'string', default: '5' },
    world: { type: 'string' },
    review: { type: 'string' },
    /** Writes every undocumented difference, one JSON line each, to this file. */
    dump: { type: 'string' },
  },
});

const total = Number(args.reviews);
const seed = Number(args.seed);
const perWorld = Number(args['per-world']);
const show = Number(args.show);

/** Kinds the API server stores through their Go type (built-in): it sends them in Go's encoding. */
const BUILT_IN = new Set(['Pod', 'Node', 'ConfigMap']);

interface Tally {
  compared: number;
  agreeing: number;
  representation: number;
  documented: Map<string, number>;
  undocumented: Observed[];
}

function newTally(): Tally {
  return { compared: 0, agreeing: 0, representation: 0, documented: new Map(), undocumented: [] };
}

async function canonical(
  oracle: OracleClient,
  object: KubeObject | null | undefined,
): Promise<JsonObject | null | undefined> {
  if (!object) return object;
  const answer = await oracle.ask({ op: 'canonical', object });
  if (answer.error !== undefined)
    throw new Error(`the oracle cannot read ${text(object.kind)}: ${answer.error}`);
  return answer.object;
}

/** The review as the API server sends it: built-in objects in their Go encoding. */
async function asSent(oracle: OracleClient, generated: GeneratedReview): Promise<GeneratedReview> {
  const request = generated.review.request as JsonObject;
  for (const field of ['object', 'oldObject'] as const) {
    const object = request[field] as KubeObject | null;
    if (object && BUILT_IN.has(text(object.kind))) request[field] = (await canonical(oracle, object)) ?? null;
  }
  return generated;
}

async function judge(
  oracle: OracleClient,
  ours: OurWebhooks,
  state: Awaited<ReturnType<OurWebhooks['state']>>,
  generated: GeneratedReview,
): Promise<Observed> {
  const { path, review } = await asSent(oracle, generated);
  const object = ((review.request as JsonObject).object ?? null) as KubeObject | null;
  const answer = await oracle.ask({ op: 'review', path, review });
  if (answer.error !== undefined) throw new Error(`the oracle failed on ${path}: ${answer.error}`);
  const theirs: Verdict = answer.panic
    ? { allowed: false, code: 0, message: '', warnings: [], patch: [], panic: answer.panic, ...(answer.stack ? { stack: answer.stack } : {}) }
    : verdictOf(answer.body ?? {}, object);
  const mine = verdictOf(ours.answer(path, review, state), object);
  const patched = mine.patch.length > 0 || theirs.patch.length > 0;
  const compared = compareVerdicts(
    mine,
    theirs,
    patched ? await canonical(oracle, mine.after) : undefined,
    patched ? await canonical(oracle, theirs.after) : undefined,
  );
  return { path, note: generated.note, review, ours: mine, theirs, ...compared };
}

function describe(observed: Observed, where: string): string {
  const side = (verdict: Verdict): string =>
    verdict.panic
      ? `panic: ${verdict.panic}${verdict.stack ? `\n${verdict.stack.split('\n').filter((line) => line.includes('koordinator-sh/koordinator/pkg')).slice(0, 6).join('\n')}` : ''}`
      : `allowed=${verdict.allowed} code=${verdict.code}${verdict.message ? ` message=${JSON.stringify(verdict.message)}` : ''}` +
        (verdict.warnings.length > 0 ? ` warnings=${JSON.stringify(verdict.warnings)}` : '') +
        (verdict.patch.length > 0 ? ` patch=${JSON.stringify(verdict.patch)}` : '');
  return [
    `${where} ${observed.path} (${observed.note}): differs in ${observed.differences.join(', ')}`,
    `  ours:   ${side(observed.ours)}`,
    `  theirs: ${side(observed.theirs)}`,
  ].join('\n');
}

async function main(): Promise<void> {
  const binary = await ensureOracle((line) => {
    process.stderr.write(`${line}\n`);
  });
  const oracle = new OracleClient(binary, ORACLE_GATES);
  const ours = new OurWebhooks(OUR_GATES);
  const byPath = new Map<string, Tally>(KOORDINATOR_PATHS.map((path) => [path, newTally()]));
  const started = Date.now();
  const worlds =
    args.world !== undefined
      ? [Number(args.world)]
      : Array.from({ length: Math.ceil(total / perWorld) }, (_, i) => i);
  let done = 0;
  try {
    for (const w of worlds) {
      const rng = mulberry32(caseSeed(seed, w));
      const bare: World = generateWorld(rng);
      const state = await ours.state(bare);
      const world = withChildRequests(bare, state);
      const set = await oracle.ask({ op: 'world', objects: world.objects });
      if (!set.ok) throw new Error(`the oracle refused world ${w}: ${set.error}`);
      const count = Math.min(perWorld, total - done);
      for (let i = 0; i < (args.world !== undefined ? perWorld : count); i++) {
        const path = KOORDINATOR_PATHS[(w * perWorld + i) % KOORDINATOR_PATHS.length] ?? '/mutate-pod';
        const generated = generateReview(
          mulberry32(caseSeed(seed ^ 0x5bd1e995, w * perWorld + i)),
          world,
          path,
          w * perWorld + i,
        );
        if (args.review !== undefined && Number(args.review) !== i) continue;
        const observed = await judge(oracle, ours, state, generated);
        const tally = byPath.get(path) ?? newTally();
        tally.compared++;
        if (args.review !== undefined) {
          console.log(JSON.stringify({ world: world.objects, review: generated.review }, null, 2));
          console.log(describe(observed, `world ${w} review ${i}`));
        }
        if (observed.differences.length === 0) {
          tally.agreeing++;
          if (observed.representationOnly) tally.representation++;
          continue;
        }
        const documented = classify(observed, world);
        if (documented) tally.documented.set(documented, (tally.documented.get(documented) ?? 0) + 1);
        else tally.undocumented.push({ ...observed, where: `world ${w} review ${i}` });
      }
      done += count;
    }
  } finally {
    await oracle.close();
  }

  let undocumented = 0;
  const classes = new Map<string, number>();
  console.log(
    `differential: ours against Koordinator ${KOORDINATOR_VERSION}, seed ${seed}, ${done} reviews in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  console.log(
    'path                                                       compared  agreeing  (repr.)  documented  undocumented',
  );
  for (const [path, tally] of byPath) {
    const documented = [...tally.documented.values()].reduce((a, b) => a + b, 0);
    for (const [id, n] of tally.documented) classes.set(id, (classes.get(id) ?? 0) + n);
    undocumented += tally.undocumented.length;
    console.log(
      `${path.padEnd(58)} ${String(tally.compared).padStart(8)}  ${String(tally.agreeing).padStart(8)}  ${String(tally.representation).padStart(7)}  ${String(documented).padStart(10)}  ${String(tally.undocumented.length).padStart(12)}`,
    );
  }
  console.log('documented differences by class:');
  for (const difference of DOCUMENTED) {
    console.log(
      `  ${String(classes.get(difference.id) ?? 0).padStart(6)}  ${difference.id} (${difference.page})`,
    );
  }
  if (args.dump !== undefined) {
    const lines = [...byPath.values()].flatMap((tally) =>
      tally.undocumented.map((observed) => JSON.stringify(observed)),
    );
    writeFileSync(args.dump, lines.map((line) => `${line}\n`).join(''));
  }
  for (const tally of byPath.values()) {
    for (const observed of tally.undocumented.slice(0, show))
      console.log(describe(observed, observed.where ?? ''));
  }
  const empty = [...byPath].filter(([, tally]) => tally.compared === 0).map(([path]) => path);
  if (args.world === undefined && empty.length > 0) {
    console.error(`no review compared on ${empty.join(', ')}`);
    process.exitCode = 1;
  }
  if (undocumented > 0) {
    console.error(`${undocumented} undocumented differences (replay one with --world W --review K)`);
    process.exitCode = 1;
  }
}

await main();
