/**
 * The one table of webhooks. It drives both the admission server's routes and the
 * MutatingWebhookConfiguration / ValidatingWebhookConfiguration the operator writes:
 * nothing about a webhook is declared anywhere else.
 */
import { randomInt } from 'node:crypto';
import type { V1LabelSelector, V1LabelSelectorRequirement, V1MatchCondition } from '@kubernetes/client-node';
import {
  parseFeatureGates,
  replaceResourcesCounted,
  type FeatureGate,
  type FeatureGates,
} from './feature-gates.js';
import { KINDS, type KindDefinition, type Scope } from './kinds.js';
import { NAMESPACE_NAME_LABEL } from './names.js';
import { assignGpuClass } from './rules/kubenexus/assign-gpu-class.js';
import {
  mutateModelBooster,
  mutateWorkloadAutoscalingPolicy,
  validateModelBooster,
  validateModelRoute,
  validateModelServer,
  validateModelServing,
  validateWorkloadAutoscalingPolicy,
} from './rules/kthena/index.js';
import { configMapValidator } from './rules/admission-operator/validate-configmap.js';
import { amplifyNodeStatus } from './rules/koordinator/node/amplify-node-status.js';
import { nodeValidator } from './rules/koordinator/node/validate-node.js';
import { reservationMutator } from './rules/koordinator/reservation/mutate-reservation.js';
import { podMutator } from './rules/koordinator/pod/mutate-pod.js';
import { COLOCATION_STEP, podValidator } from './rules/koordinator/pod/validate-pod.js';
import { defaultElasticQuota } from './rules/koordinator/quota/default-quota.js';
import { elasticQuotaValidator } from './rules/koordinator/quota/validate-quota.js';
import type { ReachState, Rule } from './state.js';
import type { Operation } from './admission/types.js';
import { containersRequestAny } from './narrowing/cel-text.js';
import type { Reach } from './narrowing/reach.js';
import { podMutatorReach } from './rules/koordinator/pod/mutate-pod-reach.js';
import { podValidatorReach } from './rules/koordinator/pod/validate-pod-reach.js';
import { podResizeReach } from './rules/koordinator/pod/validate-pod-resize-reach.js';
import { podResizeValidator, RESIZE_SUBRESOURCE } from './rules/koordinator/quota/pod-resize-quota.js';

export type WebhookType = 'mutating' | 'validating';
export type FailurePolicy = 'Fail' | 'Ignore';
export type { Scope } from './kinds.js';

