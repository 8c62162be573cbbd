/**
 * The admission app's door: identifies every caller of a webhook path (caller-verification.ts)
 * before its body is read, and answers one that is not verified with 401, 403 or 503 and nothing
 * else when verification is required (always, for a forged forward). A verified or tolerated
 * caller goes on with `ctx.state.caller` set, which decides whether its admission may reserve quota.
 */
import type { TLSSocket } from 'node:tls';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { BadReviewError } from '../admission/review.js';
import type { AdmissionMetrics } from '../metrics/admission-metrics.js';
import { refusalStatus, type CallerVerifier } from './caller-verification.js';
import { FORWARDED_HEADER } from './quota-forwarder.js';

/** All an unverified caller learns: no decision, no message of a rule. */
const UNVERIFIED_ANSWER: Record<401 | 403 | 503, string> = {
  401: 'the admission server answers only the API server, verified by its client certificate or token',
  403: 'the admission server answers only the API server: these credentials are not its',
  503: 'the admission server cannot verify the caller right now',
};
/** Refusals are logged at most this often, with their count since the last line. */
const LOG_INTERVAL_MS = 10_000;

export function callerGate(
  callers: Pick<CallerVerifier, 'required' | 'identify'>,
  metrics: AdmissionMetrics,
  logger: Logger,
): Middleware {
  let refusedSinceLog = 0;
  let lastLog = -Infinity;
  return async (ctx, next) => {
    const authorization = ctx.get('Authorization');
    const caller = await callers.identify(
      ctx.req.socket as TLSSocket,
      authorization === '' ? undefined : authorization,
      ctx.get(FORWARDED_HEADER) !== '',
    );
    if (!caller.verified) {
      const refused = callers.required || caller.reason === 'forward-without-replica-certificate';
      metrics.unverifiedCallers.inc({ reason: caller.reason, result: refused ? 'refused' : 'unreserved' });
      if (refused) {
        refusedSinceLog += 1;
        const now = performance.now();
        if (now - lastLog >= LOG_INTERVAL_MS) {
          // Info, not warn: anyone can send these, so they say nothing of the server's health; the
          // metric says how many there are.
          logger.info(
            { reason: caller.reason, refused: refusedSinceLog, remoteAddress: ctx.req.socket.remoteAddress },
            'refused a caller that is not the verified API server',
          );
          lastLog = now;
          refusedSinceLog = 0;
        }
        const status = refusalStatus(caller.reason);
        throw new BadReviewError(status, UNVERIFIED_ANSWER[status]);
      }
    }
    ctx.state.caller = caller;
    await next();
  };
}
