/**
 * How Kthena's webhooks word a refusal, kept word for word so users migrating from Kthena read
 * the same text: `validation failed:` and one `  - <field error>` line per error, no trailing
 * newline. Each is the `render` a Kthena webhook passes to `decisionOf`.
 *
 * Kthena's refusal carries no status code, which the API server turns into 400; `decisionOf`'s
 * default gives the same code (the reason, empty from Kthena, becomes BadRequest).
 */
import { headed } from '../shared/findings.js';

/** The refusal of an object that decoded but breaks Kthena's rules. */
export const validationFailed = headed('validation failed');

/**
 * Where Kthena answers a plain-text HTTP 400 ("failed to decode object: <Go error>"), which the
 * API server reports as a failed webhook call, this is a denial naming every malformed field.
 */
export const decodeFailed = headed('failed to decode object');
