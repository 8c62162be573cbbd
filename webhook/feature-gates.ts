/**
 * Feature gates: one per webhook, declared in its folder (a gated-off webhook is absent from the
 * routes and from both configurations), and the rule gates of webhook/rule-gates.ts. Parsed from
 * `--feature-gates=Name=true,Other=false`.
 */
import { RULE_GATE_DEFAULTS, type RuleGate } from './rule-gates.js';
import { WEBHOOKS } from './webhooks/index.js';

export { replaceResourcesCounted, type RuleGate, type RuleGates } from './rule-gates.js';

/** A webhook's gate: the `featureGate` of a folder listed in webhook/webhooks/index.ts. */
export type WebhookGate = (typeof WEBHOOKS)[number]['featureGate'];
export type FeatureGate = WebhookGate | RuleGate;
export type FeatureGates = Readonly<Record<FeatureGate, boolean>>;

/** Every gate with its default: the webhooks' (all on), in the table's order, then the rule gates. */
export const FEATURE_GATE_DEFAULTS: FeatureGates = {
  ...(Object.fromEntries(WEBHOOKS.map((webhook) => [webhook.featureGate, true])) as Record<
    WebhookGate,
    true
  >),
  ...RULE_GATE_DEFAULTS,
};

function isFeatureGate(name: string): name is FeatureGate {
  return Object.hasOwn(FEATURE_GATE_DEFAULTS, name);
}

/** Parses `A=true,B=false`; throws with the offending entry and the known gates on bad input. */
export function parseFeatureGates(spec: string | undefined): FeatureGates {
  const gates: Record<FeatureGate, boolean> = { ...FEATURE_GATE_DEFAULTS };
  for (const raw of (spec ?? '').split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const match = /^([A-Za-z0-9]+)=(true|false)$/.exec(entry);
    if (!match?.[1] || !match[2]) {
      throw new Error(`--feature-gates: "${entry}" is not of the form Name=true or Name=false`);
    }
    const name = match[1];
    if (!isFeatureGate(name)) {
      throw new Error(
        `--feature-gates: unknown gate "${name}"; known gates: ${Object.keys(FEATURE_GATE_DEFAULTS).join(', ')}`,
      );
    }
    gates[name] = match[2] === 'true';
  }
  return gates;
}
