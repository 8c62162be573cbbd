/**
 * What a webhook's folder declares: its facts (path, kinds, operations, failure policy, timeout,
 * gate, page) as data, and how its handler and selectors are built from the operator's context.
 * The table (webhook/table.ts) turns the folders listed in ./index.ts into entries; the chart
 * schema, the rules table of docs/rules/README.md and each page's header are generated from the
 * same facts (`npm run chart:generate`).
 */
import type { V1LabelSelector, V1MatchCondition } from '@kubernetes/client-node';
import type { Operation } from '../admission/types.js';
import type { RuleGates } from '../rule-gates.js';
import type { KindDefinition, Scope } from '../kinds.js';
import type { Reach } from '../narrowing/reach.js';
import type { ReachState, Rule } from '../state.js';

export type WebhookType = 'mutating' | 'validating';
export type FailurePolicy = 'Fail' | 'Ignore';

export interface ResourceRule {
  apiGroups: string[];
  apiVersions: string[];
  /** Plural resource names, with subresources as `nodes/status`. */
  resources: string[];
  operations: ('CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT')[];
  scope: Scope;
}

/** What the operator's configuration gives every webhook to build itself from. */
export interface WebhookContext {
  /** The operator's own namespace. */
  namespace: string;
  /** Namespaces no failurePolicy=Fail webhook may block (kube-system and the operator's own are always added). */
  excludedNamespaces: readonly string[];
  /** The namespace label that names a tenant's tier (the GPU-class webhook only sees labelled namespaces). */
  tierLabelKey: string;
  /** GPU resource names whose request sends a pod to the GPU-class webhook. */
  gpuResourceNames: readonly string[];
  /** ConfigMaps the ConfigMap webhook validates. */
  configMaps: readonly { namespace: string; name: string }[];
  /** Where Koordinator's ConfigMaps live (slo-controller-config, pod-enhanced-validator-config). */
  koordinatorNamespace: string;
  /** A uniform integer in 0..99 for ClusterColocationProfile probabilities; random unless a test fixes it. */
  roll?: () => number;
  /** Rule-level gates (quota admission). */
  gates: RuleGates;
  /** The largest node resource-amplification ratio /validate-node accepts (default 10). */
  maxAmplificationRatio?: number;
}

/** The context a folder's `build` receives: the operator's, and what the table knows of all webhooks. */
export interface BuildContext extends WebhookContext {
  roll: () => number;
  maxAmplificationRatio: number;
  /** What an enforcement may name: every webhook, then every step enforced apart from its webhook. */
  enforceableNames: () => readonly string[];
}

/** The parts of an entry that depend on the context. */
export interface BuiltWebhook {
  handler: Rule;
  /**
   * What the webhook could act on given the state (webhook/narrowing/): when set, the operator
   * writes the entry narrowed to it, so reviews it could not act on are never sent.
   */
  reach?: (state: ReachState) => Reach;
  namespaceSelector?: V1LabelSelector;
  objectSelector?: V1LabelSelector;
  matchConditions?: V1MatchCondition[];
}

/** How the generated rules table describes a webhook beyond its facts. */
export interface WebhookDocs {
  /** Its page, a file under docs/rules/. */
  page: string;
  /** The entry function's file under webhook/ (the page and the rules table link it). */
  entryPoint: string;
  /** Said after the kind and operations in the rules table, e.g. `(opted in)`. */
  note?: string;
  /** The files of the checks it calls, for the rules table's last column (Markdown). */
  checks: string;
}

export interface WebhookDefinition<Gate extends string = string> {
  /** The name before `.admission-operator.io`: what overrides and enforcement use, and the folder's name. */
  name: string;
  path: string;
  type: WebhookType;
  /** What the API server sends to this webhook: groups, versions, resources, operations, scope. */
  resourceRules: ResourceRule[];
  failurePolicy: FailurePolicy;
  timeoutSeconds: number;
  /** Mutating webhooks only. */
  reinvocationPolicy?: 'Never' | 'IfNeeded';
  /** The webhook's gate (on by default; several webhooks may share one). */
  featureGate: Gate;
  /**
   * Operations on which every one of its matchConditions holds: an entry narrowed to these
   * operations only (webhook/narrowing/) leaves them out.
   */
  matchConditionsHoldOn?: readonly Operation[];
  /**
   * Set on a failurePolicy=Fail webhook that must see objects in the operator's own
   * namespace (its own configuration); it stays narrowed to those objects by matchConditions.
   */
  watchesOwnNamespace?: boolean;
  /**
   * Steps of the rule an admin may enforce apart from the webhook, named `<webhook>/<step>` in the
   * enforcement (the rule marks their refusals with `Decision.step`).
   */
  steps?: readonly string[];
  docs: WebhookDocs;
  build: (context: BuildContext) => BuiltWebhook;
}

/** Keeps the gate's name as a literal type, so the gates of every folder make up `FeatureGate`. */
export function defineWebhook<const Gate extends string>(
  definition: WebhookDefinition<Gate>,
): WebhookDefinition<Gate> {
  return definition;
}

/** What the API server sends for `kind` (or its `subresource`) on these operations. */
export function matching(
  kind: KindDefinition,
  operations: ResourceRule['operations'],
  subresource?: string,
): ResourceRule {
  return {
    apiGroups: [kind.group],
    apiVersions: [kind.version],
    resources: [subresource === undefined ? kind.plural : `${kind.plural}/${subresource}`],
    operations,
    scope: kind.scope,
  };
}
