/**
 * `npm run bench -- hostile`: what a hostile review costs the server's thread. Every case of the
 * fuzz corpus that the server reads as a review (the unit suite's seed and count, or --hostile-seed
 * and --hostile-cases) is judged in process as createAdmissionApp judges it once the body is in: shape
 * bounds and parse, rule, enforcement, patch and the answer's text. Each case is timed a few times
 * and its quickest kept (the least disturbed by the machine); the slowest case is measured again.
 *
 * The reference, measured in the same run, is JSON.parse of the largest body the server accepts
 * (MAX_BODY_BYTES of a pod review with realistic containers): a review may cost up to reading the
 * largest review there is, and no more. The fuzz suites check that every answer is well formed and
 * that no review blocks the thread; how long one takes is measured here, not asserted there.
 */
import { BadReviewError } from '../../webhook/admission/review.js';
import { admissionResponse, serializeReview } from '../../webhook/admission/response.js';
import { enforceAll } from '../../webhook/enforcement/apply-enforcement.js';
import { DENY_ALL } from '../../webhook/enforcement/enforcement.js';
import { NO_DECISION_METRICS } from '../../webhook/metrics/decision-metrics.js';
import { readReview } from '../../webhook/server/app.js';
import { decide, unreadable } from '../../webhook/server/decide.js';
import { MAX_BODY_BYTES } from '../../webhook/server/read-body.js';
import { operatorLogger } from '../../operator/logger.js';
import { generateCase, type FuzzCase } from '../fuzz/generate.js';
import { SHORT_RUN } from '../fuzz/runner.js';
import { fuzzState, fuzzWebhooks } from '../fuzz/world.js';
import { inform, record } from './report.js';

export interface HostileSettings {
  seed: number;
  cases: number;
}

/** --hostile-seed and --hostile-cases, by default the unit suite's fuzz run (test/unit/fuzz.test.ts). */
export function hostileSettings(flags: ReadonlyMap<string, string>): HostileSettings {
  const count = (name: string, fallback: number): number => {
    const value = Number(flags.get(name) ?? fallback);
    if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} must be a positive integer`);
    return value;
  };
  return { seed: count('hostile-seed', SHORT_RUN.seed), cases: count('hostile-cases', SHORT_RUN.cases) };
}

/** Timings per case: the quickest is kept. */
const TRIES = 3;
/** The slowest few cases again, with more tries, so one disturbed try cannot make the figure. */
const SLOWEST_RETRIED = 5;
const RETRIES = 9;

/** A pod review with as many ordinary containers as fit in `bytes`. */
function largestPodReview(bytes: number): string {
  const review = (containers: number): string =>
    JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: 'reference',
        operation: 'CREATE',
        object: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'reference', namespace: 'team' },
          spec: {
            containers: Array.from({ length: containers }, (_, i) => ({
              name: `container-${i}`,
              image: 'registry.example/app:1.0',
              resources: { requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '1', memory: '2Gi' } },
              env: [{ name: 'MODE', value: 'serve' }],
            })),
          },
        },
      },
    });
  // One container's share of the text, then as many as fit.
  const perContainer = review(1001).length - review(1000).length;
  let containers = Math.floor((bytes - review(0).length) / perContainer);
  while (review(containers).length > bytes) containers -= 1;
  return review(containers);
}

function quickestMs(tries: number, step: () => unknown): number {
  let best = Number.POSITIVE_INFINITY;
  for (let attempt = 0; attempt < tries; attempt++) {
    const started = performance.now();
    step();
    best = Math.min(best, performance.now() - started);
  }
  return best;
}

export function benchHostile(settings: HostileSettings): void {
  const webhooks = new Map(fuzzWebhooks().map((entry) => [entry.path, entry]));
  const state = fuzzState();
  const logger = operatorLogger('info', '/dev/null');
  /** The server's work on one body, from the body in to the answer's text (as in app.ts). */
  const judge = (fuzzCase: FuzzCase): (() => unknown) | undefined => {
    const entry = webhooks.get(fuzzCase.path);
    // Refused by method, route, Content-Type or length before the body is read: no review to time.
    if (!entry || fuzzCase.method !== 'POST' || fuzzCase.expect.kind === 'status') return undefined;
    return () => {
      try {
        const { request, unread } = readReview(fuzzCase.body);
        const judgement = enforceAll(
          entry,
          unread
            ? unreadable(entry, unread, NO_DECISION_METRICS)
            : decide(entry, request, state, logger, NO_DECISION_METRICS),
          DENY_ALL,
        );
        return serializeReview(admissionResponse(request, judgement.decision, judgement.patch));
      } catch (error) {
        // A body that is not a review is answered 400 with its reason: that is a cost too.
        if (error instanceof BadReviewError) return error.message;
        throw error;
      }
    };
  };

  const reference = largestPodReview(MAX_BODY_BYTES);
  const referenceMs = quickestMs(5, () => JSON.parse(reference));
  const timed: { fuzzCase: FuzzCase; step: () => unknown; ms: number }[] = [];
  for (let index = 0; index < settings.cases; index++) {
    const fuzzCase = generateCase(settings.seed, index);
    const step = judge(fuzzCase);
    if (step) timed.push({ fuzzCase, step, ms: quickestMs(TRIES, step) });
  }
  timed.sort((a, b) => b.ms - a.ms);
  for (const slow of timed.slice(0, SLOWEST_RETRIED))
    slow.ms = Math.min(slow.ms, quickestMs(RETRIES, slow.step));
  timed.sort((a, b) => b.ms - a.ms);
  logger.flush();

  const slowest = timed[0];
  if (!slowest) throw new Error(`seed ${settings.seed} gave no case the server reads as a review`);
  const { fuzzCase } = slowest;
  console.log(
    `hostile: ${timed.length} of ${settings.cases} cases of seed ${settings.seed} read as reviews; the slowest: --case ${fuzzCase.index} ${fuzzCase.path}: ${fuzzCase.description.slice(0, 160)}`,
  );
  inform(
    `hostile: reference, JSON.parse of a ${(reference.length / 1024 / 1024).toFixed(1)} MiB pod review`,
    referenceMs,
    'ms',
  );
  inform('hostile: the slowest review, body in to answer', slowest.ms, 'ms');
  inform('hostile: the tenth slowest', timed[Math.min(9, timed.length - 1)]?.ms ?? 0, 'ms');
  record('hostile: the slowest review ÷ parsing the largest body accepted', slowest.ms / referenceMs, '×', 1);
}
