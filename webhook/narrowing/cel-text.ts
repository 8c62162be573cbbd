/**
 * CEL text for match conditions, written so it means the same to the API server's cel-go and to
 * webhook/chain/cel.ts, and never errs on an object the API server sends: every optional field is
 * tested with has() before it is read (an error under failurePolicy Fail refuses the request),
 * `oldObject` is read only behind `request.operation == 'UPDATE'` (it is null otherwise), and no
 * list literal holds more than 1,000 items (the chain's CEL library refuses longer ones).
 */
import type { Operation } from '../admission/types.js';
import type { LabelSelector, SelectorRequirement } from '../util/label-selector.js';
import { labelKeyProblem, labelValueProblem } from '../util/k8s-names.js';

export const TRUE = 'true';
export const FALSE = 'false';
/** The longest list literal written: the chain's CEL library (cel-js) refuses more than 1,000 items. */
const MAX_LIST_ITEMS = 1000;

/**
 * A CEL string literal of `text`; undefined for a string with a lone surrogate, which no CEL
 * escape can write (and no label, name or key the API server accepts holds).
 */
export function celString(text: string): string | undefined {
  let out = "'";
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (char === "'" || char === '\\') out += `\\${char}`;
    else if (code >= 0x20 && code < 0x7f) out += char;
    else if (code >= 0xd800 && code <= 0xdfff) return undefined;
    else if (code <= 0xffff) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += `\\U${code.toString(16).padStart(8, '0')}`;
  }
  return `${out}'`;
}

/** `subject in [values]`, split into lists of at most 1,000 items; undefined when a value cannot be written. */
export function inList(subject: string, values: readonly string[]): string | undefined {
  const literals: string[] = [];
  for (const value of values) {
    const literal = celString(value);
    if (literal === undefined) return undefined;
    literals.push(literal);
  }
  if (literals.length === 0) return FALSE;
  const lists: string[] = [];
  for (let start = 0; start < literals.length; start += MAX_LIST_ITEMS) {
    lists.push(`${subject} in [${literals.slice(start, start + MAX_LIST_ITEMS).join(', ')}]`);
  }
  return or(lists);
}

/** Written with spaces around every operator, so a part without spaces is one operand. */
const parenthesised = (part: string): string => (/^\S+$/.test(part) ? part : `(${part})`);

/** Every part holds (`true` parts dropped; `false` wins). */
export function and(parts: readonly string[]): string {
  const kept = [...new Set(parts.filter((part) => part !== TRUE))];
  if (kept.includes(FALSE)) return FALSE;
  if (kept.length === 0) return TRUE;
  return kept.length === 1 ? (kept[0] as string) : kept.map(parenthesised).join(' && ');
}

/** Some part holds (`false` parts dropped; `true` wins). */
export function or(parts: readonly string[]): string {
  const kept = [...new Set(parts.filter((part) => part !== FALSE))];
  if (kept.includes(TRUE)) return TRUE;
  if (kept.length === 0) return FALSE;
  return kept.length === 1 ? (kept[0] as string) : kept.map(parenthesised).join(' || ');
}

export function not(part: string): string {
  if (part === TRUE) return FALSE;
  if (part === FALSE) return TRUE;
  return `!${parenthesised(part)}`;
}

/** The request is one of these operations. */
export function operationIs(operations: readonly Operation[]): string {
  if (operations.length === 1) return `request.operation == ${celString(operations[0] ?? '') ?? "''"}`;
  return inList('request.operation', operations) ?? FALSE;
}

/** The object (or, on UPDATE, the old object) carries label `key`. */
export function hasLabel(key: string, on: 'object' | 'oldObject' = 'object'): string {
  const literal = celString(key);
  if (literal === undefined) return FALSE;
  return `has(${on}.metadata.labels) && ${literal} in ${on}.metadata.labels`;
}

/** Label `key` is present with one of `values`. */
export function labelIn(
  key: string,
  values: readonly string[],
  on: 'object' | 'oldObject' = 'object',
): string {
  const literal = celString(key);
  const among = inList(`${on}.metadata.labels[${literal ?? ''}]`, values);
  if (literal === undefined || among === undefined) return FALSE;
  return and([hasLabel(key, on), among]);
}

/** The object carries any of the labels `keys`. */
export function hasAnyLabel(keys: readonly string[]): string {
  if (keys.length <= 1) return keys[0] === undefined ? FALSE : hasLabel(keys[0]);
  const among = inList('k', keys);
  return among === undefined
    ? TRUE
    : `has(object.metadata.labels) && object.metadata.labels.exists(k, ${among})`;
}

/**
 * On UPDATE: one of the labels `keys` was added, removed or changed. Read only behind an UPDATE
 * test, where oldObject is the stored object.
 */
