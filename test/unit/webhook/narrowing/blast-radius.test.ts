/**
 * The blast-radius property on a short fixed-seed run (`npm run fuzz -- --blast-radius` runs a
 * million reviews): every generated review the narrowed configuration would not send to a webhook
 * is one that webhook answers with a plain "allowed". A counterexample fails with the review and
 * the state written to .cache/fuzz/blast-radius/.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mulberry32 } from '../../../fuzz/prng.js';
import {
  checkReview,
  describeViolation,
  prepare,
  runProperty,
  writeCounterexample,
  type PropertyReport,
} from '../../../fuzz/blast-radius/property.js';
import { generateReview } from '../../../fuzz/blast-radius/reviews.js';
import { buildState, generateState } from '../../../fuzz/blast-radius/states.js';

const SEED = 20_260_634;

describe('blast radius: a review that is not sent is one the webhook would have allowed unchanged', () => {
  it('holds over 20,000 generated reviews and the corpus of every path, with the whole chain deciding the same', () => {
    const report = runProperty({ seed: SEED, states: 100, reviewsPerState: 200, chainEvery: 9 });
    const files = report.violations.map((violation) =>
      describeViolation(violation, writeCounterexample(violation, SEED)),
    );
    assert.deepEqual(files, [], 'counterexamples');
    assert.ok(report.reviews >= 20_000, `${report.reviews} reviews`);
    assert.ok(report.chains >= 2000, `${report.chains} chains`);
    // The run exercises both sides of the property for both pod webhooks.
    // Resizes are a share of the UPDATEs, so fewer of them are drawn.
    for (const [webhook, least] of [
      ['mutate-pod', 1000],
      ['validate-pod', 1000],
      ['validate-pod-resize', 200],
    ] as const) {
      const counts = report.byWebhook[webhook];
      assert.ok(counts, webhook);
      assert.ok(
        counts.sent > least && counts.registered - counts.sent > least,
        `${webhook}: ${JSON.stringify(counts)}`,
      );
    }
  });

  it('catches a reach that leaves out what a rule acts on', () => {
    // /validate-pod narrowed to nothing: every review its rules would refuse is then a counterexample.
    const rng = mulberry32(SEED);
    const report: PropertyReport = { reviews: 0, byWebhook: {}, chains: 0, violations: [] };
    for (let s = 0; s < 20 && report.violations.length === 0; s++) {
      const generated = generateState(rng);
      const built = buildState(generated);
      const blind = {
        ...built,
        webhooks: built.webhooks.map((entry) =>
          entry.path === '/validate-pod' ? { ...entry, reach: () => ({ anywhere: [], within: [] }) } : entry,
        ),
      };
      const prepared = prepare(blind);
      for (let r = 0; r < 200; r++) checkReview(prepared, generateReview(rng, generated), report, generated);
    }
    assert.ok(report.violations.length > 0, 'a reach of nothing is caught');
    assert.match(
      report.violations[0]?.problem ?? '',
      /not sent, yet the webhook's answer is not a plain allowed/,
    );
  });
});
