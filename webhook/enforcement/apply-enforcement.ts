/**
 * Softens a webhook's judgement to its enforcement action (see enforcement.ts). It runs after
 * the failure-policy handling in server/decide.ts, so a webhook in `warn` or `dryrun` never
 * stands in an object's way, whatever went wrong, and the outcome still says what would have
 * happened under `deny`.
 */
import { allow } from '../admission/decisions.js';
import type { JsonPatch } from '../admission/response.js';
import type { Decision } from '../admission/types.js';
import { shortName, type WebhookEntry } from '../table.js';
import type { Judgement } from '../server/decide.js';
import type { EnforcementAction } from './enforcement.js';

/** How many changed paths a dry-run log line lists. */
const MAX_CHANGED_PATHS = 20;

export interface EnforcedJudgement extends Judgement {
  patch?: JsonPatch;
  enforcement: EnforcementAction;
  /** warn, dryrun: the refusal that was not made, for the log line. */
  wouldRefuse?: string;
  /** dryrun: the JSON pointers the patch that was not returned would have changed (at most 20). */
  wouldChange?: string[];
}

/** Keeps what the rule did (its audit) for the log line and metrics, whatever the answer. */
const withAudit = (answer: Decision, from: Decision): Decision =>
  from.audit ? { ...answer, audit: from.audit } : answer;

export function enforce(
  entry: WebhookEntry,
  judgement: Judgement & { patch?: JsonPatch },
  action: EnforcementAction,
): EnforcedJudgement {
  const { decision, outcome } = judgement;
  if (action === 'deny') return { ...judgement, enforcement: action };
  if (action === 'warn') {
    if (decision.allowed) return { ...judgement, enforcement: action };
    return {
      decision: withAudit(
        allow([
          ...(decision.warnings ?? []),
          `${shortName(entry.name)} would refuse this (enforcement warn): ${decision.message}`,
        ]),
        decision,
      ),
      outcome: outcome === 'error' ? 'error' : 'would-deny',
      enforcement: action,
      wouldRefuse: decision.message,
    };
  }
  // dryrun: a plain allowed answer, always; what would have happened is only counted and logged.
  const allowed = withAudit(allow(), decision);
  if (!decision.allowed) {
    return {
      decision: allowed,
      outcome: outcome === 'error' ? 'error' : 'would-deny',
      enforcement: action,
      wouldRefuse: decision.message,
    };
  }
  const patch = judgement.patch ?? [];
  if (patch.length === 0) return { decision: allowed, outcome, enforcement: action };
  return {
    decision: allowed,
    outcome: 'would-patch',
    enforcement: action,
    wouldChange: patch.slice(0, MAX_CHANGED_PATHS).map((operation) => `${operation.op} ${operation.path}`),
  };
}
