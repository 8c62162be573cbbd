/**
 * The blast-radius property: for a state and a review, if the configuration the operator writes
 * for that state would not send the review to a webhook (matched by webhook/chain as the API
 * server matches), that webhook's own answer is a plain "allowed": no refusal, no patch, no
 * quota reservation, and (for failurePolicy=Fail webhooks) no warning. Also checked on the way:
 * no review is sent to one path twice (the entries of a path are disjoint), a reach condition
 * never errs on a review the API server can send, and on a share of the reviews the whole chain
 * (mutating, then validating, as `admit` runs it) decides the same with and without narrowing.
 *
 * A failure names the state and review in a JSON file (writeCounterexample) that replays it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import type { AdmissionRequest } from '../../../webhook/admission/types.js';
import { parseAdmissionReview } from '../../../webhook/admission/review.js';
import { runChain, type Verdict } from '../../../webhook/chain/run-chain.js';
import { matchWebhook } from '../../../webhook/chain/match-webhook.js';
import type { ChainContext } from '../../../webhook/chain/chain-context.js';
import { enforce } from '../../../webhook/enforcement/apply-enforcement.js';
import { actionFor } from '../../../webhook/enforcement/enforcement.js';
import { NO_DECISION_METRICS } from '../../../webhook/metrics/decision-metrics.js';
import { narrowWebhooks } from '../../../webhook/narrowing/narrow-webhooks.js';
import { decide } from '../../../webhook/server/decide.js';
import { shortName, type WebhookEntry } from '../../../webhook/table.js';
import { repoRoot } from '../../../scripts/cluster/layout.js';
import { caseSeed, mulberry32 } from '../prng.js';
import { seeds } from '../seeds.js';
import { fuzzState, fuzzWebhooks } from '../world.js';
import { NAMESPACE_NAME_LABEL } from '../../../webhook/names.js';
import { generateReview } from './reviews.js';
import { buildState, generateState, type BuiltState, type GeneratedState } from './states.js';

const silent = pino({ level: 'silent' });

/** A review and state the property fails for, and how. */
export interface Violation {
  webhook: string;
  problem: string;
  review: AdmissionRequest;
  state: GeneratedState | 'fuzz world';
  /** The entries of the webhook's path as written, with their selectors and conditions. */
  entries: Pick<WebhookEntry, 'name' | 'namespaceSelector' | 'objectSelector' | 'matchConditions'>[];
  answer?: unknown;
}

export interface PropertyReport {
  reviews: number;
  /** Per webhook: reviews its rules and base selectors take, and how many of them narrowing still sends. */
  byWebhook: Record<string, { registered: number; sent: number }>;
  /** Reviews also run through the whole chain both ways. */
  chains: number;
  violations: Violation[];
}

/** One state's table, narrowed and as it is, grouped by path. */
export interface PreparedState {
  built: BuiltState;
  narrowedByPath: Map<string, WebhookEntry[]>;
  narrowed: WebhookEntry[];
}

export function prepare(built: BuiltState): PreparedState {
  const narrowed = narrowWebhooks(built.webhooks, built.state);
  const narrowedByPath = new Map<string, WebhookEntry[]>();
  for (const entry of narrowed) {
    const list = narrowedByPath.get(entry.path);
    if (list) list.push(entry);
    else narrowedByPath.set(entry.path, [entry]);
  }
  return { built, narrowedByPath, narrowed };
}

const shape = (entry: WebhookEntry): Violation['entries'][number] => ({
  name: entry.name,
  namespaceSelector: entry.namespaceSelector,
  objectSelector: entry.objectSelector,
  matchConditions: entry.matchConditions,
});

/** The property for one review against every webhook of the table. */
export function checkReview(
  prepared: PreparedState,
  review: AdmissionRequest,
  report: PropertyReport,
  state: Violation['state'],
): void {
  const { built } = prepared;
  const match = { namespaceLabels: built.namespaceLabels, namespaced: true };
  report.reviews += 1;
  for (const entry of built.webhooks) {
    const base = matchWebhook(entry, review, match);
    if (base.call !== true) continue;
    const counts = (report.byWebhook[shortName(entry.name)] ??= { registered: 0, sent: 0 });
    counts.registered += 1;
    const cells = prepared.narrowedByPath.get(entry.path) ?? [];
    const violation = (problem: string, answer?: unknown): void => {
      report.violations.push({
        webhook: entry.name,
        problem,
        review,
        state,
        entries: cells.map(shape),
        answer,
      });
    };
    const results = cells.map((cell) => matchWebhook(cell, review, match));
    const refused = results.find((result) => result.call === 'refuse');
    if (refused && refused.call === 'refuse') {
      violation(`a match condition errs on a review the API server can send: ${refused.message}`);
      continue;
    }
    const sent = results.filter((result) => result.call === true).length;
    if (sent > 1) violation(`sent ${sent} times: the entries of ${entry.path} overlap`);
    if (sent > 0) {
      counts.sent += 1;
      continue;
    }
    const judged = enforce(
      entry,
      decide(entry, review, built.state, silent, NO_DECISION_METRICS),
      actionFor(built.enforcement, shortName(entry.name)),
    );
    const { decision } = judged;
    const problems = [
      ...(decision.allowed ? [] : [`refused: ${decision.message}`]),
      ...((judged.patch?.length ?? 0) > 0 ? ['patched'] : []),
      ...(decision.reserve ? ['reserved quota'] : []),
      // An Ignore webhook's warning explains why it did nothing (a namespace without a tier):
      // the API server never asks it for one. A Fail webhook's warning is news to the user.
      ...(entry.failurePolicy === 'Fail' && (decision.warnings?.length ?? 0) > 0 ? ['warned'] : []),
    ];
    if (problems.length > 0) {
      violation(`not sent, yet the webhook's answer is not a plain allowed: ${problems.join(', ')}`, {
        allowed: decision.allowed,
        message: decision.allowed ? undefined : decision.message,
        warnings: decision.warnings,
        patch: judged.patch,
        reserve: decision.reserve
          ? {
              ...decision.reserve,
              requests: Object.fromEntries([...decision.reserve.requests].map(([k, v]) => [k, String(v)])),
            }
          : undefined,
      });
    }
  }
}

