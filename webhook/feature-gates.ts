/**
 * Feature gates: one per webhook, declared in its folder (a gated-off webhook is absent from the
 * routes and from both configurations), and the rule gates of webhook/rule-gates.ts. Parsed from
 * `--feature-gates=Name=true,Other=false`. Koordinator's names for the same webhooks' gates are
 * taken too, so a gate copied from koord-manager's `--feature-gates` means what it meant there.
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

/**
 * Koordinator's names (its chart's `featureGates` string, koord-manager's `--feature-gates`) for
 * gates ours spell differently: each switches the same webhook.
 */
export const KOORDINATOR_GATE_ALIASES = {
  ElasticMutatingWebhook: 'ElasticQuotaMutatingWebhook',
  ElasticValidatingWebhook: 'ElasticQuotaValidatingWebhook',
  NodeMutatingWebhook: 'NodeStatusMutatingWebhook',
} as const satisfies Record<string, WebhookGate>;

function isFeatureGate(name: string): name is FeatureGate {
  return Object.hasOwn(FEATURE_GATE_DEFAULTS, name);
}

/** The gate `name` sets: ours, or the one a Koordinator alias stands for. */
function gateNamed(name: string): FeatureGate | undefined {
  if (isFeatureGate(name)) return name;
  return Object.hasOwn(KOORDINATOR_GATE_ALIASES, name)
    ? KOORDINATOR_GATE_ALIASES[name as keyof typeof KOORDINATOR_GATE_ALIASES]
    : undefined;
}

/** Parses `A=true,B=false`; throws with the offending entry and the known gates on bad input. */
export function parseFeatureGates(spec: string | undefined): FeatureGates {
  const gates: Record<FeatureGate, boolean> = { ...FEATURE_GATE_DEFAULTS };
  /** The name each gate was set by, to refuse two names of one gate set apart. */
  const setBy = new Map<FeatureGate, { name: string; on: boolean }>();
  for (const raw of (spec ?? '').split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const match = /^([A-Za-z0-9]+)=(true|false)$/.exec(entry);
    if (!match?.[1] || !match[2]) {
      throw new Error(`--feature-gates: "${entry}" is not of the form Name=true or Name=false`);
    }
    const name = match[1];
    const gate = gateNamed(name);
    if (gate === undefined) {
      throw new Error(
        `--feature-gates: unknown gate "${name}"; known gates: ${Object.keys(FEATURE_GATE_DEFAULTS).join(', ')}` +
          ` (and Koordinator's names ${Object.keys(KOORDINATOR_GATE_ALIASES).join(', ')})`,
      );
    }
    const on = match[2] === 'true';
    const earlier = setBy.get(gate);
    if (earlier && earlier.name !== name && earlier.on !== on) {
      throw new Error(
        `--feature-gates: ${earlier.name}=${String(earlier.on)} and ${name}=${String(on)} set the same gate (${gate}) apart`,
      );
    }
    setBy.set(gate, { name, on });
    gates[gate] = on;
  }
  return gates;
}
