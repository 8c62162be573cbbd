/** Builds the AdmissionRequest a rule receives, for unit tests. */
import type { AdmissionRequest, KubeObject, Operation } from '../../webhook/admission/types.js';

export interface ReviewFields {
  /** API group ('' for core) and version of both kind and resource. */
  group?: string;
  version?: string;
  kind: string;
  resource: string;
  subResource?: string;
  operation?: Operation;
  namespace?: string;
  name?: string;
  object?: KubeObject | null;
  oldObject?: KubeObject | null;
  dryRun?: boolean;
}

export function admissionRequest(fields: ReviewFields): AdmissionRequest {
  const group = fields.group ?? '';
  const version = fields.version ?? 'v1';
  return {
    uid: 'uid-1',
    kind: { group, version, kind: fields.kind },
    resource: { group, version, resource: fields.resource },
    ...(fields.subResource ? { subResource: fields.subResource } : {}),
    ...(fields.namespace !== undefined ? { namespace: fields.namespace } : {}),
    ...(fields.name !== undefined ? { name: fields.name } : {}),
    operation: fields.operation ?? 'CREATE',
    userInfo: {},
    object: fields.object ?? null,
    oldObject: fields.oldObject ?? null,
    dryRun: fields.dryRun ?? false,
  };
}

/** The AdmissionReview the API server would POST for `request`, as its JSON text. */
export function reviewBody(request: AdmissionRequest): string {
  return JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request });
}

/** The kind and resource of Koordinator's ElasticQuota, for admissionRequest. */
export const ELASTIC_QUOTA = {
  group: 'scheduling.sigs.k8s.io',
  version: 'v1alpha1',
  kind: 'ElasticQuota',
  resource: 'elasticquotas',
} as const;
