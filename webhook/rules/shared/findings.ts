/**
 * How a check reports (`Findings`) and how a webhook answers with what its checks found
 * (`decisionOf`), shared by every rule family.
 */
import { allow, deny } from '../../admission/decisions.js';
import type { Decision } from '../../admission/types.js';
import type { FieldError } from './field-errors.js';

/**
 * What a check reports: the errors that refuse the object (none: the check passed) and the
 * warnings that go with whatever is decided. Every check of every webhook reports this way; the
 * webhook runs its checks in order and answers with `decisionOf`.
 */
export interface Findings {
  readonly errors: readonly FieldError[];
  readonly warnings: readonly string[];
}

export const PASSED: Findings = { errors: [], warnings: [] };

export const findings = (errors: readonly FieldError[], warnings: readonly string[] = []): Findings => ({
  errors,
  warnings,
});

export const warnings = (...texts: string[]): Findings => ({ errors: [], warnings: texts });

/** apimachinery's utilerrors aggregate: one error alone, several as `[e1, e2]`, exact duplicates dropped. */
export function aggregate(errors: readonly FieldError[]): string {
  const unique = [...new Set(errors.map((error) => error.toString()))];
  return unique.length === 1 ? (unique[0] ?? '') : `[${unique.join(', ')}]`;
}

/**
 * A heading, then one `  - <error>` line per error (no trailing newline): Kthena's
 * `validation failed:` refusals, and the refusals of a ConfigMap, which name it in the heading.
 */
export const headed =
  (heading: string) =>
  (errors: readonly FieldError[]): string =>
    `${heading}:\n${errors.map((error) => `  - ${error.toString()}`).join('\n')}`;

/**
 * Runs checks in order and stops at the first that finds errors, as Koordinator's handlers stop
 * at the first failing step; the warnings of every check that ran are kept.
 */
export function firstRefusal(checks: Iterable<() => Findings>): Findings {
  const warnings: string[] = [];
  for (const check of checks) {
    const found = check();
    warnings.push(...found.warnings);
    if (found.errors.length > 0) return { errors: found.errors, warnings };
  }
  return { errors: [], warnings };
}

/** The HTTP code and reason a refusal is answered with. */
export interface RefusalStatus {
  readonly code: number;
  readonly reason: string;
}

/** What every upstream webhook answers an invalid object with (`admission.Errored(400, err)`). */
const BAD_REQUEST: RefusalStatus = { code: 400, reason: 'BadRequest' };

/**
 * The API server's own answer to an invalid object, which the operator's own ConfigMaps
 * (gpu-tier-mapping, the operator's configuration) have answered with from the start.
 */
export const INVALID: RefusalStatus = { code: 422, reason: 'Invalid' };

/**
 * The answer to what the checks found: errors refuse the request with `status` (400 unless said)
 * and their rendering (apimachinery's aggregate unless said), else it is allowed with the warnings.
 */
export function decisionOf(
  found: Findings,
  render: (errors: readonly FieldError[]) => string = aggregate,
  status: RefusalStatus = BAD_REQUEST,
): Decision {
  const warnings = found.warnings.length > 0 ? [...found.warnings] : undefined;
  return found.errors.length > 0
    ? deny(render(found.errors), status.code, status.reason, warnings)
    : allow(warnings);
}

/**
 * A webhook's answer when one of its steps can be enforced apart from the webhook
 * (`<webhook>/<step>`): the step's refusal, carrying `otherwise`, what the checks after it decide
 * with the step's refusal set aside (it keeps the step's warnings). The enforcement layer picks
 * one (webhook/enforcement/apply-enforcement.ts); the rule stays a pure function of its input.
 */
export function stepRefusal(step: string, refusal: Decision, otherwise: Decision): Decision {
  return refusal.allowed ? refusal : { ...refusal, step: { name: step, otherwise } };
}
