/**
 * How Kthena's webhooks word a refusal, kept word for word so users migrating from Kthena read
 * the same text: `validation failed:` and one `  - <field error>` line per error, no trailing
 * newline. Each is the `render` a Kthena webhook passes to `decisionOf`.
 *
 * Kthena's refusal carries no status code, which the API server turns into 400; `decisionOf`'s
 * default gives the same code (the reason, empty from Kthena, becomes BadRequest).
 */
import type { FieldError } from '../shared/field-errors.js';
import { headed } from '../shared/findings.js';

/** The refusal of an object that decoded but breaks Kthena's rules. */
export const validationFailed = headed('validation failed');

/**
 * Where Kthena answers a plain-text HTTP 400 ("failed to decode object: <Go error>"), which the
 * API server reports as a failed webhook call, this is a denial naming every malformed field.
 */
export const decodeFailed = headed('failed to decode object');

/**
 * Kthena v1.0.0's own decode refusals name the kind (`failed to decode modelServing: <Go error>`
 * from the ModelServing webhook, `modelRoute` and `modelServer` from the router's); the booster's
 * and the autoscaler's say `object`, as above.
 */
export const decodeFailedAs = (kind: 'modelServing' | 'modelRoute' | 'modelServer') =>
  headed(`failed to decode ${kind}`);

/**
 * The router's ModelRoute refusal joins its `  - <error>` lines with nothing between them, after
 * `validation failed: ` (its `strings.Join(messages, "")`).
 */
export const routeValidationFailed = (errors: readonly FieldError[]): string =>
  `validation failed: ${errors.map((error) => `  - ${error.toString()}`).join('')}`;
