/**
 * Softens a webhook's judgement to its enforcement (see enforcement.ts): first the refusal of a
 * step enforced apart from the webhook (`validate-pod/colocation`), then the webhook's own
 * action. It runs after the failure-policy handling in server/decide.ts, so a webhook in `warn`
 * or `dryrun` never stands in an object's way, whatever went wrong, and the outcome still says
 * what would have happened under `deny`.
 */
import { allow } from '../admission/decisions.js';
import type { JsonPatch } from '../admission/response.js';
import type { Decision } from '../admission/types.js';
import { shortName, type WebhookEntry } from '../table.js';
import type { Judgement } from '../server/decide.js';
import { actionFor, stepActionFor, type Enforcement, type EnforcementAction } from './enforcement.js';

/** How many changed paths a dry-run log line lists. */
const MAX_CHANGED_PATHS = 20;

export interface EnforcedJudgement extends Judgement {
  patch?: JsonPatch;
  enforcement: EnforcementAction;
  /** warn, dryrun: the refusal that was not made, for the log line. */
  wouldRefuse?: string;
  /** dryrun: the JSON pointers the patch that was not returned would have changed (at most 20). */
  wouldChange?: string[];
  /** The step (`<webhook>/<step>`) whose refusal its own enforcement set aside, and that action. */
  step?: SoftenedStep;
}

export interface SoftenedStep {
  name: string;
  action: Exclude<EnforcementAction, 'deny'>;
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

/**
 * Sets aside the refusals of steps whose enforcement is warn or dryrun (`Decision.step`): the
 * webhook then answers what its later steps decide, with, under warn, the step's refusal as a
 * warning. A step in deny (the default) leaves the judgement as it is.
 */
export function enforceSteps(
  entry: WebhookEntry,
  judgement: Judgement & { patch?: JsonPatch },
  enforcement: Enforcement,
): Judgement & { patch?: JsonPatch; wouldRefuse?: string; step?: SoftenedStep } {
  let decision = judgement.decision;
  let wouldRefuse: string | undefined;
  let step: SoftenedStep | undefined;
  const warnings: string[] = [];
  while (!decision.allowed && decision.step) {
    const name = `${shortName(entry.name)}/${decision.step.name}`;
    const action = stepActionFor(enforcement, name);
    if (action === 'deny') break;
    wouldRefuse ??= decision.message;
    step ??= { name, action };
    if (action === 'warn') warnings.push(`${name} would refuse this (enforcement warn): ${decision.message}`);
    decision = decision.step.otherwise;
  }
  if (wouldRefuse === undefined || step === undefined) return judgement;
  const merged = [...warnings, ...(decision.warnings ?? [])];
  const softened: Decision = withAudit(
    merged.length > 0 ? { ...decision, warnings: merged } : decision,
    judgement.decision,
  );
  return {
    decision: softened,
    outcome: softened.allowed ? 'would-deny' : 'denied',
    wouldRefuse,
    step,
  };
}

/** The judgement as the webhook's enforcement has it answered: its steps', then its own. */
export function enforceAll(
  entry: WebhookEntry,
  judgement: Judgement & { patch?: JsonPatch },
  enforcement: Enforcement,
): EnforcedJudgement {
  const { step, wouldRefuse, ...stepped } = enforceSteps(entry, judgement, enforcement);
  const enforced = enforce(entry, stepped, actionFor(enforcement, shortName(entry.name)));
  if (!step) return enforced;
  // The webhook's own action speaks first: its refusal, or what it set aside, is the one reported.
  return { ...enforced, step, wouldRefuse: enforced.wouldRefuse ?? wouldRefuse };
}
