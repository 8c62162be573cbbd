import type { FieldError } from './field-errors.js';

/** apimachinery's utilerrors aggregate: one error alone, several as `[e1, e2]`, exact duplicates dropped. */
export function aggregate(errors: readonly FieldError[]): string {
  const unique = [...new Set(errors.map((error) => error.toString()))];
  return unique.length === 1 ? (unique[0] ?? '') : `[${unique.join(', ')}]`;
}
