/**
 * `npm run test:differential`: the same generated reviews and the same state sent to Koordinator's
 * own webhooks (the oracle, built from its Go module) and to ours, answer against answer. Every
 * difference must be one the rule pages document (expected.ts); any other fails the run.
 *
 *   npm run test:differential -- [--koordinator v1.8.0|v1.7.0] [--reviews N per gate profile]
 *                                [--gates all|checks|koordinator-defaults]
 *                                [--seed S] [--per-world K] [--show N] [--dump FILE]
 *                                [--world W --review K [--enforcement E]]   (replay one review, printed in full)
 *                                [--suite all|koordinator|kthena]   (Kthena: --reviews per path; replay --suite kthena --review K)
 */
import '../../scripts/runtime/require-node.js';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { caseSeed, mulberry32 } from '../fuzz/prng.js';
import { classify, type Change, type Observed } from './classify.js';
import type { Verdict } from './compare.js';
import { DOCUMENTED } from './expected.js';
import { GATE_PROFILES, type GateProfile } from './gates.js';
import {
  ensureOracle,
  KOORDINATOR_VERSION,
  KOORDINATOR_VERSIONS,
  type KoordinatorVersion,
} from './oracle-build.js';
import { OracleClient } from './oracle-client.js';
import { OurWebhooks } from './ours.js';
import { generateReview, KOORDINATOR_PATHS } from './reviews.js';
import { Session } from './session.js';
import { generateWorld } from './world.js';
import { runKthenaSuite } from './kthena/suite.js';

const { values: args } = parseArgs({
  options: {
    /** The Koordinator release whose oracle answers (oracle-build.ts). */
    koordinator: { type: 'string', default: KOORDINATOR_VERSION },
    /** Reviews per gate profile. */
    reviews: { type: 'string', default: '10000' },
    /** A gate profile of gates.ts, or all of them. */
    gates: { type: 'string', default: 'all' },
    seed: { type: 'string', default: '1' },
    'per-world': { type: 'string', default: '48' },
    show: { type: 'string', default: '5' },
    world: { type: 'string' },
    review: { type: 'string' },
    /** Our enforcement for a replayed review (--world W --review K), e.g. validate-pod/colocation=dryrun. */
    enforcement: { type: 'string', default: '' },
    /** Writes every undocumented difference, one JSON line each, to this file. */
    dump: { type: 'string' },
    /** Koordinator's handlers, Kthena's (test/differential/kthena/), or both. */
    suite: { type: 'string', default: 'all' },
  },
});

const release = KOORDINATOR_VERSIONS.find((version) => version === args.koordinator);
if (!release) throw new Error(`--koordinator: one of ${KOORDINATOR_VERSIONS.join(', ')}`);
const koordinator: KoordinatorVersion = release;
/** The differences documented against this release. */
const documented = DOCUMENTED.filter((difference) => difference.releases?.includes(koordinator) ?? true);
const total = Number(args.reviews);
const seed = Number(args.seed);
const perWorld = Number(args['per-world']);
const show = Number(args.show);

interface Tally {
  compared: number;
  agreeing: number;
  representation: number;
  /** Agreeing where Koordinator's call failed and its failure policy, Ignore, admitted the object. */
  failedOpen: number;
  /** Reviews whose differences are all documented. */
  documentedReviews: number;
  /** By class: a review counts under each class that explains part of it. */
  documented: Map<string, number>;
  undocumented: Observed[];
}

function newTally(): Tally {
  return {
    compared: 0,
    agreeing: 0,
    representation: 0,
    failedOpen: 0,
    documentedReviews: 0,
    documented: new Map(),
    undocumented: [],
  };
}

