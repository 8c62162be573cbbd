/**
 * Where a review's time goes beyond what the minimal Koa app does: each step our app takes for a
 * review, timed alone in this process over the same review the load uses, in microseconds per
 * review. Against the gap measured over HTTPS (our CPU time per review minus the minimal Koa app's)
 * it says which steps make up our overhead; what the steps do not cover is the rest of the
 * pipeline (body reading with its limits, Koa's routing of a larger response, TLS writes).
 */
import { Buffer } from 'node:buffer';
import { pruneJson } from '../../webhook/admission/json-depth.js';
import { parseAdmissionReview } from '../../webhook/admission/review.js';
import { admissionResponse, serializeReview } from '../../webhook/admission/response.js';
import type { AdmissionRequest } from '../../webhook/admission/types.js';
import { enforce, type EnforcedJudgement } from '../../webhook/enforcement/apply-enforcement.js';
import { actionFor, DENY_ALL } from '../../webhook/enforcement/enforcement.js';
import { admissionMetrics } from '../../webhook/metrics/admission-metrics.js';
import {
  decisionLogFields,
  MAX_OBJECT_DEPTH,
  MAX_OBJECT_MEMBERS,
  recordDecision,
} from '../../webhook/server/app.js';
import { decide } from '../../webhook/server/decide.js';
import type { StateSnapshot } from '../../webhook/state.js';
import { shortName, type WebhookEntry } from '../../webhook/table.js';
import { operatorLogger } from '../../operator/logger.js';
import { inform } from './report.js';

const ROUNDS = 5;
const MIN_ROUND_MS = 200;

/** Microseconds per call of `step`, the quickest of a few rounds (the least disturbed by the machine). */
export function microsPerCall(step: () => unknown): number {
  let calls = 1;
  // Grow the batch until one round takes long enough for the clock to resolve it.
  for (;;) {
    const started = performance.now();
    for (let i = 0; i < calls; i += 1) step();
    if (performance.now() - started >= MIN_ROUND_MS / 4) break;
    calls *= 2;
  }
  let best = Infinity;
  for (let round = 0; round < ROUNDS; round += 1) {
    const started = performance.now();
    for (let i = 0; i < calls; i += 1) step();
    best = Math.min(best, ((performance.now() - started) * 1000) / calls);
  }
  return best;
}

export interface StepCosts {
  steps: [string, number][];
  total: number;
}

/** The steps of one review of `body` to `entry`, as createAdmissionApp takes them. */
export function measureSteps(entry: WebhookEntry, body: string, state: StateSnapshot): StepCosts {
  const raw = Buffer.from(body);
  const text = body;
  const request: AdmissionRequest = parseAdmissionReview(JSON.parse(text));
  const metrics = admissionMetrics();
  const logger = operatorLogger('info', '/dev/null');
  const judge = (): EnforcedJudgement =>
    enforce(
      entry,
      decide(entry, request, state, logger, metrics),
      actionFor(DENY_ALL, shortName(entry.name)),
    );
  const judgement = judge();
  const steps: [string, number][] = [
    [
      'shape bounds (one scan of the body)',
      microsPerCall(() => pruneJson(raw, { maxDepth: MAX_OBJECT_DEPTH + 2, maxMembers: MAX_OBJECT_MEMBERS })),
    ],
    // The minimal Koa app parses the body too; our share is reading the review out of it.
    ['review from the parsed body', microsPerCall(() => parseAdmissionReview(JSON.parse(text)))],
    ['rule, enforcement and patch', microsPerCall(judge)],
    [
      'response (review and its JSON)',
      microsPerCall(() => serializeReview(admissionResponse(request, judgement.decision, judgement.patch))),
    ],
    [
      'metrics',
      microsPerCall(() => {
        recordDecision(metrics, entry, judgement, 0.0001);
      }),
    ],
    [
      'decision log line (asynchronous)',
      microsPerCall(() => {
        logger.info(decisionLogFields(entry, request, judgement, 0.0001), 'admission decision');
      }),
    ],
  ];
  logger.flush();
  // JSON.parse itself is shared with the minimal Koa app, so it is measured to be taken out.
  const parseOnly = microsPerCall(() => JSON.parse(text));
  steps[1]![1] = Math.max(0, steps[1]![1] - parseOnly);
  return { steps, total: steps.reduce((sum, [, micros]) => sum + micros, 0) };
}

/** Prints the steps of a path against the gap measured over HTTPS. */
export function reportSteps(prefix: string, costs: StepCosts, gapMicros: number): void {
  for (const [step, micros] of costs.steps) {
    inform(`${prefix}: ${step}`, micros, 'µs/review');
  }
  inform(`${prefix}: all steps above`, costs.total, 'µs/review');
  inform(`${prefix}: gap to the minimal Koa app over HTTPS (CPU per review)`, gapMicros, 'µs/review');
}
