/**
 * The Koa application: one POST route per enabled webhook (from the table), plus /healthz,
 * /readyz and /metrics. Transport (TLS, certificate reloads) lives in https-server.ts.
 */
import type { IncomingMessage } from 'node:http';
import Koa from 'koa';
import type { Logger } from 'pino';
import { parseAdmissionReview, BadReviewError } from '../admission/review.js';
import { admissionResponse } from '../admission/response.js';
import type { AdmissionRequest, AdmissionReviewResponse, Decision } from '../admission/types.js';
import type { StateSnapshot } from '../state.js';
import type { WebhookEntry } from '../table.js';
import type { DecisionOutcome, OperatorMetrics } from './metrics.js';

/** The API server sends at most 3 MiB (object and oldObject together). */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, { ok: boolean; message: string }>;
}

export interface AdmissionAppOptions {
  /** Enabled webhooks; read on every request so a gate change needs no new app. */
  webhooks: () => readonly WebhookEntry[];
  state: () => StateSnapshot;
  readiness: () => Promise<ReadinessReport>;
  metrics: OperatorMetrics;
  logger: Logger;
  /** Read-only views of what the rules see, served as JSON by GET (e.g. /elasticQuota). */
  debug?: Readonly<Record<string, () => unknown>>;
  /** Records a decision's quota reservation (see Decision.reserve). */
  reserve?: (reservation: NonNullable<Decision['reserve']>) => void;
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    return Promise.reject(
      new BadReviewError(413, `request body of ${declared} bytes exceeds the ${limit}-byte limit`),
    );
  }
  return new Promise((resolvePromise, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new BadReviewError(413, `request body exceeds the ${limit}-byte limit`));
        req.pause();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      resolvePromise(Buffer.concat(chunks));
    });
    req.on('error', reject);
  });
}

function outcomeOf(decision: Decision, response: AdmissionReviewResponse, failed: boolean): DecisionOutcome {
  if (failed) return 'error';
  if (!decision.allowed) return 'denied';
  return response.response.patch ? 'patched' : 'allowed';
}

/** A rule that throws must not take the server down or leave the API server waiting. */
function decide(
  entry: WebhookEntry,
  request: AdmissionRequest,
  state: StateSnapshot,
  logger: Logger,
): { decision: Decision; failed: boolean } {
  try {
    return { decision: entry.handler(request, state), failed: false };
  } catch (error) {
    const err = error instanceof Error ? error : new Error(String(error));
    logger.error({ err, webhook: entry.name, uid: request.uid }, 'rule threw an exception');
    const message = `internal error in webhook ${entry.name}: ${err.message}`;
    // A webhook that may fail open says so instead of blocking on its own bug.
    if (entry.failurePolicy === 'Ignore') {
      return {
        decision: { allowed: true, warnings: [`${message}; allowed (failurePolicy Ignore)`] },
        failed: true,
      };
    }
    return { decision: { allowed: false, code: 500, reason: 'InternalError', message }, failed: true };
  }
}

function objectName(request: AdmissionRequest): string {
  const name = request.name ?? (request.object?.metadata.name as string | undefined) ?? '';
  const generated = request.object?.metadata.generateName as string | undefined;
  const shown = name || (generated ? `${generated}*` : '');
  return request.namespace ? `${request.namespace}/${shown}` : shown;
}

export function createAdmissionApp(options: AdmissionAppOptions): Koa {
  const { metrics, logger } = options;
  const app = new Koa();
  // Koa would otherwise print every thrown error to stderr; ours are answered and logged once.
  app.silent = true;

  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const status = error instanceof BadReviewError ? error.status : 500;
      const message = error instanceof Error ? error.message : String(error);
      if (status >= 500) logger.error({ err: error, path: ctx.path }, 'request failed');
      metrics.badRequests.inc({ status: String(status) });
      ctx.status = status;
      ctx.type = 'application/json';
      ctx.body = { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: status, message };
      if (status === 413) ctx.set('Connection', 'close');
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
      case '/metrics':
        ctx.type = options.metrics.registry.contentType;
        ctx.body = await options.metrics.registry.metrics();
        return;
      default: {
        const view = options.debug?.[ctx.path];
        if (view && ctx.method === 'GET') {
          ctx.type = 'application/json';
          ctx.body = JSON.stringify(view(), (_key, value: unknown) =>
            typeof value === 'bigint' ? value.toString() : value,
          );
          return;
        }
        await next();
      }
    }
  });

  app.use(async (ctx) => {
    const entry = options.webhooks().find((candidate) => candidate.path === ctx.path);
    if (!entry) throw new BadReviewError(404, `no webhook is served at ${ctx.path}`);
    if (ctx.method !== 'POST') {
      ctx.set('Allow', 'POST');
      throw new BadReviewError(405, `${ctx.method} is not allowed: admission reviews are POSTed`);
    }
    const contentType = ctx.get('Content-Type');
    if (!/^application\/json\s*(;|$)/i.test(contentType)) {
      throw new BadReviewError(
        415,
        `Content-Type must be application/json, got ${JSON.stringify(contentType)}`,
      );
    }
    const started = process.hrtime.bigint();
    const raw = await readBody(ctx.req, MAX_BODY_BYTES);
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch (error) {
      throw new BadReviewError(400, `the body is not valid JSON: ${(error as Error).message}`);
    }
    const request = parseAdmissionReview(body);
    const { decision, failed } = decide(entry, request, options.state(), logger);
    // Same tick as the rule: no other request can run between the decision and its reservation.
    if (decision.allowed && decision.reserve && !request.dryRun) options.reserve?.(decision.reserve);
    const review = admissionResponse(request, decision);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const outcome = outcomeOf(decision, review, failed);
    metrics.requestDuration.observe({ webhook: entry.name }, seconds);
    metrics.decisions.inc({ webhook: entry.name, outcome });
    if (decision.audit) {
      const { action = '', reason = '', tier = '', class: gpuClass = '' } = decision.audit;
      metrics.ruleOutcomes.inc({ webhook: entry.name, action, reason, tier, class: gpuClass });
    }
    logger.info(
      {
        webhook: entry.name,
        uid: request.uid,
        kind: request.kind.kind,
        object: objectName(request),
        operation: request.operation,
        allowed: decision.allowed,
        outcome,
        ms: Math.round(seconds * 1e6) / 1e3,
        ...(decision.allowed ? {} : { message: decision.message }),
        ...(decision.audit ? { audit: decision.audit } : {}),
      },
      'admission decision',
    );
    ctx.type = 'application/json';
    ctx.body = review;
  });

  return app;
}
