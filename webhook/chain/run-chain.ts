/**
 * One object through the admission chain, as the API server runs it: every mutating webhook of
 * the table in order, each seeing the object as the previous ones left it; once more for the
 * IfNeeded webhooks that ran before a later webhook changed the object (the API server's single
 * reinvocation round); then every validating webhook on the result. Each call goes through the
 * server's own code: the review is serialised and read back as the server reads a body (so the
 * same shape limits apply), judged by decide(), softened to the webhook's enforcement as the
 * server softens it, and answered by admissionResponse(), whose patch is then applied as the API
 * server applies it.
 */
import { randomInt, randomUUID } from 'node:crypto';
import fastJsonPatch from 'fast-json-patch';
import type { Logger } from 'pino';
import type { JsonPatch } from '../../../webhook/admission/response.js';
import { admissionResponse } from '../../../webhook/admission/response.js';
import type {
  AdmissionRequest,
  GroupVersionKind,
  GroupVersionResource,
  JsonObject,
  KubeObject,
  Operation,
} from '../../../webhook/admission/types.js';
import { readReview } from '../../../webhook/server/app.js';
import { decide, unreadable } from '../../../webhook/server/decide.js';
import { enforce } from '../../../webhook/enforcement/apply-enforcement.js';
import {
  actionFor,
  DENY_ALL,
  type Enforcement,
  type EnforcementAction,
} from '../../../webhook/enforcement/enforcement.js';
import type { OperatorMetrics } from '../../../webhook/metrics/operator-metrics.js';
import type { StateSnapshot } from '../../../webhook/state.js';
import { shortName, type WebhookEntry } from '../../../webhook/table.js';
import { matchWebhook } from './matching.js';

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

export interface Verdict {
  allowed: boolean;
  /** The object as it would be stored (null for DELETE, or when refused). */
  object: KubeObject | null;
  /** The object before any webhook changed it. */
  original: KubeObject | null;
  calls: WebhookCall[];
  /** The refusal: by a webhook, or by the API server on a match condition's error. */
  denial?: { webhook: string; code: number; message: string };
  /** What this tool had to assume, for the reader to judge. */
  notes: string[];
}

export interface AdmissionInput {
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  namespaced: boolean;
  namespace: string | undefined;
  operation: Exclude<Operation, 'CONNECT'>;
  object: KubeObject | null;
  oldObject: KubeObject | null;
}

export interface ChainContext {
  webhooks: readonly WebhookEntry[];
  state: StateSnapshot;
  logger: Logger;
  metrics: OperatorMetrics;
  /** The labels the API server reads for a namespace's selectors. */
  namespaceLabels: (name: string) => Readonly<Record<string, string>>;
  /** Each webhook's enforcement; deny everywhere when omitted (the audit's "if it were enforced"). */
  enforcement?: Enforcement;
}

const clone = <T>(value: T): T => structuredClone(value);

/**
 * Applies a JSONPatch response as the API server does: fast-json-patch, validating each operation
 * (a `test` that fails, or a path that does not resolve, throws); `inPlace` when `object` is a copy
 * of the caller's own.
 */
export function applyPatch(object: KubeObject, patch: JsonPatch, inPlace = false): KubeObject {
  return fastJsonPatch.applyPatch(inPlace ? object : clone(object), patch, true, true).newDocument;
}

/** The name the API server gives a `generateName` object, created after mutation and before validation. */
function generatedName(prefix: string): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  let suffix = '';
  for (let i = 0; i < 5; i += 1) suffix += alphabet.charAt(randomInt(alphabet.length));
  return `${prefix}${suffix}`;
}

const nameOf = (object: KubeObject | null): string | undefined => {
  const name = object?.metadata.name;
  return typeof name === 'string' && name !== '' ? name : undefined;
};

/**
 * What the API server's own admission does to a pod before webhooks see it and that our rules
 * read: the Priority plugin resolves spec.priorityClassName into spec.priority.
 */
function priorityFromClass(object: KubeObject, state: StateSnapshot, notes: string[]): KubeObject {
  const spec = object.spec;
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) return object;
  const className = spec.priorityClassName;
  if (typeof className !== 'string' || className === '' || spec.priority !== undefined) return object;
  const priorityClass = state.priorityClass(className);
  if (!priorityClass) {
    notes.push(
      `PriorityClass ${JSON.stringify(className)} is not in the state: spec.priority left unset (the API server refuses the pod if the class does not exist)`,
    );
    return object;
  }
  const next: JsonObject = { ...spec, priority: priorityClass.value };
  if (spec.preemptionPolicy === undefined)
    next.preemptionPolicy = priorityClass.preemptionPolicy ?? 'PreemptLowerPriority';
  return { ...object, spec: next };
}

