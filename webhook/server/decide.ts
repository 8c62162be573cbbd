/**
 * Runs one webhook's rule on one review and turns every way it can go wrong into the answer the
 * webhook's failure policy calls for. A mutating webhook with failurePolicy Ignore promises the
 * cluster that it never stands in an object's way, so whatever stops it from doing its job (a
 * refusal, an exception, an object it cannot read, a patch it cannot build) lets the object
 * through unchanged with a warning; any other webhook refuses what it cannot judge.
 */
import type { Logger } from 'pino';
import { allow, badRequest, deny, warn } from '../admission/decisions.js';
import { jsonPatch, type JsonPatch } from '../admission/response.js';
import type { AdmissionRequest, Decision } from '../admission/types.js';
import type { StateSnapshot } from '../state.js';
import type { WebhookEntry } from '../table.js';
import { MAX_LOG_FIELD_CHARS, truncate } from '../util/bounded-text.js';
import type { DecisionOutcome } from '../metrics/admission-metrics.js';
import type { DecisionMetrics, FailOpenCause } from '../metrics/decision-metrics.js';

export interface Judgement {
  decision: Decision;
  outcome: DecisionOutcome;
}

/** A mutating webhook that the API server would skip if it failed. */
function failsOpen(entry: WebhookEntry): boolean {
  return entry.type === 'mutating' && entry.failurePolicy === 'Ignore';
}

function passUnchanged(
  entry: WebhookEntry,
  cause: FailOpenCause,
  message: string,
  metrics: DecisionMetrics,
  warnings: readonly string[] = [],
): Judgement {
  metrics.failedOpen(entry.name, cause);
  return {
    decision: allow([...warnings, `${entry.name} left the object unchanged: ${message}`]),
    outcome: cause === 'exception' ? 'error' : 'allowed',
  };
}

/**
 * The answer for a review whose object the server would not read (too deep, too wide): refused
 * under failurePolicy Fail; under Ignore allowed with a warning, as the API server would have done
 * had we not answered.
 */
export function unreadable(entry: WebhookEntry, message: string, metrics: DecisionMetrics): Judgement {
  if (failsOpen(entry)) return passUnchanged(entry, 'unreadable-object', message, metrics);
  if (entry.failurePolicy === 'Ignore') {
    return {
      decision: warn(`${message}; allowed (failurePolicy Ignore)`),
      outcome: 'allowed',
    };
  }
  return {
    decision: badRequest(message),
    outcome: 'denied',
  };
}

function internalError(
  entry: WebhookEntry,
  request: AdmissionRequest,
  error: unknown,
  logger: Logger,
  metrics: DecisionMetrics,
): Judgement {
  const err = error instanceof Error ? error : new Error(String(error));
  logger.error({ err, webhook: entry.name, uid: request.uid }, 'rule threw an exception');
  const message = `internal error in webhook ${entry.name}: ${truncate(err.message, MAX_LOG_FIELD_CHARS)}`;
  if (failsOpen(entry)) return passUnchanged(entry, 'exception', message, metrics);
  // A validating webhook that may fail open says so instead of blocking on its own bug.
  if (entry.failurePolicy === 'Ignore') {
    return {
      decision: warn(`${message}; allowed (failurePolicy Ignore)`),
      outcome: 'error',
    };
  }
  return {
    decision: deny(message, 500, 'InternalError'),
    outcome: 'error',
  };
}

/**
 * The rule's decision, with the patch it implies already checked: the patch is built here, inside
 * the recovery, so a failure to build it is handled like any other failure of the rule.
 */
export function decide(
  entry: WebhookEntry,
  request: AdmissionRequest,
  state: StateSnapshot,
  logger: Logger,
  metrics: DecisionMetrics,
): Judgement & { patch?: JsonPatch } {
  try {
    const decision = entry.handler(request, state);
    if (!decision.allowed) {
      if (failsOpen(entry)) {
        return passUnchanged(entry, 'refusal', decision.message, metrics, decision.warnings);
      }
      return { decision, outcome: 'denied' };
    }
    if (!decision.mutated || !request.object) return { decision, outcome: 'allowed' };
    const patch = jsonPatch(request.object, decision.mutated);
    return { decision, outcome: patch.length > 0 ? 'patched' : 'allowed', patch };
  } catch (error) {
    return internalError(entry, request, error, logger, metrics);
  }
}
