/**
 * The one table of webhooks. It drives both the admission server's routes and the
 * MutatingWebhookConfiguration / ValidatingWebhookConfiguration the operator writes. Each
 * webhook is a folder under webhook/webhooks/ (listed in its index.ts) declaring its facts and
 * how its handler is built; this file turns them into entries, adding what every webhook shares:
 * the name suffix, overrides, and the namespace exclusions of failurePolicy=Fail webhooks.
 */
import { randomInt } from 'node:crypto';
import type { V1LabelSelector, V1LabelSelectorRequirement, V1MatchCondition } from '@kubernetes/client-node';
import { parseFeatureGates, type FeatureGate, type FeatureGates } from './feature-gates.js';
import { NAMESPACE_NAME_LABEL } from './names.js';
import { own } from './util/own.js';
import type { Operation } from './admission/types.js';
import type { Reach } from './narrowing/reach.js';
import type { ReachState, Rule } from './state.js';
import type {
  BuildContext,
  FailurePolicy,
  ResourceRule,
  WebhookContext,
  WebhookDefinition,
  WebhookType,
} from './webhooks/define.js';
import { WEBHOOKS } from './webhooks/index.js';

export type { Scope } from './kinds.js';
export type { FailurePolicy, ResourceRule, WebhookType } from './webhooks/define.js';

export interface WebhookEntry {
  /** The webhook's name inside its configuration (a qualified DNS-style name). */
  name: string;
  path: string;
  type: WebhookType;
  /** What the API server sends to this webhook: groups, versions, resources, operations, scope. */
  resourceRules: ResourceRule[];
  failurePolicy: FailurePolicy;
  timeoutSeconds: number;
  namespaceSelector: V1LabelSelector;
  objectSelector: V1LabelSelector;
  matchConditions: V1MatchCondition[];
  /**
   * Operations on which every one of `matchConditions` holds: an entry narrowed to these
   * operations only (webhook/narrowing/) leaves them out.
   */
  matchConditionsHoldOn?: readonly Operation[];
  /** Mutating webhooks only. */
  reinvocationPolicy?: 'Never' | 'IfNeeded';
  featureGate: FeatureGate;
  /**
   * Steps of the rule an admin may enforce apart from the webhook, named `<webhook>/<step>` in the
   * enforcement (the rule marks their refusals with `Decision.step`).
   */
  steps?: readonly string[];
  handler: Rule;
  /**
   * What the webhook could act on given the state (webhook/narrowing/): when set, the operator
   * writes the entry narrowed to it, so reviews it could not act on are never sent.
   */
  reach?: (state: ReachState) => Reach;
}

/** What the table's selectors and conditions depend on. */
export interface TableContext extends Omit<WebhookContext, 'gates'> {
  /** Webhook and rule gates. */
  gates: FeatureGates;
  /** Per-webhook failure policy and timeout, keyed by the name before `.admission-operator.io`. */
  overrides?: Readonly<Record<string, WebhookOverride>>;
  /**
   * The admin's own exclusions, ANDed into every failurePolicy=Fail webhook on namespaced objects:
   * only namespaces (objects) these select are ever sent to it.
   */
  namespaceSelector?: V1LabelSelector;
  objectSelector?: V1LabelSelector;
}

export interface WebhookOverride {
  failurePolicy?: FailurePolicy;
  timeoutSeconds?: number;
}

const NAME_SUFFIX = 'admission-operator.io';
const DEFAULT_MAX_AMPLIFICATION_RATIO = 10;

type EntryDraft = Omit<WebhookEntry, 'namespaceSelector' | 'objectSelector' | 'matchConditions'> &
  Partial<Pick<WebhookEntry, 'namespaceSelector' | 'objectSelector' | 'matchConditions'>> & {
    /** See WebhookDefinition.watchesOwnNamespace. */
    watchesOwnNamespace?: boolean;
  };

/** A folder's webhook as a draft entry: its facts, and what it builds from the context. */
function draftOf(definition: WebhookDefinition, context: BuildContext): EntryDraft {
  const { name, docs: _docs, build, featureGate, resourceRules, ...facts } = definition;
  return {
    name: `${name}.${NAME_SUFFIX}`,
    ...facts,
    // Each table its own copy: the folder's rules are shared by every table built.
    resourceRules: structuredClone(resourceRules),
    featureGate: featureGate as FeatureGate,
    ...build(context),
  };
}

