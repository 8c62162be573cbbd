/**
 * Turns a rule's decision into the AdmissionReview response the API server reads. Messages and
 * warnings are bounded here, once for every rule, because they may quote what a user sent.
 */
import { MAX_MESSAGE_CHARS, MAX_WARNING_CHARS, MAX_WARNINGS, truncate } from '../util/bounded-text.js';
import { diffJson, type PatchOperation } from './json-diff.js';
import type { AdmissionRequest, AdmissionReviewResponse, Decision, KubeObject } from './types.js';

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  422: 'Invalid',
  500: 'InternalError',
};

export type JsonPatch = PatchOperation[];

/** The RFC 6902 operations that turn `original` into `mutated`. */
export function jsonPatch(original: KubeObject, mutated: KubeObject): JsonPatch {
  return diffJson(original, mutated);
}

/**
 * A control character with the blanks after it (a newline and the indent of the next line of a
 * multi-line message, a tab).
 */
const CONTROL_RUN = /\p{Cc}+[ ]*/gu;

/**
 * A warning as the API server passes it on. It silently drops a warning holding any control
 * character (Go's unicode.IsControl: C0, DEL, C1), and upstream messages are often multi-line
 * (Kthena's "validation failed:\n  - spec...."): each run becomes one space.
 */
export function warningText(warning: string): string {
  return warning.replace(CONTROL_RUN, ' ');
}

function boundedWarnings(warnings: readonly string[] | undefined): { warnings?: string[] } {
  if (!warnings || warnings.length === 0) return {};
  const shown = warnings
    .slice(0, MAX_WARNINGS)
    // Truncated first, so the replacement costs no more than a warning may hold.
    .map((warning) => warningText(truncate(warning, MAX_WARNING_CHARS)));
  if (warnings.length > MAX_WARNINGS) shown.push(`…and ${warnings.length - MAX_WARNINGS} more warnings`);
  return { warnings: shown };
}

/**
 * The response for `decision`; `patch` is the decision's patch when the caller has built it
 * already (the server does, to handle a failure to build it), else it is built here.
 */
export function admissionResponse(
  request: AdmissionRequest,
  decision: Decision,
  patch?: JsonPatch,
): AdmissionReviewResponse {
  const warnings = boundedWarnings(decision.warnings);
  if (!decision.allowed) {
    return {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: {
        uid: request.uid,
        allowed: false,
        status: {
          code: decision.code,
          message: truncate(decision.message, MAX_MESSAGE_CHARS),
          reason: decision.reason ?? REASONS[decision.code] ?? 'Forbidden',
        },
        ...warnings,
      },
    };
  }
  const response: AdmissionReviewResponse = {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    response: { uid: request.uid, allowed: true, ...warnings },
  };
  const operations =
    patch ?? (decision.mutated && request.object ? jsonPatch(request.object, decision.mutated) : []);
  if (operations.length > 0) {
    response.response.patch = Buffer.from(JSON.stringify(operations)).toString('base64');
    response.response.patchType = 'JSONPatch';
  }
  return response;
}

/**
 * The review as JSON text. The patch, base64 and often megabytes long, is spliced in rather than
 * passed through JSON.stringify a second time: base64 needs no escaping, and for a pod of
 * thousands of containers that second pass cost as much as building the patch.
 */
export function serializeReview(review: AdmissionReviewResponse): string {
  const { patch, ...response } = review.response;
  const text = JSON.stringify({ ...review, response });
  if (patch === undefined) return text;
  // `text` ends with the response's and then the review's closing brace.
  return `${text.slice(0, -2)},"patch":"${patch}"}}`;
}
