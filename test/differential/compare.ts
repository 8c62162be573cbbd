/**
 * What the suite compares of two answers to one review: allowed, status code, message, warnings,
 * and the object after each side's patch. A patched object is compared as the API server would
 * store it (through its Go type: see the oracle's `canonical`), so Go's spelling of the same value
 * (`creationTimestamp: null`, `1000m` as `1`) is not a difference; the raw objects are still
 * compared, and a difference that only the raw form shows is counted as representation.
 */
import { isDeepStrictEqual } from 'node:util';
import type { JsonPatch } from '../../webhook/admission/response.js';
import type { JsonObject, KubeObject } from '../../webhook/admission/types.js';
import { applyPatch } from '../../webhook/chain/apply-patch.js';

/** One side's answer, as the API server would read it. */
export interface Verdict {
  allowed: boolean;
  /** status.code; 200 when an allowed answer carries none. */
  code: number;
  message: string;
  warnings: string[];
  patch: JsonPatch;
  /** The object after the patch (undefined when the patch does not apply); the request's object when none. */
  after?: KubeObject | null;
  /** Why the patch did not apply. */
  patchError?: string;
  /**
   * Koordinator's handler panicked: the call fails and the API server applies the failure
   * policy (Ignore: admitted unchanged; Fail: refused), which is what the verdict then says.
   */
  panic?: string;
  /** Where it panicked (the goroutine's stack), for the report. */
  stack?: string;
}

export type Aspect = 'allowed' | 'code' | 'message' | 'warnings' | 'object';

/** The verdict in an AdmissionReview body, its patch applied to `object`. */
export function verdictOf(body: JsonObject, object: KubeObject | null): Verdict {
  const response = (body.response ?? {}) as {
    allowed?: boolean;
    status?: { code?: number; message?: string };
    patch?: string;
    warnings?: string[];
  };
  const patch = response.patch
    ? (JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) as JsonPatch)
    : [];
  const verdict: Verdict = {
    allowed: response.allowed === true,
    code: response.status?.code ?? 200,
    message: response.status?.message ?? '',
    warnings: response.warnings ?? [],
    patch,
  };
  if (patch.length === 0 || !object) return { ...verdict, after: object };
  try {
    return { ...verdict, after: applyPatch(object, patch) };
  } catch (error) {
    return { ...verdict, patchError: (error as Error).message };
  }
}

export interface Compared {
  /** The aspects where the two differ as the API server sees them. */
  differences: Aspect[];
  /** The patched objects differ only in their spelling (equal through the Go type). */
  representationOnly: boolean;
}

/**
 * Compares two verdicts; `canonicalOurs` and `canonicalTheirs` are the patched objects through
 * their Go type (undefined when there is nothing to compare).
 */
export function compareVerdicts(
  ours: Verdict,
  theirs: Verdict,
  canonicalOurs: JsonObject | null | undefined,
  canonicalTheirs: JsonObject | null | undefined,
): Compared {
  const differences: Aspect[] = [];
  if (ours.allowed !== theirs.allowed) differences.push('allowed');
  if (ours.code !== theirs.code) differences.push('code');
  if (ours.message !== theirs.message) differences.push('message');
  if (!isDeepStrictEqual(ours.warnings, theirs.warnings)) differences.push('warnings');
  let representationOnly = false;
  if (ours.allowed && theirs.allowed) {
    if (ours.patchError !== theirs.patchError) differences.push('object');
    else if (!isDeepStrictEqual(canonicalOurs, canonicalTheirs)) differences.push('object');
    else representationOnly = !isDeepStrictEqual(ours.after, theirs.after);
  }
  return { differences, representationOnly };
}