/** Every webhook the operator can serve, before feature gates. */
export function webhookTable(context: TableContext): WebhookEntry[] {
  const build: BuildContext = {
    ...context,
    roll: context.roll ?? ((): number => randomInt(100)),
    maxAmplificationRatio: context.maxAmplificationRatio ?? DEFAULT_MAX_AMPLIFICATION_RATIO,
    enforceableNames,
  };
  const drafts = WEBHOOKS.map((definition) => draftOf(definition, build));
  const overrides = context.overrides ?? {};
  const known = new Set(drafts.map((draft) => shortName(draft.name)));
  const unknown = Object.keys(overrides).filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw new Error(
      `webhook overrides name unknown webhooks: ${unknown.join(', ')}; known: ${[...known].sort().join(', ')}`,
    );
  }
  // Overrides apply before finish(), so a webhook turned to Fail gets the namespace exclusions too.
  return drafts.map((draft) => finish({ ...draft, ...overrides[shortName(draft.name)] }, context));
}

/** A webhook as the chart and its documentation name it. */
export interface WebhookSummary {
  shortName: string;
  type: WebhookType;
  featureGate: FeatureGate;
  /** Its steps enforced apart from it, as the enforcement names them (`validate-pod/colocation`). */
  steps: readonly string[];
}

let catalogue: readonly WebhookSummary[] | undefined;
let shortNames: readonly string[] | undefined;

/** Every webhook (gated or not) with its type and the gate that serves it. */
export function webhookCatalogue(): readonly WebhookSummary[] {
  catalogue ??= webhookTable({
    namespace: 'admission-system',
    excludedNamespaces: [],
    tierLabelKey: 'tier',
    gpuResourceNames: [],
    configMaps: [],
    koordinatorNamespace: 'koordinator-system',
    gates: parseFeatureGates(''),
  }).map((entry) => ({
    shortName: shortName(entry.name),
    type: entry.type,
    featureGate: entry.featureGate,
    steps: (entry.steps ?? []).map((step) => `${shortName(entry.name)}/${step}`),
  }));
  return catalogue;
}

/** The names overrides and enforcement may use (every webhook, gated or not). */
export function webhookShortNames(): readonly string[] {
  shortNames ??= webhookCatalogue().map((entry) => entry.shortName);
  return shortNames;
}

let enforceable: readonly string[] | undefined;

/** What an enforcement may name: every webhook, then every step enforced apart from its webhook. */
export function enforceableNames(): readonly string[] {
  enforceable ??= [...webhookShortNames(), ...webhookCatalogue().flatMap((entry) => entry.steps)];
  return enforceable;
}

/** A webhook's name without the common suffix: what overrides are keyed by. */
export function shortName(name: string): string {
  return name.endsWith(`.${NAME_SUFFIX}`) ? name.slice(0, -NAME_SUFFIX.length - 1) : name;
}

/**
 * A failurePolicy=Fail webhook on namespaced objects must never block kube-system or the
 * operator's own namespace: otherwise a stopped operator could not be restarted.
 */
function finish({ watchesOwnNamespace, ...draft }: EntryDraft, context: TableContext): WebhookEntry {
  const namespaced = draft.resourceRules.some((rule) => rule.scope === 'Namespaced');
  let namespaceSelector: V1LabelSelector = { ...(draft.namespaceSelector ?? {}) };
  let objectSelector: V1LabelSelector = { ...(draft.objectSelector ?? {}) };
  if (draft.failurePolicy === 'Fail' && namespaced) {
    const excluded = new Set(['kube-system', ...context.excludedNamespaces]);
    if (!watchesOwnNamespace) excluded.add(context.namespace);
    const exclusion: V1LabelSelectorRequirement = {
      key: NAMESPACE_NAME_LABEL,
      operator: 'NotIn',
      values: [...excluded].sort(),
    };
    namespaceSelector = bothSelect(namespaceSelector, {
      ...context.namespaceSelector,
      matchExpressions: [exclusion, ...(context.namespaceSelector?.matchExpressions ?? [])],
    });
    if (context.objectSelector) objectSelector = bothSelect(objectSelector, context.objectSelector);
  }
  return {
    ...draft,
    namespaceSelector,
    objectSelector,
    matchConditions: draft.matchConditions ?? [],
  };
}

/** A selector matching what both match: their requirements together. */
function bothSelect(a: V1LabelSelector, b: V1LabelSelector): V1LabelSelector {
  const matchLabels = { ...(a.matchLabels ?? {}), ...(b.matchLabels ?? {}) };
  const matchExpressions = [...(a.matchExpressions ?? []), ...(b.matchExpressions ?? [])];
  // A key both set to different values can match nothing: kept as two requirements that say so.
  for (const [key, value] of Object.entries(b.matchLabels ?? {})) {
    const other = own(a.matchLabels, key);
    if (other !== undefined && other !== value)
      matchExpressions.push({ key, operator: 'In', values: [other] });
  }
  return {
    ...(Object.keys(matchLabels).length > 0 ? { matchLabels } : {}),
    ...(matchExpressions.length > 0 ? { matchExpressions } : {}),
  };
}

/** The webhooks whose feature gate is on: the only ones routed and written. */
export function enabledWebhooks(context: TableContext): WebhookEntry[] {
  return webhookTable(context).filter((entry) => context.gates[entry.featureGate]);
}
