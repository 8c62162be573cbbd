/**
 * What judging one review counts (decide() and unreadable()): the one place the rules' path
 * writes a metric. The admission server counts it into its registry; `admit`, `audit` and the
 * periodic audit judge through the same code with NO_DECISION_METRICS, so a simulated refusal
 * never shows as the server's fail-open.
 */

/** Why a mutating failurePolicy=Ignore webhook let an object through unchanged. */
export type FailOpenCause = 'refusal' | 'exception' | 'unreadable-object';

export interface DecisionMetrics {
  failedOpen(webhook: string, cause: FailOpenCause): void;
}

export const NO_DECISION_METRICS: DecisionMetrics = { failedOpen: () => {} };