function describe(observed: Observed, where: string): string {
  const side = (verdict: Verdict): string =>
    verdict.panic
      ? `panic: ${verdict.panic}${
          verdict.stack
            ? `\n${verdict.stack
                .split('\n')
                .filter((line) => line.includes('koordinator-sh/koordinator/pkg'))
                .slice(0, 6)
                .join('\n')}`
            : ''
        }`
      : `allowed=${verdict.allowed} code=${verdict.code}${verdict.message ? ` message=${JSON.stringify(verdict.message)}` : ''}` +
        (verdict.warnings.length > 0 ? ` warnings=${JSON.stringify(verdict.warnings)}` : '') +
        (verdict.patch.length > 0 ? ` patch=${JSON.stringify(verdict.patch)}` : '');
  return [
    `${where} ${observed.path} (${observed.note}): differs in ${observed.differences.join(', ')}`,
    `  ours:   ${side(observed.ours)}`,
    `  theirs: ${side(observed.theirs)}`,
  ].join('\n');
}

/** Judges one gate profile's reviews; returns the tallies by path. */
async function runProfile(binary: string, profile: GateProfile): Promise<Map<string, Tally>> {
  const oracle = new OracleClient(binary, profile.oracle);
  const session = new Session(oracle, new OurWebhooks(profile.ours));
  const rejudge = async (observed: Observed, change: Change): Promise<Observed> => {
    const again = await session.rejudge(observed, change);
    // A replayed review shows what each counterfactual led to.
    if (args.review !== undefined) {
      console.log(describe(again, `counterfactual ${Object.keys(change).join('+')}:`));
    }
    return again;
  };
  const byPath = new Map<string, Tally>(KOORDINATOR_PATHS.map((path) => [path, newTally()]));
  const worlds =
    args.world !== undefined
      ? [Number(args.world)]
      : Array.from({ length: Math.ceil(total / perWorld) }, (_, i) => i);
  let done = 0;
  try {
    for (const w of worlds) {
      const world = await session.setWorld(generateWorld(mulberry32(caseSeed(seed, w))));
      const count = args.world !== undefined ? perWorld : Math.min(perWorld, total - done);
      for (let i = 0; i < count; i++) {
        const index = w * perWorld + i;
        const path = KOORDINATOR_PATHS[index % KOORDINATOR_PATHS.length] ?? '/mutate-pod';
        if (args.review !== undefined && Number(args.review) !== i) continue;
        const generated = await session.asSent(
          generateReview(mulberry32(caseSeed(seed ^ 0x5bd1e995, index)), world, path, index),
        );
        const where = `${profile.name}: world ${w} review ${i}`;
        const observed = await session.judge(generated, where, args.enforcement);
        const tally = byPath.get(path) ?? newTally();
        tally.compared++;
        if (args.review !== undefined) {
          console.log(JSON.stringify({ world: world.objects, review: generated.review }, null, 2));
          console.log(describe(observed, where));
        }
        if (observed.differences.length === 0) {
          tally.agreeing++;
          if (observed.representationOnly) tally.representation++;
          if (observed.theirs.panic !== undefined) tally.failedOpen++;
          continue;
        }
        const classes = await classify(observed, documented, rejudge);
        if (classes) {
          tally.documentedReviews++;
          for (const id of classes) tally.documented.set(id, (tally.documented.get(id) ?? 0) + 1);
        } else tally.undocumented.push(observed);
        if (classes && args.review !== undefined) console.log(`documented: ${classes.join(', ')}`);
      }
      done += count;
    }
  } finally {
    await oracle.close();
  }
  return byPath;
}

const cell = (n: number, width: number): string => String(n).padStart(width);

