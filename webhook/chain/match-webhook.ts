/**
 * Whether the API server would send a request to a webhook of the table, decided as its webhook
 * dispatcher does: the namespace selector, the object selector, the rules (with matchPolicy
 * Equivalent, so only group, resource and scope count, not the version), then the match
 * conditions. A match condition that errs fails the request under failurePolicy Fail and skips
 * the webhook under Ignore.
 */
import type { V1LabelSelector } from '@kubernetes/client-node';
import type { AdmissionRequest, JsonValue } from '../admission/types.js';
import type { WebhookEntry } from '../table.js';
import { labelsOf } from '../util/json.js';
import { parseLabelSelector, selectorMatches, type LabelSelector } from '../util/label-selector.js';
import { CelError, compileCel, type CelProgram, type CelValue } from './cel.js';
import { KINDS } from '../kinds.js';

type MatchResult =
  | { call: true }
  | { call: false; reason: string }
  /** A match condition erred under failurePolicy Fail: the API server refuses the request. */
  | { call: 'refuse'; message: string };

const programs = new Map<string, CelProgram>();

function program(expression: string, where: string): CelProgram {
  let compiled = programs.get(expression);
  if (!compiled) {
    try {
      compiled = compileCel(expression);
    } catch (error) {
      // The chain serves both `kubectl admit` and the periodic audit, so the message names
      // neither: what failed is the simulation of the API server, not the request.
      throw new Error(
        `${where}: this match condition cannot be evaluated outside the API server: ${(error as Error).message}`,
        { cause: error },
      );
    }
    programs.set(expression, compiled);
  }
  return compiled;
}

const parsedSelectors = new WeakMap<V1LabelSelector, LabelSelector>();

function selects(
  selector: V1LabelSelector,
  labels: Readonly<Record<string, string>>,
  where: string,
): boolean {
  let parsed = parsedSelectors.get(selector);
  if (!parsed) {
    const result = parseLabelSelector(selector as unknown as JsonValue, where);
    if (!result.ok) throw new Error(result.error);
    parsed = result.value;
    parsedSelectors.set(selector, parsed);
  }
  return selectorMatches(parsed, labels);
}

function isEmptySelector(selector: V1LabelSelector): boolean {
  return (
    (selector.matchLabels === undefined || Object.keys(selector.matchLabels).length === 0) &&
    (selector.matchExpressions === undefined || selector.matchExpressions.length === 0)
  );
}

const anyOf = (list: readonly string[], value: string): boolean => list.includes('*') || list.includes(value);

function rulesMatch(entry: WebhookEntry, request: AdmissionRequest, namespaced: boolean): boolean {
  const resource = request.subResource
    ? `${request.resource.resource}/${request.subResource}`
    : request.resource.resource;
  return entry.resourceRules.some(
    (rule) =>
      anyOf(rule.operations, request.operation) &&
      anyOf(rule.apiGroups, request.resource.group) &&
      (anyOf(rule.resources, resource) ||
        (request.subResource !== undefined && rule.resources.includes('*/*'))) &&
      ((rule.scope as string) === '*' || (rule.scope === 'Namespaced') === namespaced),
  );
}

/** What CEL sees as `request`: the review's request, as JSON. */
function requestVariable(request: AdmissionRequest): CelValue {
  const plain = (value: unknown): CelValue => value as CelValue;
  return {
    uid: request.uid,
    kind: plain(request.kind),
    resource: plain(request.resource),
    ...(request.subResource ? { subResource: request.subResource } : {}),
    name: request.name ?? '',
    namespace: request.namespace ?? '',
    operation: request.operation,
    userInfo: plain(request.userInfo),
    dryRun: request.dryRun,
    ...(request.options ? { options: request.options } : {}),
  };
}

interface MatchContext {
  /** The labels of a namespace as the API server would read them. */
  namespaceLabels: (name: string) => Readonly<Record<string, string>>;
  namespaced: boolean;
}

export function matchWebhook(
  entry: WebhookEntry,
  request: AdmissionRequest,
  context: MatchContext,
): MatchResult {
  // The rules are checked first only because they are the cheapest test: every test must pass.
  if (!rulesMatch(entry, request, context.namespaced)) return { call: false, reason: 'rules' };
  if (!isEmptySelector(entry.namespaceSelector)) {
    let labels: Readonly<Record<string, string>> | undefined;
    if (request.resource.resource === KINDS.namespace.plural && !request.subResource) {
      labels = labelsOf(request.object ?? request.oldObject);
    } else if (request.namespace) {
      labels = context.namespaceLabels(request.namespace);
    }
    // A cluster-scoped object other than a Namespace is never exempted by a namespace selector.
    if (labels && !selects(entry.namespaceSelector, labels, `${entry.name} namespaceSelector`)) {
      return { call: false, reason: 'namespaceSelector' };
    }
  }
  if (!isEmptySelector(entry.objectSelector)) {
    const where = `${entry.name} objectSelector`;
    const matches =
      (request.object !== null && selects(entry.objectSelector, labelsOf(request.object), where)) ||
      (request.oldObject !== null && selects(entry.objectSelector, labelsOf(request.oldObject), where));
    if (!matches) return { call: false, reason: 'objectSelector' };
  }
  if (entry.matchConditions.length === 0) return { call: true };

  const variables = {
    object: (request.object ?? null) as CelValue,
    oldObject: (request.oldObject ?? null) as CelValue,
    request: requestVariable(request),
  };
  const errors: string[] = [];
  for (const condition of entry.matchConditions) {
    const result = program(condition.expression, `${entry.name} matchConditions[${condition.name}]`).evaluate(
      variables,
    );
    if (result instanceof CelError) errors.push(`${condition.name}: ${result.message}`);
    else if (result === false) return { call: false, reason: `matchCondition ${condition.name}` };
    else if (result !== true) errors.push(`${condition.name}: does not evaluate to a boolean`);
  }
  if (errors.length === 0) return { call: true };
  if (entry.failurePolicy === 'Ignore')
    return { call: false, reason: `matchCondition errors (ignored): ${errors.join('; ')}` };
  return {
    call: 'refuse',
    message: `failed to evaluate match conditions of webhook ${entry.name}: ${errors.join('; ')}`,
  };
}
