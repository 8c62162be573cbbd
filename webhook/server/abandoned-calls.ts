/**
 * Calls that end before our answer is written. Nothing failed on our side, so they are neither
 * errors nor 5xx: each is counted in admission_requests_aborted_total{webhook,stage} and logged
 * without a stack, by the stage it ended in:
 *   body    the connection ended while the review was being read: the caller hung up (or
 *           stalled past the request time-out);
 *   answer  the review was read, but the connection closed before the answer was written: the
 *           API server gave up waiting (its webhook timeout) and applied the failure policy.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { AdmissionMetrics } from '../metrics/admission-metrics.js';

export type AbortStage = 'body' | 'answer';

/**
 * Watches one call on a webhook path until its response closes. `describe` adds what is known
 * of the review by then (its uid and object, once read); its fields must already be bounded.
 */
export function watchForAbandonedCall(
  req: IncomingMessage,
  res: ServerResponse,
  webhook: string,
  metrics: AdmissionMetrics,
  logger: Logger,
  describe: () => Record<string, unknown>,
): void {
  const started = process.hrtime.bigint();
  res.once('close', () => {
    // Headers go out with the answer's first bytes: once sent, the call was answered.
    if (res.headersSent) return;
    const stage: AbortStage = req.complete ? 'answer' : 'body';
    metrics.requestsAborted.inc({ webhook, stage });
    const ms = Math.round(Number(process.hrtime.bigint() - started) / 1e3) / 1e3;
    const fields = { webhook, stage, ms, ...describe() };
    if (stage === 'answer') logger.info(fields, 'the connection closed before the answer was written');
    else logger.debug(fields, 'the connection closed while the review was being read');
  });
}
