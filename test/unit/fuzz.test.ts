/**
 * A short, fixed-seed fuzz run of the real admission server (in process, no cluster): every
 * webhook path gets hostile reviews, and every answer must be bounded and well-formed, and come.
 * How long each takes is the bench's figure (`npm run bench -- hostile`, the same seed and count).
 * `npm run fuzz` runs the long version; a failure printed here replays with
 * `npm run fuzz -- --seed <seed> --case <index>`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fuzzPaths, generateCase } from '../fuzz/generate.js';
import { formatReport, runFuzz, SHORT_RUN } from '../fuzz/runner.js';

const { seed: SEED, cases: CASES } = SHORT_RUN;

describe('admission server fuzz (short run)', () => {
  it(
    `answers ${CASES} hostile reviews (seed ${SEED}) within bounds, on every path`,
    { timeout: 300_000 },
    async () => {
      const report = await runFuzz({
        seed: SEED,
        cases: CASES,
        deadlineMs: 150_000,
        judgeHandlerTime: false,
      });
      const summary = formatReport(report, 2);
      assert.equal(report.stoppedAtDeadline, false, `the run did not finish in time:\n${summary}`);
      assert.equal(report.casesRun, CASES);
      assert.deepEqual(
        Object.keys(report.casesByPath).sort(),
        fuzzPaths().sort(),
        'every webhook path got cases',
      );
      assert.deepEqual(report.countsByClass, {}, `fuzz failures:\n${summary}`);
    },
  );

  it('still reports a rule that never returns, after replaying it alone on a fresh server', async () => {
    // A plain transport case that expects a decision goes through its rule unchanged.
    const index = Array.from({ length: 400 }, (_, i) => i).find((i) => {
      const fuzzCase = generateCase(SEED, i);
      return fuzzCase.transport === 'plain' && fuzzCase.expect.kind === 'decision';
    });
    assert.notEqual(index, undefined, 'the seed has a plain case that expects a decision');
    const report = await runFuzz({
      seed: SEED,
      cases: 1,
      only: [index as number],
      hangOnCase: index,
      timeoutMs: 500,
    });
    assert.deepEqual(report.countsByClass, { timeout: 1 }, formatReport(report, 2));
    assert.match(report.failures[0]?.detail ?? '', /no answer in 3 replays alone .*inside this case's rule/);
  });
});
