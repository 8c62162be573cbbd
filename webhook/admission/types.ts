/**
 * The admission.k8s.io/v1 wire types the server reads and writes, and the decision a rule
 * returns. Only what the API server sends and reads is modelled.
 */

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
export const OPERATIONS: readonly Operation[] = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];

export interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** A Kubernetes object as it arrives in a review: plain JSON with at least a metadata object. */
export interface KubeObject extends JsonObject {
  metadata: JsonObject;
}

export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource?: string;
  requestKind?: GroupVersionKind;
  requestResource?: GroupVersionResource;
  requestSubResource?: string;
  name?: string;
  namespace?: string;
  operation: Operation;
  userInfo: UserInfo;
  /** The new object (CREATE, UPDATE) or the options (CONNECT); null for DELETE. */
  object: KubeObject | null;
  /** The existing object (UPDATE, DELETE); null for CREATE. */
  oldObject: KubeObject | null;
  dryRun: boolean;
  options?: JsonObject | null;
}

export interface StatusDetails {
  code: number;
  message: string;
  reason?: string;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: StatusDetails;
  patch?: string;
  patchType?: 'JSONPatch';
  warnings?: string[];
}

export interface AdmissionReviewResponse {
  apiVersion: 'admission.k8s.io/v1';
  kind: 'AdmissionReview';
  response: AdmissionResponse;
}

/**
 * What a rule decides. A mutating rule returns the whole changed object in `mutated`; the
 * server turns the difference into an RFC 6902 patch, so rules never hand-write patches.
 */
export type Decision = (
  | { allowed: true; mutated?: KubeObject; warnings?: string[] }
  | {
      allowed: false;
      code: number;
      reason?: string;
      message: string;
      warnings?: string[];
      /**
       * The refusal comes from a step an admin may enforce apart from its webhook (`<webhook>/<step>`
       * in the enforcement, webhook/enforcement/): `otherwise` is what the webhook decides with that
       * step's refusal set aside, taken when the step is in warn or dryrun.
       */
      step?: { name: string; otherwise: Decision };
    }
) & {
  /**
   * What the rule did, for the decision's log line and metrics: the keys `action`, `reason`,
   * `tier` and `class` become labels of admission_rule_outcomes_total.
   */
  audit?: Readonly<Record<string, string>>;
  /**
   * An allowed pod to count against a quota until the pod watch sees it. The server records it
   * in the store's ledger right after the rule returns (never for dry runs), so the next request
   * already sees it.
   */
  reserve?: { key: string; quota: string; requests: ReadonlyMap<string, bigint> };
};