export interface ResourceRule {
  apiGroups: string[];
  apiVersions: string[];
  /** Plural resource names, with subresources as `nodes/status`. */
  resources: string[];
  operations: ('CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT')[];
  scope: Scope;
}

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
export interface TableContext {
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
  gates: FeatureGates;
  /** The largest node resource-amplification ratio /validate-node accepts (default 10). */
  maxAmplificationRatio?: number;
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
/** Koordinator's opt-in label for pod UPDATE mutation. */
const MUTATING_UPDATE_LABEL = 'pod.koordinator.sh/mutating-update';

/** What the API server sends for `kind` (or its `subresource`) on these operations. */
const matching = (
  kind: KindDefinition,
  operations: ResourceRule['operations'],
  subresource?: string,
): ResourceRule => ({
  apiGroups: [kind.group],
  apiVersions: [kind.version],
  resources: [subresource === undefined ? kind.plural : `${kind.plural}/${subresource}`],
  operations,
  scope: kind.scope,
});

/**
 * CEL: a CREATE or UPDATE of one of `configMaps`. DELETE stays in the resource rules (as Koordinator
 * registers it) but is always allowed, so it never needs a call: a stopped operator must not
 * block deleting its own ConfigMaps (an uninstall does that).
 */
function isWriteOfConfigMaps(configMaps: TableContext['configMaps']): string {
  const pairs = configMaps.map(
    // request.name and request.namespace always exist; object.metadata.name does not under generateName,
    // and an expression that errors would fail the request under failurePolicy Fail.
    ({ namespace, name }) => `(request.namespace == '${namespace}' && request.name == '${name}')`,
  );
  return `request.operation != 'DELETE' && (${pairs.length > 0 ? pairs.join(' || ') : 'false'})`;
}

type EntryDraft = Omit<WebhookEntry, 'namespaceSelector' | 'objectSelector' | 'matchConditions'> &
  Partial<Pick<WebhookEntry, 'namespaceSelector' | 'objectSelector' | 'matchConditions'>> & {
    /**
     * Set on a failurePolicy=Fail webhook that must see objects in the operator's own
     * namespace (its own configuration); it stays narrowed to those objects by matchConditions.
     */
    watchesOwnNamespace?: boolean;
  };

/** Every webhook the operator can serve, before feature gates. */
export function webhookTable(context: TableContext): WebhookEntry[] {
  const roll = context.roll ?? ((): number => randomInt(100));
  const maxRatio = context.maxAmplificationRatio ?? DEFAULT_MAX_AMPLIFICATION_RATIO;
  const podMutation = {
    roll,
    skipMutatingResources: context.gates.ColocationProfileSkipMutatingResources,
    skipExtendedResourceSpec: context.gates.DisableExtendedResourceSpec,
    multiQuotaTree: context.gates.MultiQuotaTree,
    skipDeviceResourceSpec: context.gates.DisableDeviceResourceSpec,
  };
  const podValidation = {
    skipValidatingPriority: context.gates.ColocationProfileSkipValidatingPriority,
    quotaAdmission: context.gates.EnableQuotaAdmission,
    quotaAdmissionOnUpdate: context.gates.EnableQuotaAdmissionOnUpdate,
    replaceResources: replaceResourcesCounted(context.gates),
    validateDeviceRequests: context.gates.ValidatePodDeviceResource,
    enhancedValidation: context.gates.EnablePodEnhancedValidator,
    enhancedValidationNamespace: context.koordinatorNamespace,
  };
  const drafts: EntryDraft[] = [
    // Koordinator: pods, nodes, quotas, reservations, the SLO ConfigMap.
    {
      name: `mutate-pod.${NAME_SUFFIX}`,
      path: '/mutate-pod',
      type: 'mutating',
      resourceRules: [matching(KINDS.pod, ['CREATE', 'UPDATE'])],
      failurePolicy: 'Fail',
      timeoutSeconds: 10,
      // Koordinator registers UPDATE only for pods that opt in with this label (its objectSelector);
      // a matchCondition says the same in one entry, so other pod updates never wait on us.
      matchConditions: [
        {
          name: 'create-or-opted-in-update',
          expression:
            "request.operation == 'CREATE' || (has(object.metadata.labels) && " +
            `'${MUTATING_UPDATE_LABEL}' in object.metadata.labels && ` +
            `object.metadata.labels['${MUTATING_UPDATE_LABEL}'] == 'true')`,
        },
      ],
      matchConditionsHoldOn: ['CREATE'],
      reinvocationPolicy: 'Never',
      featureGate: 'PodMutatingWebhook',
      handler: podMutator(podMutation),
      reach: podMutatorReach(podMutation),
    },
    {
      name: `mutate-node-status.${NAME_SUFFIX}`,
      path: '/mutate-node-status',
      type: 'mutating',
      resourceRules: [matching(KINDS.node, ['CREATE', 'UPDATE'], 'status')],
      failurePolicy: 'Ignore',
      timeoutSeconds: 10,
      reinvocationPolicy: 'Never',
      featureGate: 'NodeStatusMutatingWebhook',
      handler: amplifyNodeStatus,
    },
    {
      name: `mutate-elasticquota.${NAME_SUFFIX}`,
      path: '/mutate-scheduling-sigs-k8s-io-v1alpha1-elasticquota',
      type: 'mutating',
      resourceRules: [matching(KINDS.elasticQuota, ['CREATE'])],
      failurePolicy: 'Fail',
      timeoutSeconds: 10,
      reinvocationPolicy: 'Never',
      featureGate: 'ElasticQuotaMutatingWebhook',
      handler: defaultElasticQuota,
    },
    {
      name: `mutate-reservation.${NAME_SUFFIX}`,
      path: '/mutate-reservation',
      type: 'mutating',
      resourceRules: [matching(KINDS.reservation, ['CREATE'])],
      failurePolicy: 'Fail',
      timeoutSeconds: 10,
      reinvocationPolicy: 'Never',
      featureGate: 'ReservationMutatingWebhook',
      handler: reservationMutator(roll),
    },
    {
      name: `validate-pod.${NAME_SUFFIX}`,
      path: '/validate-pod',
      type: 'validating',
      resourceRules: [matching(KINDS.pod, ['CREATE', 'UPDATE'])],
      failurePolicy: 'Fail',
      timeoutSeconds: 10,
      featureGate: 'PodValidatingWebhook',
      steps: [COLOCATION_STEP],
      handler: podValidator(podValidation),
      reach: podValidatorReach(podValidation),
    },
    {
      // Ours, not Koordinator's: quota admission for in-place resizes (Kubernetes 1.33 on; an API
      // server without the subresource never sends one). Off with /validate-pod's gate.
      name: `validate-pod-resize.${NAME_SUFFIX}`,
      path: '/validate-pod-resize',
      type: 'validating',
      resourceRules: [matching(KINDS.pod, ['UPDATE'], RESIZE_SUBRESOURCE)],
      failurePolicy: 'Fail',
      timeoutSeconds: 10,
      featureGate: 'PodValidatingWebhook',
      handler: podResizeValidator(podValidation),
      reach: podResizeReach(podValidation),
    },
    {
      name: `validate-node.${NAME_SUFFIX}`,
      path: '/validate-node',
      type: 'validating',
      resourceRules: [matching(KINDS.node, ['CREATE', 'UPDATE'])],
      failurePolicy: 'Ignore',
      timeoutSeconds: 10,
      featureGate: 'NodeValidatingWebhook',
      handler: nodeValidator({ maxRatio, sloConfigNamespace: context.koordinatorNamespace }),
    },
    {
      name: `validate-elasticquota.${NAME_SUFFIX}`,
      path: '/validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota',
      type: 'validating',
      resourceRules: [matching(KINDS.elasticQuota, ['CREATE', 'UPDATE', 'DELETE'])],
      failurePolicy: 'Fail',
      timeoutSeconds: 10,
      featureGate: 'ElasticQuotaValidatingWebhook',
      handler: elasticQuotaValidator({ maxKeysSubset: context.gates.ElasticQuotaEnableUpdateResourceKey }),
    },
    {
      name: `validate-configmap.${NAME_SUFFIX}`,
      path: '/validate-configmap',
      type: 'validating',
      resourceRules: [matching(KINDS.configMap, ['CREATE', 'UPDATE', 'DELETE'])],
      failurePolicy: 'Fail',
      timeoutSeconds: 10,
      matchConditions: [{ name: 'managed-configmaps', expression: isWriteOfConfigMaps(context.configMaps) }],
      watchesOwnNamespace: true,
      featureGate: 'ConfigMapValidatingWebhook',
      handler: configMapValidator({
        operatorNamespace: context.namespace,
        koordinatorNamespace: context.koordinatorNamespace,
        maxAmplificationRatio: maxRatio,
        webhookNames: enforceableNames,
      }),
    },
    // KubeNexus: tenant tier -> GPU class.
    {
      name: `mutate-pod-gpu-class.${NAME_SUFFIX}`,
      path: '/mutate-pod-gpu-class',
      type: 'mutating',
      resourceRules: [matching(KINDS.pod, ['CREATE'])],
      failurePolicy: 'Ignore',
      timeoutSeconds: 5,
      namespaceSelector: { matchExpressions: [{ key: context.tierLabelKey, operator: 'Exists' }] },
      matchConditions: [
        {
          name: 'requests-gpu',
          expression: containersRequestAny(context.gpuResourceNames, { guarded: false, limits: true }),
        },
      ],
      reinvocationPolicy: 'Never',
      featureGate: 'GpuClassMutatingWebhook',
      handler: assignGpuClass,
    },
    // Kthena v1.0.0, as its charts register them: failurePolicy Fail, 30 s, CREATE and UPDATE.
    {
      name: `mutate-modelbooster.${NAME_SUFFIX}`,
      path: '/mutate/modelbooster',
      type: 'mutating',
      resourceRules: [matching(KINDS.modelBooster, ['CREATE', 'UPDATE'])],
      failurePolicy: 'Fail',
      timeoutSeconds: 30,
      reinvocationPolicy: 'IfNeeded',
      featureGate: 'ModelBoosterMutatingWebhook',
      handler: mutateModelBooster,
    },
    {
      name: `mutate-autoscalingpolicy.${NAME_SUFFIX}`,
      path: '/mutate/autoscalingpolicy',
      type: 'mutating',
      resourceRules: [matching(KINDS.autoscalingPolicy, ['CREATE', 'UPDATE'])],
      failurePolicy: 'Fail',
      timeoutSeconds: 30,
      reinvocationPolicy: 'IfNeeded',
      featureGate: 'AutoscalingPolicyMutatingWebhook',
      handler: mutateWorkloadAutoscalingPolicy,
    },
    {
      name: `validate-modelbooster.${NAME_SUFFIX}`,
      path: '/validate/modelbooster',
      type: 'validating',
      resourceRules: [matching(KINDS.modelBooster, ['CREATE', 'UPDATE'])],
      failurePolicy: 'Fail',
      timeoutSeconds: 30,
      featureGate: 'ModelBoosterValidatingWebhook',
      handler: validateModelBooster,
    },
    {
      name: `validate-autoscalingpolicy.${NAME_SUFFIX}`,
      path: '/validate/autoscalingpolicy',
      type: 'validating',
      resourceRules: [matching(KINDS.autoscalingPolicy, ['CREATE', 'UPDATE'])],
      failurePolicy: 'Fail',
      timeoutSeconds: 30,
      featureGate: 'AutoscalingPolicyValidatingWebhook',
      handler: validateWorkloadAutoscalingPolicy,
    },
    {
      name: `validate-modelserving.${NAME_SUFFIX}`,
      path: '/validate-workload-ai-v1alpha1-modelserving',
      type: 'validating',
      resourceRules: [matching(KINDS.modelServing, ['CREATE', 'UPDATE'])],
      failurePolicy: 'Fail',
      timeoutSeconds: 30,
      featureGate: 'ModelServingValidatingWebhook',
      handler: validateModelServing,
    },
    {
      name: `validate-modelroute.${NAME_SUFFIX}`,
      path: '/validate/modelroute',
      type: 'validating',
      resourceRules: [matching(KINDS.modelRoute, ['CREATE', 'UPDATE'])],
      failurePolicy: 'Fail',
      timeoutSeconds: 30,
      featureGate: 'ModelRouteValidatingWebhook',
      handler: validateModelRoute,
    },
    {
      name: `validate-modelserver.${NAME_SUFFIX}`,
      path: '/validate/modelserver',
      type: 'validating',
      resourceRules: [matching(KINDS.modelServer, ['CREATE', 'UPDATE'])],
      failurePolicy: 'Fail',
      timeoutSeconds: 30,
      featureGate: 'ModelServerValidatingWebhook',
      handler: validateModelServer,
    },
  ];
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
    const other = a.matchLabels?.[key];
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
