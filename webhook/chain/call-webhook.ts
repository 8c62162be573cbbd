/**
 * One webhook called as the API server calls it, through the admission server's own code: the
 * review is serialised and read back as the server reads a body (so the same shape limits apply),
 * judged by decide(), softened to the webhook's enforcement as the server softens it, and answered
 * by admissionResponse().
 */
import { randomUUID } from 'node:crypto';
import type { JsonPatch } from '../admission/response.js';
import { admissionResponse } from '../admission/response.js';
import type { GroupVersionKind, GroupVersionResource, KubeObject, Operation } from '../admission/types.js';
import { readReview } from '../server/app.js';
import { decide, unreadable } from '../server/decide.js';
import { enforceAll } from '../enforcement/apply-enforcement.js';
import { actionFor, DENY_ALL, type EnforcementAction } from '../enforcement/enforcement.js';
import { shortName, type WebhookEntry } from '../table.js';
import type { ChainContext } from './chain-context.js';

/** The request the chain judges: one object, as a client would send it to the API server. */
export interface AdmissionInput {
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  namespaced: boolean;
  namespace: string | undefined;
  operation: Exclude<Operation, 'CONNECT'>;
  object: KubeObject | null;
  oldObject: KubeObject | null;
}

/** What one webhook answered. */
export interface WebhookCall {
  webhook: string;
  type: WebhookEntry['type'];
  /** 2 for the reinvocation round. */
  round: 1 | 2;
  allowed: boolean;
  message?: string;
  code?: number;
  warnings: string[];
  patch: JsonPatch;
  /** warn or dryrun: the webhook's enforcement, when it is not deny. */
  enforcement?: Exclude<EnforcementAction, 'deny'>;
  /** The step (`<webhook>/<step>`) the refusal came from, when that step is enforced apart from its webhook. */
  refusedBy?: string;
  /** A step of the webhook whose refusal its own enforcement (warn or dryrun) set aside. */
  step?: { name: string; action: Exclude<EnforcementAction, 'deny'> };
  /** The refusal the enforcement turned into an admission. */
  wouldRefuse?: string;
  /** dryrun: what the patch that was not returned would have changed (`op /path`). */
  wouldChange?: string[];
}

/** A call and the object as the webhook read it: a fresh copy, so its patch can be applied in place. */
interface CallResult {
  call: WebhookCall;
  reviewed: KubeObject | null;
}

/** The object's name, when it has one yet (a `generateName` create has none until validation). */
export const objectName = (object: KubeObject | null): string | undefined => {
  const name = object?.metadata.name;
  return typeof name === 'string' && name !== '' ? name : undefined;
};

function review(input: AdmissionInput, object: KubeObject | null, uid: string): Buffer {
  const name = objectName(object) ?? objectName(input.oldObject);
  const request = {
    uid,
    kind: input.kind,
    resource: input.resource,
    requestKind: input.kind,
    requestResource: input.resource,
    ...(name ? { name } : {}),
    ...(input.namespace ? { namespace: input.namespace } : {}),
    operation: input.operation,
    userInfo: { username: 'admission-operator-admit' },
    object,
    oldObject: input.oldObject,
    dryRun: false,
    options: {
      apiVersion: 'meta.k8s.io/v1',
      kind: `${input.operation[0]}${input.operation.slice(1).toLowerCase()}Options`,
    },
  };
  return Buffer.from(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request }));
}

/** Calls one webhook through the server's reading, judging and answering code. */
export function callWebhook(
  entry: WebhookEntry,
  input: AdmissionInput,
  object: KubeObject | null,
  round: 1 | 2,
  context: ChainContext,
): CallResult {
  const { request, unread } = readReview(review(input, object, randomUUID()));
  const judged: ReturnType<typeof decide> = unread
    ? unreadable(entry, unread, context.metrics)
    : decide(entry, request, context.state, context.logger, context.metrics);
  const enforcement = context.enforcement ?? DENY_ALL;
  const action = actionFor(enforcement, shortName(entry.name));
  const judgement = enforceAll(entry, judged, enforcement);
  const response = admissionResponse(request, judgement.decision, judgement.patch).response;
  const patch = response.patch
    ? (JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) as JsonPatch)
    : [];
  const call: WebhookCall = {
    webhook: shortName(entry.name),
    type: entry.type,
    round,
    allowed: response.allowed,
    ...(response.status ? { message: response.status.message, code: response.status.code } : {}),
    warnings: response.warnings ?? [],
    patch,
    ...(action === 'deny' ? {} : { enforcement: action }),
    ...(judgement.step ? { step: judgement.step } : {}),
    ...(!response.allowed && !judgement.decision.allowed && judgement.decision.step
      ? { refusedBy: `${shortName(entry.name)}/${judgement.decision.step.name}` }
      : {}),
    ...(judgement.wouldRefuse !== undefined ? { wouldRefuse: judgement.wouldRefuse } : {}),
    ...(judgement.wouldChange ? { wouldChange: judgement.wouldChange } : {}),
  };
  return { call, reviewed: request.object };
}
