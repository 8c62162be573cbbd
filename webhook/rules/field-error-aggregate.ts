import { allow, badRequest } from '../admission/decisions.js';
import type { Decision } from '../admission/types.js';
import type { FieldError, Findings } from './field-errors.js';

/** apimachinery's utilerrors aggregate: one error alone, several as `[e1, e2]`, exact duplicates dropped. */
export function aggregate(errors: readonly FieldError[]): string {
  const unique = [...new Set(errors.map((error) => error.toString()))];
  return unique.length === 1 ? (unique[0] ?? '') : `[${unique.join(', ')}]`;
}

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

/**
 * The answer to what the checks found: errors refuse the request with code 400 and their
 * aggregate (Koordinator's `admission.Errored(400, err)`), else it is allowed with the warnings.
 */
export function decisionOf(
  found: Findings,
  render: (errors: readonly FieldError[]) => string = aggregate,
): Decision {
  const warnings = found.warnings.length > 0 ? [...found.warnings] : undefined;
  return found.errors.length > 0 ? badRequest(render(found.errors), warnings) : allow(warnings);
}