/** What `admit` decides: allowed, the refusal, the object as stored, the warnings. */
function outcome(verdict: Verdict): string {
  const warnings = verdict.calls.flatMap((call) => call.warnings).sort();
  return JSON.stringify({
    allowed: verdict.allowed,
    denial: verdict.denial?.message,
    object: verdict.object,
    warnings,
  });
}

/** The whole chain with the table as written and as narrowed decides the same. */
export function checkChain(
  prepared: PreparedState,
  review: AdmissionRequest,
  report: PropertyReport,
  state: Violation['state'],
): void {
  // The chain judges objects as created or updated, not a subresource's call (a resize).
  if (review.subResource) return;
  const { built } = prepared;
  const context = (webhooks: WebhookEntry[]): ChainContext => ({
    webhooks,
    state: built.state,
    logger: silent,
    metrics: NO_DECISION_METRICS,
    namespaceLabels: built.namespaceLabels,
  });
  const input = () => ({
    kind: review.kind,
    resource: review.resource,
    namespaced: true,
    namespace: review.namespace,
    operation: review.operation as 'CREATE' | 'UPDATE',
    object: structuredClone(review.object),
    oldObject: structuredClone(review.oldObject),
  });
  report.chains += 1;
  const before = outcome(runChain(input(), context(built.webhooks)));
  const after = outcome(runChain(input(), context(prepared.narrowed)));
  if (before !== after) {
    report.violations.push({
      webhook: '(the chain)',
      problem: 'the chain decides differently with the narrowed configuration',
      review,
      state,
      entries: prepared.narrowed
        .filter((entry) => entry.reach === undefined && /pod/.test(entry.path))
        .map(shape),
      answer: { asWritten: JSON.parse(before) as unknown, narrowed: JSON.parse(after) as unknown },
    });
  }
}

/** The fuzz corpus's valid review of every path (pods, nodes, quotas, ConfigMaps, Models...). */
export function seedReviews(): AdmissionRequest[] {
  return seeds().map((seed, index) =>
    parseAdmissionReview({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: { ...seed.request, uid: `seed-${index}` },
    }),
  );
}

export interface PropertyRun {
  seed: number;
  states: number;
  reviewsPerState: number;
  /** Every Nth review also runs the whole chain both ways (0: never). */
  chainEvery: number;
  /** Stop collecting after this many violations. */
  maxViolations?: number;
  progress?: (done: number, total: number) => void;
}

/**
 * Generated states × generated pod reviews, plus the seed reviews of every path against the fuzz
 * world and against each generated state.
 */
export function runProperty(run: PropertyRun): PropertyReport {
  const report: PropertyReport = { reviews: 0, byWebhook: {}, chains: 0, violations: [] };
  const maxViolations = run.maxViolations ?? 5;
  const corpus = seedReviews();
  const worldState = fuzzState();
  const world = prepare({
    webhooks: fuzzWebhooks(),
    state: worldState,
    enforcement: { byWebhook: new Map(), fallback: 'deny' },
    namespaceLabels: (name) => worldState.namespace(name)?.labels ?? { [NAMESPACE_NAME_LABEL]: name },
  });
  for (const review of corpus) checkReview(world, review, report, 'fuzz world');
  const total = run.states * run.reviewsPerState;
  for (let s = 0; s < run.states && report.violations.length < maxViolations; s++) {
    const generated = generateState(mulberry32(caseSeed(run.seed, s)));
    const prepared = prepare(buildState(generated));
    for (const review of corpus) checkReview(prepared, review, report, generated);
    const rng = mulberry32(caseSeed(run.seed ^ 0x5bd1e995, s));
    // Every chainEvery-th review the chain can judge (not a subresource's) goes through it too.
    let judged = 0;
    for (let r = 0; r < run.reviewsPerState && report.violations.length < maxViolations; r++) {
      const review = generateReview(rng, generated);
      checkReview(prepared, review, report, generated);
      if (run.chainEvery > 0 && !review.subResource && judged++ % run.chainEvery === 0)
        checkChain(prepared, review, report, generated);
    }
    run.progress?.((s + 1) * run.reviewsPerState, total);
  }
  return report;
}

/** Writes a violation where a developer finds it; returns the file's path. */
export function writeCounterexample(violation: Violation, seed: number): string {
  const directory = join(repoRoot, '.cache', 'fuzz', 'blast-radius');
  mkdirSync(directory, { recursive: true });
  const path = join(directory, `counterexample-seed-${seed}-${Date.now()}.json`);
  writeFileSync(path, `${JSON.stringify(violation, null, 2)}\n`);
  return path;
}

/** A violation for a failure message: what went wrong, the review and the file with everything. */
export function describeViolation(violation: Violation, file: string): string {
  return [
    `${violation.webhook}: ${violation.problem}`,
    `review: ${JSON.stringify(violation.review)}`,
    `answer: ${JSON.stringify(violation.answer)}`,
    `state and entries: ${file}`,
  ].join('\n');
}
