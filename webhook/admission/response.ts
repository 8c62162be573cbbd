/**
 * Turns a rule's decision into the AdmissionReview response the API server reads.
 */
import fastJsonPatch from 'fast-json-patch';
import type { AdmissionRequest, AdmissionReviewResponse, Decision, KubeObject } from './types.js';

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  422: 'Invalid',
  500: 'InternalError',
};

/** The RFC 6902 operations that turn `original` into `mutated`. */
export function jsonPatch(original: KubeObject, mutated: KubeObject): fastJsonPatch.Operation[] {
  return fastJsonPatch.compare(original, mutated);
}

export function admissionResponse(request: AdmissionRequest, decision: Decision): AdmissionReviewResponse {
  const warnings = decision.warnings && decision.warnings.length > 0 ? { warnings: decision.warnings } : {};
  if (!decision.allowed) {
    return {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: {
        uid: request.uid,
        allowed: false,
        status: {
          code: decision.code,
          message: decision.message,
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
  if (decision.mutated && request.object) {
    const operations = jsonPatch(request.object, decision.mutated);
    if (operations.length > 0) {
      response.response.patch = Buffer.from(JSON.stringify(operations)).toString('base64');
      response.response.patchType = 'JSONPatch';
    }
  }
  return response;
}
