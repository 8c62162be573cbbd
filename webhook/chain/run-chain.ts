/**
 * One object through the admission chain, as the API server runs it: every mutating webhook of
 * the table in order, each seeing the object as the previous ones left it; once more for the
 * IfNeeded webhooks that ran before a later webhook changed the object (the API server's single
 * reinvocation round); then every validating webhook on the result. Which webhooks are called is
 * match-webhook.ts; each call goes through the admission server's own code (call-webhook.ts), and
 * its patch is applied as the API server applies it (apply-patch.ts).
 */
import { randomInt } from 'node:crypto';
import type { AdmissionRequest, KubeObject } from '../admission/types.js';
import { shortName } from '../table.js';
import { applyPatch } from './apply-patch.js';
import { callWebhook, objectName, type AdmissionInput, type WebhookCall } from './call-webhook.js';
import type { ChainContext } from './chain-context.js';
import { matchWebhook } from './match-webhook.js';
import { priorityFromClass } from './priority-from-class.js';
import { KINDS } from '../kinds.js';

export interface Verdict {
  allowed: boolean;
  /** The object as it would be stored (null for DELETE, or when refused). */
  object: KubeObject | null;
  /** The object before any webhook changed it. */
  original: KubeObject | null;
  calls: WebhookCall[];
  /**
   * The refusal: by a webhook, or by the API server on a match condition's error; `step` names the
   * webhook's step it came from when that step is enforced apart (`validate-pod/colocation`).
   */
  denial?: { webhook: string; code: number; message: string; step?: string };
  /** What this tool had to assume, for the reader to judge. */
  notes: string[];
}

/** The name the API server gives a `generateName` object, created after mutation and before validation. */
function generatedName(prefix: string): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  let suffix = '';
  for (let i = 0; i < 5; i += 1) suffix += alphabet.charAt(randomInt(alphabet.length));
  return `${prefix}${suffix}`;
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
    input.resource.resource === KINDS.pod.plural &&
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
    ...(objectName(current) ? { name: objectName(current) } : {}),
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
      const { call: result, reviewed } = callWebhook(entry, input, object, round, context);
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
    !objectName(object) &&
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
    const { call: result } = callWebhook(entry, input, object, 1, context);
    calls.push(result);
    if (!result.allowed)
      denial ??= {
        webhook: result.webhook,
        code: result.code ?? 403,
        message: result.message ?? '',
        ...(result.refusedBy ? { step: result.refusedBy } : {}),
      };
  }
  if (denial) return { allowed: false, object: null, original, calls, denial, notes };
  return { allowed: true, object: input.operation === 'DELETE' ? null : object, original, calls, notes };
}
