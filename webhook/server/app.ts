/**
 * The Koa application of the admission port: one POST route per enabled webhook (from the table),
 * plus /healthz and /readyz. Metrics and debug views are served on their own port
 * (metrics-server.ts), so nothing that can reach the webhooks can read them. Transport (TLS,
 * certificate reloads, connection limits) lives in https-server.ts.
 */
import Koa from 'koa';
import type { Logger } from 'pino';
import { pruneJson } from '../admission/json-depth.js';
import { parseAdmissionReview, BadReviewError } from '../admission/review.js';
import { admissionResponse, serializeReview } from '../admission/response.js';
import type { AdmissionRequest, Decision } from '../admission/types.js';
import type { StateSnapshot } from '../state.js';
import type { WebhookEntry } from '../table.js';
import { MAX_LOG_FIELD_CHARS, truncate } from '../util/bounded-text.js';
import { decide, unreadable } from './decide.js';
import { DENY_ALL, type Enforcement } from '../enforcement/enforcement.js';
import { enforceAll, type EnforcedJudgement } from '../enforcement/apply-enforcement.js';
import type { AdmissionMetrics } from '../metrics/admission-metrics.js';
import { BodyAbortedError, BodyBudget, MAX_BODY_BYTES, readBody } from './read-body.js';
import { answerBeforeBody } from './answer-before-body.js';
import { watchForAbandonedCall } from './abandoned-calls.js';
import type { Caller, CallerVerifier } from './caller-verification.js';
import { callerGate } from './caller-gate.js';
import { decodeBatch, FORWARD_BATCH_PATH, JOURNAL_HEADER, MAX_BATCH_BYTES } from './forward-batch.js';
import { pageJson, type ReservationJournal } from './reservation-journal.js';
import { HANDOVER_HEADER, type QuotaAuthority } from './quota-authority.js';
import { splitHostPort } from '../util/host-port.js';

export { MAX_BODY_BYTES } from './read-body.js';

/**
 * How deep an object under review may nest: far above any real manifest (a Deployment's pod
 * template is about 12 levels deep), far below what would make cloning or diffing overflow the stack.
 */
export const MAX_OBJECT_DEPTH = 512;
/**
 * How many keys one map, or items one list, may have: far above any real object (a node reports
 * at most 50 images by default; a pod's annotations fit in 256 KiB), far below the 100,000-key
 * maps that cost V8 hundreds of milliseconds to parse, copy and diff.
 */
export const MAX_OBJECT_MEMBERS = 10_000;
/** The object sits two levels down in the review: {request: {object: …}}. */
const ENVELOPE_DEPTH = 2;

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, { ok: boolean; message: string }>;
}

export interface AdmissionAppOptions {
  /** Enabled webhooks; read on every request so a gate change needs no new app. */
  webhooks: () => readonly WebhookEntry[];
  state: () => StateSnapshot;
  readiness: () => Promise<ReadinessReport>;
  metrics: AdmissionMetrics;
  logger: Logger;
  /** Records a decision's quota reservation (see Decision.reserve). */
  reserve?: (reservation: NonNullable<Decision['reserve']>) => void;
  /** Where this replica's reservations are kept for followers to hold on its behalf. */
  journal?: ReservationJournal;
  /**
   * Hands a review that would reserve quota to the leader (see quota-forwarder.ts): undefined
   * when there is nobody to hand it to, else the leader's answer or undefined when that failed.
   */
  forward?: (path: string, body: Buffer, uid: string) => Promise<Buffer | undefined> | undefined;
  /** Whether this replica is the ledger for forwarded batches, and the handover to a new leader. */
  authority?: Pick<QuotaAuthority, 'decidesForwarded' | 'handOverTo' | 'successorAddress'>;
  /** Bytes all bodies being read may hold together (default MAX_BUFFERED_BODY_BYTES). */
  bodyBudget?: BodyBudget;
  /** Each webhook's enforcement action, read on every request (it changes at run time); deny when omitted. */
  enforcement?: () => Enforcement;
  /**
   * Who is calling (caller-verification.ts). Only a verified caller's admissions reserve quota or
   * are forwarded; when verification is required, nobody else gets an answer at all.
   */
  callers: Pick<CallerVerifier, 'required' | 'identify'>;
}

