/**
 * What the admission server counts: reviews answered and how, rules' outcomes, failures to open,
 * what it refused before any rule ran, callers it could not verify, its connections and certificate swaps, and the quota
 * reviews it forwarded to the leader. Registered into the registry /metrics serves, beside the
 * operator's own (operator/metrics/).
 */
import { Counter, Histogram, Registry } from 'prom-client';
import type { DecisionMetrics } from './decision-metrics.js';

/** would-deny and would-patch: what a webhook in enforcement warn or dryrun did not do. */
export type DecisionOutcome = 'allowed' | 'patched' | 'denied' | 'error' | 'would-deny' | 'would-patch';

export function admissionMetrics(registry: Registry = new Registry()) {
  const registers = [registry];
  const metrics = {
    registry,
    requestDuration: new Histogram({
      name: 'admission_request_duration_seconds',
      help: 'Time to answer an admission review, by webhook.',
      labelNames: ['webhook'] as const,
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
    decisions: new Counter({
      name: 'admission_decisions_total',
      help: 'Admission decisions, by webhook, outcome (allowed, patched, denied, error, would-deny, would-patch) and the enforcement in force (deny, warn, dryrun).',
      labelNames: ['webhook', 'outcome', 'enforcement'] as const,
      registers,
    }),
    ruleOutcomes: new Counter({
      name: 'admission_rule_outcomes_total',
      help: 'What rules did (from their audit): e.g. GPU classes injected by tier and class, skips by reason.',
      labelNames: ['webhook', 'action', 'reason', 'tier', 'class'] as const,
      registers,
    }),
    failOpen: new Counter({
      name: 'admission_fail_open_total',
      help: 'Objects a mutating failurePolicy=Ignore webhook let through unchanged because it could not do its job, by cause (refusal, exception, unreadable-object).',
      labelNames: ['webhook', 'cause'] as const,
      registers,
    }),
    connectionsDropped: new Counter({
      name: 'admission_connections_dropped_total',
      help: 'Connections the admission server refused because it already had the most it accepts.',
      registers,
    }),
    badRequests: new Counter({
      name: 'admission_bad_requests_total',
      help: 'Requests refused before any rule ran (malformed review, wrong method, too large), by HTTP status.',
      labelNames: ['status'] as const,
      registers,
    }),
    requestsAborted: new Counter({
      name: 'admission_requests_aborted_total',
      help: 'Calls that ended before the answer was written, by webhook and stage: body (the connection ended while the review was being read: the caller hung up or stalled), answer (the review was read but the connection closed first: the API server gave up at its webhook timeout). Not errors, never counted as 5xx.',
      labelNames: ['webhook', 'stage'] as const,
      registers,
    }),
    certificateReloads: new Counter({
      name: 'admission_certificate_reloads_total',
      help: 'Times the admission server swapped its serving certificate in place.',
      registers,
    }),
    unverifiedCallers: new Counter({
      name: 'admission_unverified_requests_total',
      help: 'Requests to a webhook path from a caller that is not the verified API server (nor a replica), by reason (no-credentials, untrusted-certificate, certificate-subject-not-allowed, token-not-authenticated, token-user-not-allowed, token-review-unavailable, forward-without-replica-certificate) and what became of them: refused (401/403/503 with no decision), or decided without a quota reservation (verification off).',
      labelNames: ['reason', 'result'] as const,
      registers,
    }),
    quotaForwards: new Counter({
      name: 'admission_quota_forward_total',
      help: "Quota-reserving pod reviews this replica handed to the leader: answered by it, or decided here because the forward failed (including a review that waited past the forward's time bound) or too many were waiting (busy).",
      labelNames: ['result'] as const,
      registers,
    }),
    quotaDecidedWithoutLeader: new Counter({
      name: 'admission_quota_decided_without_leader_total',
      help: 'Quota-reserving pod reviews this replica decided from its own ledger while it neither led nor knew a leader to hand them to (no Lease seen yet, its own renewal past the deadline while no other holder is known, or no certificate yet to reach it): with other replicas serving, such reviews are decided in more than one place.',
      registers,
    }),
    quotaJournalReservations: new Counter({
      name: 'admission_quota_journal_reservations_total',
      help: "The leader's reservations this replica (a follower) took from batch answers, to hold on the leader's behalf until the pod watch delivers their pods.",
      registers,
    }),
    quotaForwardBatches: new Histogram({
      name: 'admission_quota_forward_batch_reviews',
      help: 'Reviews per batch of forwarded quota admissions: sent (by this replica, a follower) or decided (by this replica, the leader, in one pass).',
      labelNames: ['side'] as const,
      buckets: [1, 4, 16, 64, 128, 256],
      registers,
    }),
  };
  const decisions: DecisionMetrics = {
    failedOpen: (webhook, cause) => {
      metrics.failOpen.inc({ webhook, cause });
    },
  };
  return { ...metrics, ...decisions };
}

export type AdmissionMetrics = ReturnType<typeof admissionMetrics>;
