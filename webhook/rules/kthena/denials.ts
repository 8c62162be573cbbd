/**
 * How Kthena's webhooks word a refusal, kept word for word so users migrating from Kthena read
 * the same text: `validation failed:` and one `  - <field error>` line per error, no trailing
 * newline.
 */
import { badRequest } from '../../admission/decisions.js';
import type { Decision } from '../../admission/types.js';
import type { FieldError } from '../field-errors.js';

const bulleted = (errors: readonly FieldError[]): string =>
  errors.map((error) => `  - ${error.toString()}`).join('\n');

/*
 * Kthena's refusal carries no status code, which the API server turns into 400; saying so here
 * gives the same code (the reason, empty from Kthena, becomes BadRequest).
 */
export const validationFailed = (errors: readonly FieldError[]): Decision =>
  badRequest(`validation failed:\n${bulleted(errors)}`);

/**
 * Where Kthena answers a plain-text HTTP 400 ("failed to decode object: <Go error>"), which the
 * API server reports as a failed webhook call, this is a denial naming every malformed field.
 */
export const decodeFailed = (errors: readonly FieldError[]): Decision =>
  badRequest(`failed to decode object:\n${bulleted(errors)}`);