function objectName(request: AdmissionRequest): string {
  const name = request.name ?? request.object?.metadata.name;
  const generated = request.object?.metadata.generateName;
  const shown =
    typeof name === 'string' && name !== '' ? name : typeof generated === 'string' ? `${generated}*` : '';
  return truncate(request.namespace ? `${request.namespace}/${shown}` : shown, MAX_LOG_FIELD_CHARS);
}

/** A rule's audit as the log line shows it: each value bounded (a list of defaulted fields can be long). */
function boundedAudit(audit: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(audit).map(([key, value]) => [key, truncate(value, MAX_LOG_FIELD_CHARS)]),
  );
}

/** The fields of a decision's log line, each bounded: what was asked, what was answered, how fast. */
export function decisionLogFields(
  entry: WebhookEntry,
  request: AdmissionRequest,
  judgement: EnforcedJudgement,
  seconds: number,
): Record<string, unknown> {
  const { decision, outcome, enforcement } = judgement;
  return {
    webhook: entry.name,
    uid: truncate(request.uid, MAX_LOG_FIELD_CHARS),
    kind: truncate(request.kind.kind, MAX_LOG_FIELD_CHARS),
    object: objectName(request),
    operation: request.operation,
    allowed: decision.allowed,
    outcome,
    ...(enforcement === 'deny' ? {} : { enforcement }),
    ...(judgement.wouldChange ? { wouldChange: judgement.wouldChange } : {}),
    ms: Math.round(seconds * 1e6) / 1e3,
    ...(decision.allowed ? {} : { message: truncate(decision.message, MAX_LOG_FIELD_CHARS) }),
    ...(judgement.wouldRefuse ? { message: truncate(judgement.wouldRefuse, MAX_LOG_FIELD_CHARS) } : {}),
    ...(decision.audit ? { audit: boundedAudit(decision.audit) } : {}),
  };
}

/** Counts a decision, its time and its rule's outcome in the metrics. */
export function recordDecision(
  metrics: AdmissionMetrics,
  entry: WebhookEntry,
  { decision, outcome, enforcement }: EnforcedJudgement,
  seconds: number,
): void {
  metrics.requestDuration.observe({ webhook: entry.name }, seconds);
  metrics.decisions.inc({ webhook: entry.name, outcome, enforcement });
  if (decision.audit) {
    const { action = '', reason = '', tier = '', class: gpuClass = '' } = decision.audit;
    metrics.ruleOutcomes.inc({ webhook: entry.name, action, reason, tier, class: gpuClass });
  }
}

/** Why a review's object is not read, in the words of the answer. */
const UNREAD: Record<'depth' | 'members', string> = {
  depth: `the object under review is nested deeper than ${MAX_OBJECT_DEPTH} levels; no rule was run`,
  members: `the object under review has a map or list of more than ${MAX_OBJECT_MEMBERS} entries; no rule was run`,
};

/** The review in the body, with every part beyond the shape bounds already cut off. */
export function readReview(raw: Buffer): { request: AdmissionRequest; unread?: string } {
  const { body, exceeded } = pruneJson(raw, {
    maxDepth: MAX_OBJECT_DEPTH + ENVELOPE_DEPTH,
    maxMembers: MAX_OBJECT_MEMBERS,
  });
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch (error) {
    const reason = truncate((error as Error).message, MAX_LOG_FIELD_CHARS);
    throw new BadReviewError(400, `the body is not valid JSON: ${reason}`);
  }
  const request = parseAdmissionReview(parsed);
  return exceeded ? { request, unread: UNREAD[exceeded] } : { request };
}

/** Whether the leader's answer (an AdmissionReview, checked by the forwarder) admits. */
function allowedIn(answer: Buffer): boolean {
  return (JSON.parse(answer.toString('utf8')) as { response: { allowed: boolean } }).response.allowed;
}

