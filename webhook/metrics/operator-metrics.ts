/**
 * The Prometheus metrics the operator exposes at /metrics, in one registry of its own: the
 * admission server, the certificate manager, the state store and the configuration reconciler
 * all count into it, so it belongs to none of them.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** would-deny and would-patch: what a webhook in enforcement warn or dryrun did not do. */
export type DecisionOutcome = 'allowed' | 'patched' | 'denied' | 'error' | 'would-deny' | 'would-patch';
/** Why a mutating failurePolicy=Ignore webhook let an object through unchanged. */
export type FailOpenCause = 'refusal' | 'exception' | 'unreadable-object';

export class OperatorMetrics {
  readonly registry = new Registry();

  readonly requestDuration = new Histogram({
    name: 'admission_request_duration_seconds',
    help: 'Time to answer an admission review, by webhook.',
    labelNames: ['webhook'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });

  readonly decisions = new Counter({
    name: 'admission_decisions_total',
    help: 'Admission decisions, by webhook, outcome (allowed, patched, denied, error, would-deny, would-patch) and the enforcement in force (deny, warn, dryrun).',
    labelNames: ['webhook', 'outcome', 'enforcement'] as const,
    registers: [this.registry],
  });

  readonly ruleOutcomes = new Counter({
    name: 'admission_rule_outcomes_total',
    help: 'What rules did (from their audit): e.g. GPU classes injected by tier and class, skips by reason.',
    labelNames: ['webhook', 'action', 'reason', 'tier', 'class'] as const,
    registers: [this.registry],
  });

  readonly tierMappingValid = new Gauge({
    name: 'admission_gpu_tier_mapping_valid',
    help: '1 when the gpu-tier-mapping ConfigMap in the cluster is valid (or absent), 0 while an invalid one is ignored.',
    registers: [this.registry],
  });

  readonly enforcement = new Gauge({
    name: 'admission_webhook_enforcement',
    help: 'The enforcement in force per webhook: 1 on the action (deny, warn, dryrun) it has.',
    labelNames: ['webhook', 'action'] as const,
    registers: [this.registry],
  });

  readonly enforcementConfigValid = new Gauge({
    name: 'admission_enforcement_config_valid',
    help: "1 when the enforcement key of the operator's ConfigMap is valid (or absent), 0 while an invalid one is ignored.",
    registers: [this.registry],
  });

  readonly auditFindings = new Gauge({
    name: 'admission_audit_findings',
    help: 'Existing objects the last periodic audit found that a webhook would refuse or change (outcome refused, changed), by webhook; only on the leader.',
    labelNames: ['webhook', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly auditLastSuccess = new Gauge({
    name: 'admission_audit_last_success_timestamp_seconds',
    help: 'When (Unix time) the last periodic audit finished.',
    registers: [this.registry],
  });

  readonly auditDuration = new Gauge({
    name: 'admission_audit_duration_seconds',
    help: 'How long the last periodic audit took.',
    registers: [this.registry],
  });

  readonly tierMappingRejected = new Counter({
    name: 'admission_gpu_tier_mapping_rejected_total',
    help: 'Invalid gpu-tier-mapping versions that got into the cluster and were ignored (the last good one stayed).',
    registers: [this.registry],
  });

  readonly failOpen = new Counter({
    name: 'admission_fail_open_total',
    help: 'Objects a mutating failurePolicy=Ignore webhook let through unchanged because it could not do its job, by cause (refusal, exception, unreadable-object).',
    labelNames: ['webhook', 'cause'] as const,
    registers: [this.registry],
  });

  readonly connectionsDropped = new Counter({
    name: 'admission_connections_dropped_total',
    help: 'Connections the admission server refused because it already had the most it accepts.',
    registers: [this.registry],
  });

  readonly badRequests = new Counter({
    name: 'admission_bad_requests_total',
    help: 'Requests refused before any rule ran (malformed review, wrong method, too large), by HTTP status.',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });

  readonly requestsAborted = new Counter({
    name: 'admission_requests_aborted_total',
    help: 'Calls that ended before the answer was written, by webhook and stage: body (the connection ended while the review was being read: the caller hung up or stalled), answer (the review was read but the connection closed first: the API server gave up at its webhook timeout). Not errors, never counted as 5xx.',
    labelNames: ['webhook', 'stage'] as const,
    registers: [this.registry],
  });

  readonly certificateNotAfter = new Gauge({
    name: 'admission_certificate_not_after_seconds',
    help: 'Expiry (Unix time) of the certificates in use: the serving certificate and each CA in the bundle.',
    labelNames: ['certificate', 'serial'] as const,
    registers: [this.registry],
  });

  readonly certificateRotations = new Counter({
    name: 'admission_certificate_rotations_total',
    help: 'Certificates this replica issued and stored, by kind (ca, serving).',
    labelNames: ['certificate'] as const,
    registers: [this.registry],
  });

  readonly certificateReconcileErrors = new Counter({
    name: 'admission_certificate_reconcile_errors_total',
    help: 'Certificate reconciles that failed (the Secret could not be read or written); each is retried.',
    registers: [this.registry],
  });

  readonly certificateReloads = new Counter({
    name: 'admission_certificate_reloads_total',
    help: 'Times the admission server swapped its serving certificate in place.',
    registers: [this.registry],
  });

  readonly configurationRepairs = new Counter({
    name: 'admission_webhook_configuration_writes_total',
    help: 'Writes of the webhook configurations (create or repair of drift), by kind.',
    labelNames: ['configuration', 'action'] as const,
    registers: [this.registry],
  });

  readonly storeLists = new Counter({
    name: 'admission_store_lists_total',
    help: 'Complete lists of a watched kind into the state store: one at start, then one per relist (410 Gone, SIGHUP).',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  /** What the state store holds, by watched kind; set by the store (see storeObjects). */
  storeSizes: () => Iterable<readonly [kind: string, objects: number]> = () => [];

  readonly storeObjects = new Gauge({
    name: 'admission_store_objects',
    help: 'Objects the state store keeps, by watched kind (pods: the live pods counted against quotas).',
    labelNames: ['kind'] as const,
    registers: [this.registry],
    collect: () => {
      for (const [kind, objects] of this.storeSizes()) this.storeObjects.set({ kind }, objects);
    },
  });

  readonly memoryLimit = new Gauge({
    name: 'admission_memory_limit_bytes',
    help: "The container's memory limit, from the downward API (ADMISSION_MEMORY_LIMIT); absent without one.",
    registers: [this.registry],
  });

  readonly informerRestarts = new Counter({
    name: 'admission_informer_restarts_total',
    help: 'Watch restarts after an error, by watched kind.',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  readonly leader = new Gauge({
    name: 'admission_leader',
    help: '1 while this replica holds the admission-operator Lease (it alone writes the Secret and the webhook configurations), else 0.',
    registers: [this.registry],
  });

  readonly quotaForwards = new Counter({
    name: 'admission_quota_forward_total',
    help: 'Quota-reserving pod reviews this replica handed to the leader: answered by it, or decided here because the forward failed or too many were in flight (busy).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  constructor() {
    this.leader.set(0);
    collectDefaultMetrics({ register: this.registry });
  }
}