/** Prints one profile's table; returns its undocumented count and adds its classes to `classes`. */
function report(name: string, byPath: ReadonlyMap<string, Tally>, classes: Map<string, number>): number {
  console.log(`gates: ${name}`);
  console.log(
    'path                                                     compared  agreeing (repr., failed open)  documented  undocumented',
  );
  const sum = { compared: 0, agreeing: 0, representation: 0, failedOpen: 0, documented: 0, undocumented: 0 };
  for (const [path, tally] of byPath) {
    for (const [id, n] of tally.documented) classes.set(id, (classes.get(id) ?? 0) + n);
    sum.undocumented += tally.undocumented.length;
    sum.compared += tally.compared;
    sum.agreeing += tally.agreeing;
    sum.representation += tally.representation;
    sum.failedOpen += tally.failedOpen;
    sum.documented += tally.documentedReviews;
    console.log(
      `${path.padEnd(56)} ${cell(tally.compared, 8)}  ${cell(tally.agreeing, 8)} (${cell(tally.representation, 5)}, ${cell(tally.failedOpen, 5)})  ${cell(tally.documentedReviews, 10)}  ${cell(tally.undocumented.length, 12)}`,
    );
  }
  console.log(
    `${'total'.padEnd(56)} ${cell(sum.compared, 8)}  ${cell(sum.agreeing, 8)} (${cell(sum.representation, 5)}, ${cell(sum.failedOpen, 5)})  ${cell(sum.documented, 10)}  ${cell(sum.undocumented, 12)}`,
  );
  return sum.undocumented;
}

async function runKoordinatorSuite(): Promise<void> {
  const binary = await ensureOracle((line) => {
    process.stderr.write(`${line}\n`);
  }, koordinator);
  const profiles = GATE_PROFILES.filter(
    (profile) =>
      (args.gates === 'all' || profile.name === args.gates) &&
      (profile.releases?.includes(koordinator) ?? true),
  );
  if (profiles.length === 0) {
    throw new Error(`--gates: one of all, ${GATE_PROFILES.map((profile) => profile.name).join(', ')}`);
  }
  const started = Date.now();
  const results: [GateProfile, Map<string, Tally>][] = [];
  for (const profile of profiles) results.push([profile, await runProfile(binary, profile)]);

  const compared = results.reduce(
    (n, [, byPath]) => n + [...byPath.values()].reduce((m, tally) => m + tally.compared, 0),
    0,
  );
  console.log(
    `differential: ours against Koordinator ${koordinator}, seed ${seed}, ${compared} reviews in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  let undocumented = 0;
  const classes = new Map<string, number>();
  for (const [profile, byPath] of results) undocumented += report(profile.name, byPath, classes);
  console.log('documented differences by class (a review counts under each class that explains part of it):');
  for (const difference of documented) {
    console.log(
      `  ${String(classes.get(difference.id) ?? 0).padStart(6)}  ${difference.id} (${difference.page})`,
    );
  }
  const all = results.flatMap(([, byPath]) => [...byPath.values()]);
  if (args.dump !== undefined) {
    const lines = all.flatMap((tally) =>
      tally.undocumented.map((observed) => JSON.stringify({ ...observed, world: undefined })),
    );
    writeFileSync(args.dump, lines.map((line) => `${line}\n`).join(''));
  }
  for (const tally of all) {
    for (const observed of tally.undocumented.slice(0, show))
      console.log(describe(observed, observed.where ?? ''));
  }
  const empty = results.flatMap(([profile, byPath]) =>
    [...byPath].filter(([, tally]) => tally.compared === 0).map(([path]) => `${path} (${profile.name})`),
  );
  if (args.world === undefined && empty.length > 0) {
    console.error(`no review compared on ${empty.join(', ')}`);
    process.exitCode = 1;
  }
  if (undocumented > 0) {
    console.error(
      `${undocumented} undocumented differences (replay one with --gates G --world W --review K)`,
    );
    process.exitCode = 1;
  }
}

async function main(): Promise<void> {
  if (args.suite !== 'kthena') await runKoordinatorSuite();
  if (args.suite === 'koordinator' || args.world !== undefined) return;
  const undocumented = await runKthenaSuite({
    perPath: total,
    seed,
    show,
    ...(args.review !== undefined ? { review: Number(args.review) } : {}),
  });
  if (undocumented > 0) {
    console.error(
      `${undocumented} undocumented Kthena differences (replay one with --suite kthena --review K)`,
    );
    process.exitCode = 1;
  }
}

await main();