export function createAdmissionApp(options: AdmissionAppOptions): Koa {
  const { metrics, logger } = options;
  const bodyBudget = options.bodyBudget ?? new BodyBudget();
  const app = new Koa();
  // Koa would otherwise print every thrown error to stderr; ours are answered and logged once.
  app.silent = true;

  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      // Nobody is left to answer; watchForAbandonedCall counts and logs it.
      if (error instanceof BodyAbortedError) {
        ctx.respond = false;
        return;
      }
      const status = error instanceof BadReviewError ? error.status : 500;
      const message = truncate(error instanceof Error ? error.message : String(error), MAX_LOG_FIELD_CHARS);
      if (status >= 500 && status !== 503) logger.error({ err: error, path: ctx.path }, 'request failed');
      metrics.badRequests.inc({ status: String(status) });
      const body = { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: status, message };
      if (!ctx.req.complete) {
        // Refused before its body arrived (too large, or not a review at all): see answer-before-body.ts.
        ctx.respond = false;
        answerBeforeBody(ctx.req, ctx.res, status, JSON.stringify(body));
        return;
      }
      ctx.status = status;
      ctx.type = 'application/json';
      ctx.body = body;
    }
  });

  app.use(async (ctx, next) => {
    switch (ctx.path) {
      case '/healthz':
        ctx.body = 'ok';
        return;
      case '/readyz': {
        const report = await options.readiness();
        ctx.status = report.ready ? 200 : 503;
        ctx.body = report;
        return;
      }
      default:
        await next();
    }
  });

  // Who is calling, before anything of the request is read: an unverified caller's body is never parsed.
  app.use(callerGate(options.callers, metrics, logger));

  const judgeOf =
    (entry: WebhookEntry, request: AdmissionRequest, unread: string | undefined) => (): EnforcedJudgement =>
      enforceAll(
        entry,
        unread
          ? unreadable(entry, unread, metrics)
          : decide(entry, request, options.state(), logger, metrics),
        options.enforcement?.() ?? DENY_ALL,
      );
  // Only an admission that takes quota is recorded in the ledger (a dry run leaves no pod behind),
  // and only the verified API server's (or a replica's forward of it): a forged review must not
  // hold a tenant's quota.
  const reserves = (caller: Caller, request: AdmissionRequest, { decision }: EnforcedJudgement): boolean =>
    caller.verified && decision.allowed && decision.reserve !== undefined && !request.dryRun;
  /** Reserves, counts and logs a judgement made here; the answer to send. */
  const answerHere = (
    entry: WebhookEntry,
    request: AdmissionRequest,
    judgement: EnforcedJudgement,
    caller: Caller,
    started: bigint,
  ): string => {
    const { decision } = judgement;
    // Same tick as the rule: no other request can run between the decision and its reservation.
    if (reserves(caller, request, judgement) && decision.reserve) {
      options.reserve?.(decision.reserve);
      options.journal?.append(decision.reserve);
    }
    const review = admissionResponse(request, decision, judgement.patch);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    recordDecision(metrics, entry, judgement, seconds);
    logger.info(decisionLogFields(entry, request, judgement, seconds), 'admission decision');
    return serializeReview(review);
  };

  // The leader's side of the forward (quota-forwarder.ts): a batch of reviews, decided in one pass.
  app.use(async (ctx, next) => {
    if (ctx.path !== FORWARD_BATCH_PATH) {
      await next();
      return;
    }
    const caller = ctx.state.caller as Caller;
    if (!caller.verified || caller.as !== 'replica') {
      throw new BadReviewError(403, 'only another replica of the operator forwards quota admissions');
    }
    if (ctx.method !== 'POST') {
      ctx.set('Allow', 'POST');
      throw new BadReviewError(405, `${ctx.method} is not allowed: forwarded batches are POSTed`);
    }
    const handoverTo = ctx.get(HANDOVER_HEADER);
    if (handoverTo !== '' && (handoverTo.length > 300 || !splitHostPort(handoverTo))) {
      throw new BadReviewError(400, `${HANDOVER_HEADER} must be the new leader's host:port`);
    }
    const items = decodeBatch(await readBody(ctx.req, ctx.res, MAX_BATCH_BYTES, bodyBudget));
    const webhooks = options.webhooks();
    // Once the ledger is handed over, nothing is decided here: null, with the successor named, sends
    // the sender there (or, with none known, lets it decide).
    const decides = options.authority?.decidesForwarded() ?? true;
    const successor = decides ? undefined : options.authority?.successorAddress();
    // No await in the pass: the batch is decided as if its reviews had come one after another,
    // each reservation made before the next review is judged.
    const answers = items.map(({ path, body }) => {
      if (!decides) return 'null';
      const entry = webhooks.find((candidate) => candidate.path === path);
      if (!entry) return 'null';
      const started = process.hrtime.bigint();
      let read: ReturnType<typeof readReview>;
      try {
        read = readReview(body);
      } catch (error) {
        // The follower read it as a review; answering null lets it decide that one itself.
        if (error instanceof BadReviewError) return 'null';
        throw error;
      }
      const { request, unread } = read;
      return answerHere(entry, request, judgeOf(entry, request, unread)(), caller, started);
    });
    metrics.quotaForwardBatches.observe({ side: 'decided' }, items.length);
    // Same pass as the decisions and the journal page: the successor gets every admission made here.
    if (handoverTo !== '' && options.authority) {
      options.authority.handOverTo(handoverTo);
      logger.info({ successor: handoverTo }, 'handed quota decisions over to the new leader');
    }
    const [journalId, position] = ctx.get(JOURNAL_HEADER).split(':');
    const journal = options.journal ? pageJson(options.journal.since(journalId, Number(position))) : 'null';
    ctx.type = 'application/json';
    ctx.body =
      `{"answers":[${answers.join(',')}],"journal":${journal}` +
      (successor ? `,"successor":${JSON.stringify(successor)}}` : '}');
  });

  app.use(async (ctx) => {
    const caller = ctx.state.caller as Caller;
    const entry = options.webhooks().find((candidate) => candidate.path === ctx.path);
    if (!entry) throw new BadReviewError(404, `no webhook is served at ${truncate(ctx.path, 128)}`);
    // The review, once read: a call abandoned after that is logged with its uid and object.
    const read: { request?: AdmissionRequest } = {};
    watchForAbandonedCall(ctx.req, ctx.res, entry.name, metrics, logger, () =>
      read.request
        ? { uid: truncate(read.request.uid, MAX_LOG_FIELD_CHARS), object: objectName(read.request) }
        : {},
    );
    if (ctx.method !== 'POST') {
      ctx.set('Allow', 'POST');
      throw new BadReviewError(405, `${ctx.method} is not allowed: admission reviews are POSTed`);
    }
    const contentType = ctx.get('Content-Type');
    if (!/^application\/json\s*(;|$)/i.test(contentType)) {
      throw new BadReviewError(
        415,
        `Content-Type must be application/json, got ${JSON.stringify(truncate(contentType, 64))}`,
      );
    }
    const raw = await readBody(ctx.req, ctx.res, MAX_BODY_BYTES, bodyBudget);
    // The handler time starts once the body is in: a slow sender is not our slowness.
    const started = process.hrtime.bigint();
    const { request, unread } = readReview(raw);
    read.request = request;
    const judge = judgeOf(entry, request, unread);
    let judgement = judge();
    if (reserves(caller, request, judgement) && caller.verified && caller.as === 'api-server') {
      const forwarded = options.forward?.(entry.path, raw, request.uid);
      if (forwarded) {
        const answer = await forwarded;
        if (answer) {
          // The leader reserved it; this replica's ledger holds it too, so that if it must decide
          // alone later (the leader lost), it still counts what it handed over.
          const { reserve } = judgement.decision;
          if (reserve && allowedIn(answer)) options.reserve?.(reserve);
          // The leader counted and logged this decision; counting it here too would count it twice.
          logger.debug(
            {
              webhook: entry.name,
              uid: truncate(request.uid, MAX_LOG_FIELD_CHARS),
              object: objectName(request),
            },
            'decided by the leader',
          );
          ctx.type = 'application/json';
          ctx.body = answer;
          return;
        }
        // Decided here after all, in the same tick as the reservation: the state moved meanwhile.
        judgement = judge();
      }
    }
    ctx.type = 'application/json';
    ctx.body = answerHere(entry, request, judgement, caller, started);
  });

  return app;
}
