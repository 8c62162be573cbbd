/**
 * Enforcement per webhook: how much of its judgement a webhook acts on while rules are being
 * rolled out, as Gatekeeper's enforcementAction does for a constraint.
 *
 *   deny    the judgement as it is (the default)
 *   warn    a refusal admits the object and comes back as a warning (kubectl prints it)
 *   dryrun  a refusal admits the object silently and a patch is not returned; both are only
 *           counted and logged
 *
 * Written `validate-pod=warn,mutate-pod=dryrun` (commas or newlines), keyed by the webhook's
 * short name; `*` sets every webhook not named otherwise. A step a webhook enforces apart from
 * itself (webhook/table.ts `steps`) is named `<webhook>/<step>` (`validate-pod/colocation=warn`):
 * its refusal is softened first, then what the webhook decides is softened by the webhook's own
 * action; `*` does not name steps, and a step not named takes its webhook's answer as it is. The
 * flag --enforcement and the `enforcement` key of the operator's ConfigMap use the same text.
 */
import { atField, FieldPath, type FieldError } from '../rules/shared/field-errors.js';
import { MAX_SHOWN_VALUE_CHARS, showValue, truncate } from '../util/bounded-text.js';
import { failure, success, type Result } from '../util/result.js';

export const ENFORCEMENT_ACTIONS = ['deny', 'warn', 'dryrun'] as const;
export type EnforcementAction = (typeof ENFORCEMENT_ACTIONS)[number];

/** Every webhook's and step's action; webhooks not named take `fallback`, steps not named deny. */
export interface Enforcement {
  readonly byWebhook: ReadonlyMap<string, EnforcementAction>;
  readonly fallback: EnforcementAction;
}

export const DENY_ALL: Enforcement = { byWebhook: new Map(), fallback: 'deny' };

/** Far above the 14 webhooks and their steps, each named once; keeps a hostile text's cost bounded. */
export const MAX_ENFORCEMENT_CHARS = 4096;
const MAX_PROBLEMS = 20;

function isAction(value: string): value is EnforcementAction {
  return (ENFORCEMENT_ACTIONS as readonly string[]).includes(value);
}

/**
 * Reads an enforcement text against the webhooks and steps that exist (webhook/table.ts
 * enforceableNames); every problem is named, with the entry it is in, as an error at `where`
 * (`--enforcement`, `data.enforcement`) or below it.
 */
export function readEnforcement(
  text: string,
  knownWebhooks: readonly string[],
  where: FieldPath,
): Result<Enforcement, FieldError[]> {
  if (text.length > MAX_ENFORCEMENT_CHARS) {
    return failure([atField(where, `longer than ${MAX_ENFORCEMENT_CHARS} characters`)]);
  }
  const errors: FieldError[] = [];
  const byWebhook = new Map<string, EnforcementAction>();
  let fallback: EnforcementAction = 'deny';
  let fallbackSet = false;
  const entries = text
    .split(/[,\n]/)
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '' && !entry.startsWith('#'));
  for (const entry of entries) {
    if (errors.length >= MAX_PROBLEMS) break;
    const equals = entry.indexOf('=');
    const name = (equals < 0 ? entry : entry.slice(0, equals)).trim();
    const action = equals < 0 ? '' : entry.slice(equals + 1).trim();
    const shown = showValue(entry);
    if (equals < 0) {
      errors.push(atField(where, `entry ${shown} is not webhook=action`));
      continue;
    }
    if (!isAction(action)) {
      errors.push(
        atField(
          where.child(truncate(name, MAX_SHOWN_VALUE_CHARS)),
          `action must be one of ${ENFORCEMENT_ACTIONS.join(', ')}, got ${showValue(action)}`,
        ),
      );
      continue;
    }
    if (name === '*') {
      if (fallbackSet) errors.push(atField(where, '* is named twice'));
      fallback = action;
      fallbackSet = true;
      continue;
    }
    if (!knownWebhooks.includes(name)) {
      errors.push(
        atField(where, `unknown webhook ${showValue(name)}; known: ${[...knownWebhooks].sort().join(', ')}`),
      );
      continue;
    }
    if (byWebhook.has(name)) {
      errors.push(atField(where.child(name), 'named twice'));
      continue;
    }
    byWebhook.set(name, action);
  }
  return errors.length > 0 ? failure(errors) : success({ byWebhook, fallback });
}

export function actionFor(enforcement: Enforcement, shortName: string): EnforcementAction {
  return enforcement.byWebhook.get(shortName) ?? enforcement.fallback;
}

/** A step's action (`<webhook>/<step>`): deny unless named, so it follows its webhook's action. */
export function stepActionFor(enforcement: Enforcement, stepName: string): EnforcementAction {
  return enforcement.byWebhook.get(stepName) ?? 'deny';
}

/** The action of any name the enforcement may hold: a step's (it has a `/`) or a webhook's. */
export function actionOfName(enforcement: Enforcement, name: string): EnforcementAction {
  return name.includes('/') ? stepActionFor(enforcement, name) : actionFor(enforcement, name);
}

/** The enforcement as the text that would produce it, sorted: for logs and Events. */
export function describeEnforcement(enforcement: Enforcement): string {
  const named = [...enforcement.byWebhook]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, action]) => `${name}=${action}`);
  return [`*=${enforcement.fallback}`, ...named].join(',');
}