export function anyLabelChanged(keys: readonly string[]): string {
  const literals = keys.map(celString);
  if (literals.some((literal) => literal === undefined)) return operationIs(['UPDATE']);
  if (literals.length === 0) return FALSE;
  const present = (on: string): string => `(has(${on}.metadata.labels) && k in ${on}.metadata.labels)`;
  const changed =
    `${present('object')} != ${present('oldObject')} || ` +
    `(${present('object')} && ${present('oldObject')} && object.metadata.labels[k] != oldObject.metadata.labels[k])`;
  return and([operationIs(['UPDATE']), `[${literals.join(', ')}].exists(k, ${changed})`]);
}

/** The object carries annotation `key`. */
export function hasAnnotation(key: string): string {
  const literal = celString(key);
  if (literal === undefined) return FALSE;
  return `has(object.metadata.annotations) && ${literal} in object.metadata.annotations`;
}

/** On UPDATE: spec.priority changed (an absent one counts as -1, outside every Koordinator band). */
export const PRIORITY_CHANGED =
  "request.operation == 'UPDATE' && " +
  '(has(object.spec.priority) ? object.spec.priority : -1) != ' +
  '(has(oldObject.spec.priority) ? oldObject.spec.priority : -1)';

/**
 * `map` (a CEL expression) has one of `names` as a key. A few names are tested one by one: a list
 * literal and its comprehension cost more to plan than the `in` tests they replace.
 */
function hasAnyKey(map: string, names: readonly string[]): string | undefined {
  const literals = names.map(celString);
  if (literals.some((literal) => literal === undefined) || names.length > MAX_LIST_ITEMS) return undefined;
  if (literals.length <= SHORT_KEY_LIST) return or(literals.map((literal) => `${literal} in ${map}`));
  return `${map}.exists(r, r in [${literals.join(', ')}])`;
}

/** The most names hasAnyKey tests one by one. */
const SHORT_KEY_LIST = 3;

/**
 * Some container (and init container, unless `initContainers` is false) requests or limits one of
 * `names`. Only requests are read unless `limits` is set: the API server defaults a container's
 * requests from its limits (SetDefaults_Pod, for containers and init containers) when it decodes
 * the request and again after each mutating webhook's patch, so a name a webhook is sent in
 * limits is in requests too. `limits` is for conditions also evaluated on manifests no API server
 * defaulted: the table as declared, which `admit` judges them with. Both lists are walked as one
 * (one comprehension to plan, not two). `guarded` tests spec.containers with has() first, for
 * mutating webhooks: an invalid pod without containers then fails the API server's validation,
 * with its message, instead of this condition (validating webhooks see only pods that passed it).
 */
export function containersRequestAny(
  names: readonly string[],
  {
    initContainers = true,
    guarded = true,
    limits = false,
  }: { initContainers?: boolean; guarded?: boolean; limits?: boolean } = {},
): string {
  if (names.length === 0) return FALSE;
  const inRequests = hasAnyKey('c.resources.requests', names);
  const inLimits = hasAnyKey('c.resources.limits', names);
  if (inRequests === undefined || inLimits === undefined) return TRUE;
  const asked = limits
    ? [or([and(['has(c.resources.requests)', inRequests]), and(['has(c.resources.limits)', inLimits])])]
    : ['has(c.resources.requests)', inRequests];
  const containers = guarded
    ? '(has(object.spec.containers) ? object.spec.containers : [])'
    : 'object.spec.containers';
  const walked = initContainers
    ? `(${containers} + (has(object.spec.initContainers) ? object.spec.initContainers : []))`
    : containers;
  return `${walked}.exists(c, ${and(['has(c.resources)', ...asked])})`;
}

/**
 * What a pod's requests count (component-helpers' PodRequests): containers, init containers,
 * overhead (`guarded` as containersRequestAny's).
 */
export function podRequestsAny(
  names: readonly string[],
  { guarded = true }: { guarded?: boolean } = {},
): string {
  const inOverhead = hasAnyKey('object.spec.overhead', names);
  if (inOverhead === undefined) return TRUE;
  return or([containersRequestAny(names, { guarded }), and(['has(object.spec.overhead)', inOverhead])]);
}

/** True when the API server accepts `requirement` in a label selector (and so can no pod carry another). */
export function validRequirement(requirement: SelectorRequirement): boolean {
  return (
    labelKeyProblem(requirement.key) === undefined &&
    requirement.values.every((value) => labelValueProblem(value) === undefined)
  );
}

/** One requirement over the object's labels, as apimachinery's selector reads it. */
export function requirementCel(requirement: SelectorRequirement): string {
  const { key, operator, values } = requirement;
  switch (operator) {
    case 'In':
      return labelIn(key, values);
    case 'NotIn':
      return not(labelIn(key, values));
    case 'Exists':
      return hasLabel(key);
    case 'DoesNotExist':
      return not(hasLabel(key));
  }
}

/**
 * The object's labels match `selector`. A selector with a key or value no label can have (the API
 * server refuses such labels) is taken to match: it is kept conservative rather than exact.
 */
export function selectorCel(selector: LabelSelector): string {
  if (!selector.requirements.every(validRequirement)) return TRUE;
  return and(selector.requirements.map(requirementCel));
}
