/**
 * A mutating step that could not do its job on this object: it changed nothing, and says why.
 * A mutating webhook never refuses over its own step (refusing is the validating webhook's), so
 * the object goes through with `warning`, and `reason` labels admission_rule_outcomes_total.
 */
export interface StepSkip {
  /** Names the field and what was not done. */
  warning: string;
  reason: 'invalid-quantity' | 'invalid-annotation';
}

/** The decision's audit when steps were skipped: `action` skipped unless `action` says otherwise. */
export function skipAudit(skips: readonly StepSkip[], action = 'skipped'): Record<string, string> {
  return { action, reason: skips[0]?.reason ?? '' };
}
