/**
 * `npm run fuzz -- [--cases N] [--seed S] [--case K] [--first K] [--concurrency C] [--timeout MS]`
 *
 * Sends N hostile reviews (default 20,000) to the real admission server in process and prints
 * what failed, grouped by class, with the seed and case index that replays each example:
 * `npm run fuzz -- --seed S --case K` runs case K alone and prints it in full.
 * Exits 1 on any failure.
 */
// First: an unsupported Node.js gets one line saying so, not a dependency's stack trace.
import '../../scripts/runtime/require-node.js';
import { parseArgs } from 'node:util';
import { generateCase } from './generate.js';
import { formatReport, runFuzz } from './runner.js';

const { values } = parseArgs({
  options: {
    cases: { type: 'string', default: '20000' },
    seed: { type: 'string', default: '1' },
    case: { type: 'string', multiple: true },
    first: { type: 'string', default: '0' },
    concurrency: { type: 'string', default: '8' },
    timeout: { type: 'string', default: '2000' },
    quiet: { type: 'boolean', default: false },
  },
});

function integer(name: string, text: string | undefined): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 0)
    throw new Error(`--${name} must be a non-negative integer, got ${JSON.stringify(text)}`);
  return value;
}

const seed = integer('seed', values.seed);
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
// Progress only on a terminal: a run's captured stderr stays empty unless something is wrong.
const showProgress = !values.quiet && process.stderr.isTTY;
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
