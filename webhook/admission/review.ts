/**
 * Reads an AdmissionReview v1 request body into an AdmissionRequest, or explains, with an
 * HTTP status, exactly what is wrong with it.
 */
import { showValue } from '../util/bounded-text.js';
import {
  OPERATIONS,
  type AdmissionRequest,
  type JsonObject,
  type KubeObject,
  type Operation,
} from './types.js';

export class BadReviewError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'BadReviewError';
  }
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What a message shows of a bad envelope value: never the value itself when it is not a string. */
function describe(value: unknown): string {
  if (typeof value === 'string') return showValue(value);
  if (value === undefined || value === null) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value === 'object' ? 'JSON object' : typeof value}`;
}

function bad(message: string): never {
  throw new BadReviewError(400, message);
}

function requireString(owner: JsonObject, key: string, path: string): string {
  const value = owner[key];
  if (typeof value !== 'string' || value === '') bad(`${path}.${key} must be a non-empty string`);
  return value;
}

function groupVersion<K extends string>(
  owner: JsonObject,
  key: string,
  last: K,
): { group: string; version: string } & Record<K, string> {
  const value = owner[key];
  if (!isObject(value)) bad(`request.${key} is required`);
  const group = value.group ?? '';
  if (typeof group !== 'string') bad(`request.${key}.group must be a string`);
  return {
    group,
    version: requireString(value, 'version', `request.${key}`),
    [last]: requireString(value, last, `request.${key}`),
  } as { group: string; version: string } & Record<K, string>;
}

function kubeObject(request: JsonObject, key: 'object' | 'oldObject'): KubeObject | null {
  const value = request[key];
  if (value === undefined || value === null) return null;
  if (!isObject(value)) bad(`request.${key} must be a JSON object`);
  if (!isObject(value.metadata)) bad(`request.${key}.metadata must be a JSON object`);
  return value as KubeObject;
}

/** Which objects an operation needs: CREATE and UPDATE need the new one, UPDATE and DELETE the old one. */
const NEEDS: Record<Operation, { object: boolean; oldObject: boolean }> = {
  CREATE: { object: true, oldObject: false },
  UPDATE: { object: true, oldObject: true },
  DELETE: { object: false, oldObject: true },
  CONNECT: { object: false, oldObject: false },
};

/** Parses a decoded JSON body. Throws BadReviewError (400) naming the first problem. */
export function parseAdmissionReview(body: unknown): AdmissionRequest {
  if (!isObject(body)) bad('the body must be a JSON object (an AdmissionReview)');
  if (body.apiVersion !== 'admission.k8s.io/v1') {
    bad(`apiVersion must be admission.k8s.io/v1, got ${describe(body.apiVersion)}`);
  }
  if (body.kind !== 'AdmissionReview') bad(`kind must be AdmissionReview, got ${describe(body.kind)}`);
  const request = body.request;
  if (!isObject(request)) bad('the AdmissionReview has no request');
  const uid = requireString(request, 'uid', 'request');
  const operation = request.operation;
  if (typeof operation !== 'string' || !(OPERATIONS as readonly string[]).includes(operation)) {
    bad(`request.operation must be one of ${OPERATIONS.join(', ')}, got ${describe(operation)}`);
  }
  const op = operation as Operation;
  const object = kubeObject(request, 'object');
  const oldObject = kubeObject(request, 'oldObject');
  if (NEEDS[op].object && object === null) bad(`request.object is required for ${op}`);
  if (NEEDS[op].oldObject && oldObject === null) bad(`request.oldObject is required for ${op}`);

  const optionalString = (key: string): string | undefined => {
    const value = request[key];
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value !== 'string') bad(`request.${key} must be a string`);
    return value;
  };
  const userInfo = isObject(request.userInfo) ? request.userInfo : {};
  return {
    uid,
    kind: groupVersion(request, 'kind', 'kind'),
    resource: groupVersion(request, 'resource', 'resource'),
    subResource: optionalString('subResource'),
    name: optionalString('name'),
    namespace: optionalString('namespace'),
    operation: op,
    userInfo: {
      username: typeof userInfo.username === 'string' ? userInfo.username : undefined,
      groups: Array.isArray(userInfo.groups)
        ? userInfo.groups.filter((g): g is string => typeof g === 'string')
        : undefined,
    },
    object,
    oldObject,
    dryRun: request.dryRun === true,
    options: isObject(request.options) ? request.options : null,
  };
}
