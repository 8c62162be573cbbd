/**
 * `npm run fuzz -- [--cases N] [--seed S] [--case K] [--first K] [--concurrency C] [--timeout MS]`
 * `npm run fuzz -- --blast-radius [--reviews N] [--seed S]`
 * `npm run fuzz -- --help`
 *
 * Sends N hostile reviews (default 20,000) to the real admission server in process and prints
 * what failed, grouped by class, with the seed and case index that replays each example:
 * `npm run fuzz -- --seed S --case K` runs case K alone and prints it in full.
 * Exits 1 on any failure.
 *
 * --blast-radius checks the narrowed webhook configurations instead (test/fuzz/blast-radius/): N
 * generated pod reviews (default 1,000,000, 500 per generated state) and the corpus's review of
 * every path; each counterexample is written to .cache/fuzz/blast-radius/ and printed.
 */
// First: an unsupported Node.js gets one line saying so, not a dependency's stack trace.
import '../../scripts/runtime/require-node.js';
import { parseArgs } from 'node:util';
import { generateCase } from './generate.js';
import { formatReport, runFuzz } from './runner.js';
import { describeViolation, runProperty, writeCounterexample } from './blast-radius/property.js';

const USAGE = `npm run fuzz -- [--cases N] [--seed S] [--case K]... [--first K] [--concurrency C] [--timeout MS] [--quiet]
  N hostile reviews (default 20000) of seed S (default 1) against the admission server in process;
  --case K replays case K alone (repeatable), --first K starts at case K, --concurrency C calls at
  once (default 8), --timeout MS per call (default 2000), --quiet shows no progress.
npm run fuzz -- --blast-radius [--reviews N] [--seed S]
  N generated pod reviews (default 1000000) against the narrowed webhook configurations.`;

/** Generated pod reviews per generated state. */
const REVIEWS_PER_STATE = 500;

const { values } = parseArgs({
  options: {
    cases: { type: 'string', default: '20000' },
    seed: { type: 'string', default: '1' },
    case: { type: 'string', multiple: true },
    first: { type: 'string', default: '0' },
    concurrency: { type: 'string', default: '8' },
    timeout: { type: 'string', default: '2000' },
    quiet: { type: 'boolean', default: false },
    'blast-radius': { type: 'boolean', default: false },
    reviews: { type: 'string', default: '1000000' },
    help: { type: 'boolean', default: false },
  },
});

function integer(name: string, text: string | undefined): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 0)
    throw new Error(`--${name} must be a non-negative integer, got ${JSON.stringify(text)}`);
  return value;
}

if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const seed = integer('seed', values.seed);
// Progress only on a terminal: a run's captured stderr stays empty unless something is wrong.
const showProgress = !values.quiet && process.stderr.isTTY;
if (values['blast-radius']) {
  process.exitCode = blastRadius(seed, integer('reviews', values.reviews), showProgress);
} else {
  await httpFuzz(seed, showProgress);
}

function blastRadius(seed: number, reviews: number, progress: boolean): number {
  const perState = Math.min(REVIEWS_PER_STATE, Math.max(1, reviews));
  const started = performance.now();
  const report = runProperty({
    seed,
    states: Math.ceil(reviews / perState),
    reviewsPerState: perState,
    chainEvery: 20,
    progress: progress
      ? (done, total) => {
          process.stderr.write(`\r${done} / ${total} reviews`);
        }
      : undefined,
  });
  if (progress) process.stderr.write('\n');
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `blast radius, seed ${seed}: ${report.reviews} reviews (${report.chains} also through the whole chain both ways) in ${seconds.toFixed(1)} s`,
  );
  for (const [webhook, { registered, sent }] of Object.entries(report.byWebhook)) {
    if (registered !== sent)
      console.log(
        `  ${webhook}: ${sent} of ${registered} reviews sent (${((100 * sent) / registered).toFixed(1)} %)`,
      );
  }
  for (const violation of report.violations) {
    console.log(`\nCOUNTEREXAMPLE\n${describeViolation(violation, writeCounterexample(violation, seed))}`);
  }
  console.log(
    report.violations.length === 0 ? 'no counterexample' : `${report.violations.length} counterexample(s)`,
  );
  return report.violations.length > 0 ? 1 : 0;
}

async function httpFuzz(seed: number, showProgress: boolean): Promise<void> {
  const only = values.case?.map((text) => integer('case', text));
  if (only) {
    for (const index of only) {
      const fuzzCase = generateCase(seed, index);
      const body =
        fuzzCase.body.length > 2000
          ? `${fuzzCase.body.subarray(0, 2000).toString('utf8')}…(${fuzzCase.body.length} bytes)`
          : fuzzCase.body.toString('utf8');
      console.log(
        `case ${index} of seed ${seed}: ${fuzzCase.method} ${fuzzCase.path} (${fuzzCase.transport}${fuzzCase.declaredLength === undefined ? '' : ` ${fuzzCase.declaredLength} bytes declared`}, Content-Type ${JSON.stringify(fuzzCase.contentType ?? null)}, expects ${JSON.stringify(fuzzCase.expect)})`,
      );
      console.log(`  ${fuzzCase.description}`);
      console.log(`  body: ${body}`);
    }
  }
  const report = await runFuzz({
    seed,
    cases: integer('cases', values.cases),
    first: integer('first', values.first),
    ...(only ? { only } : {}),
    concurrency: Math.max(1, integer('concurrency', values.concurrency)),
    timeoutMs: integer('timeout', values.timeout),
    progress: showProgress
      ? (line) => {
          process.stderr.write(`\r${line}   `);
        }
      : undefined,
  });
  if (showProgress) process.stderr.write('\n');
  console.log(formatReport(report, only ? 1000 : 3));
  process.exitCode = report.failures.length > 0 ? 1 : 0;
}