function review(input: AdmissionInput, object: KubeObject | null, uid: string): Buffer {
  const name = nameOf(object) ?? nameOf(input.oldObject);
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
function call(
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
  const action = actionFor(context.enforcement ?? DENY_ALL, shortName(entry.name));
  const judgement = enforce(entry, judged, action);
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
    ...(judgement.wouldRefuse !== undefined ? { wouldRefuse: judgement.wouldRefuse } : {}),
    ...(judgement.wouldChange ? { wouldChange: judgement.wouldChange } : {}),
  };
  return { call, reviewed: request.object };
}

export function runChain(input: AdmissionInput, context: ChainContext): Verdict {
  const notes: string[] = [];
  const calls: WebhookCall[] = [];
  let object = input.object;
  if (object && input.namespaced && input.namespace)
    object.metadata = { ...object.metadata, namespace: input.namespace };
  if (
    object &&
    input.resource.group === '' &&
    input.resource.resource === 'pods' &&
    input.operation !== 'DELETE'
  ) {
    object = priorityFromClass(object, context.state, notes);
  }
  const original = object;
  const refuse = (webhook: string, code: number, message: string): Verdict => ({
    allowed: false,
    object: null,
    original,
    calls,
    denial: { webhook, code, message },
    notes,
  });
  const requestFor = (current: KubeObject | null): AdmissionRequest => ({
    uid: '',
    kind: input.kind,
    resource: input.resource,
    ...(nameOf(current) ? { name: nameOf(current) } : {}),
    ...(input.namespace ? { namespace: input.namespace } : {}),
    operation: input.operation,
    userInfo: {},
    object: current,
    oldObject: input.oldObject,
    dryRun: false,
  });
  const match = { namespaceLabels: context.namespaceLabels, namespaced: input.namespaced };

  // Mutating webhooks, with the API server's bookkeeping of who must be reinvoked.
  const mutating = context.webhooks.filter((entry) => entry.type === 'mutating');
  let previouslyInvoked = new Set<string>();
  const reinvoke = new Set<string>();
  let reinvocationNeeded = false;
  for (const round of [1, 2] as const) {
    if (round === 2 && !reinvocationNeeded) break;
    let request = requestFor(object);
    for (const entry of mutating) {
      const matched = matchWebhook(entry, request, match);
      if (matched.call === 'refuse') return refuse(shortName(entry.name), 403, matched.message);
      if (!matched.call) continue;
      if (round === 2 && !reinvoke.has(entry.name)) continue;
      const { call: result, reviewed } = call(entry, input, object, round, context);
      calls.push(result);
      if (!result.allowed) return refuse(result.webhook, result.code ?? 403, result.message ?? '');
      if (result.patch.length > 0 && reviewed) {
        object = applyPatch(reviewed, result.patch, true);
        request = requestFor(object);
        for (const name of previouslyInvoked) reinvoke.add(name);
        previouslyInvoked = new Set();
        reinvocationNeeded = true;
      }
      if (entry.reinvocationPolicy === 'IfNeeded') previouslyInvoked.add(entry.name);
    }
  }

  // The object is named before validation: validating webhooks see the generated name.
  if (
    object &&
    input.operation === 'CREATE' &&
    !nameOf(object) &&
    typeof object.metadata.generateName === 'string'
  ) {
    object = {
      ...object,
      metadata: { ...object.metadata, name: generatedName(object.metadata.generateName) },
    };
  }
  let denial: Verdict['denial'];
  const validated = requestFor(object);
  for (const entry of context.webhooks.filter((each) => each.type === 'validating')) {
    const matched = matchWebhook(entry, validated, match);
    if (matched.call === 'refuse') {
      denial ??= { webhook: shortName(entry.name), code: 403, message: matched.message };
      continue;
    }
    if (!matched.call) continue;
    const { call: result } = call(entry, input, object, 1, context);
    calls.push(result);
    if (!result.allowed)
      denial ??= { webhook: result.webhook, code: result.code ?? 403, message: result.message ?? '' };
  }
  if (denial) return { allowed: false, object: null, original, calls, denial, notes };
  return { allowed: true, object: input.operation === 'DELETE' ? null : object, original, calls, notes };
}
