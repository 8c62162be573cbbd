/**
 * Generated cluster states for the blast-radius property: namespaces with labels, quota trees
 * bound by name and by annotation, ClusterColocationProfiles (valid and broken), PriorityClasses,
 * ElasticQuotaProfiles, the pod-enhanced-validator-config, feature gates and enforcement. A state
 * is plain JSON (what a counterexample writes out) and is built into the webhook table and the
 * StateSnapshot the rules read, as the operator builds them.
 */
import {
  parseFeatureGates,
  FEATURE_GATE_DEFAULTS,
  type FeatureGate,
} from '../../../webhook/feature-gates.js';
import {
  ENFORCEMENT_ACTIONS,
  type Enforcement,
  type EnforcementAction,
} from '../../../webhook/enforcement/enforcement.js';
import type { JsonObject, JsonValue } from '../../../webhook/admission/types.js';
import { NAMESPACE_NAME_LABEL, POD_ENHANCED_VALIDATOR_CONFIG_NAME } from '../../../webhook/names.js';
import { quotaView } from '../../../webhook/rules/koordinator/quota/quota-view.js';
import { parseQuantity } from '../../../webhook/util/quantity.js';
import type { ReachState } from '../../../webhook/state.js';
import { enabledWebhooks, webhookShortNames, type WebhookEntry } from '../../../webhook/table.js';
import { stateSnapshot } from '../../harness/state.js';
import { asObject } from '../../../webhook/util/json.js';
import type { Rng } from '../prng.js';
import { putOwn } from '../prototype-keys.js';
import { fuzzTableContext, KOORDINATOR_NAMESPACE, OPERATOR_NAMESPACE, TIER_LABEL } from '../world.js';

const Q = (key: string): string => `quota.scheduling.koordinator.sh/${key}`;

/** Namespaces reviews are made in; the last is never in the state (a namespace the watch has not seen). */
export const NAMESPACES = [
  'default',
  'plain',
  'team-a',
  'team-b',
  'ml',
  'batch',
  'quota-a',
  'tree-x',
  KOORDINATOR_NAMESPACE,
  OPERATOR_NAMESPACE,
  'kube-system',
  // Names a plain object answers for (Object.prototype's): only names, wherever they are kept.
  'constructor',
  'prototype',
  'not-seen-yet',
];

export const NAMESPACE_LABELS: Readonly<Record<string, readonly string[]>> = {
  'enable-koordinator-colocation': ['true', 'false'],
  [TIER_LABEL]: ['gold', 'silver'],
  team: ['a', 'b'],
  env: ['prod', 'dev'],
  'koordinator.sh/enable-colocation': ['true'],
  constructor: ['a'],
  // Computed: a literal's `__proto__: value` would set the prototype instead.
  ['__proto__']: ['x'],
};

/** Pod labels with the values that matter to some rule, and a few that matter to none. */
export const POD_LABELS: Readonly<Record<string, readonly string[]>> = {
  app: ['web', 'db'],
  team: ['a', 'b'],
  env: ['prod'],
  'koordinator-colocation-pod': ['true', 'false'],
  'koordinator.sh/qosClass': ['BE', 'LS', 'LSR', 'LSE', 'SYSTEM', 'bogus'],
  'koordinator.sh/priority-class': ['koord-prod', 'koord-mid', 'koord-batch', 'koord-free', 'bogus'],
  'koordinator.sh/priority': ['1', '7', '1111'],
  [Q('preemptible')]: ['true', 'false'],
  'pod.koordinator.sh/skip-enhanced-validation': ['true', 'false'],
  'pod.koordinator.sh/mutating-update': ['true'],
  'workload.kubenexus.io/type': ['inference', 'training'],
  constructor: ['true'],
  hasOwnProperty: ['false'],
  ['__proto__']: ['x'],
};

/** A generated state, as JSON. */
export interface GeneratedState {
  /** --feature-gates text. */
  gates: string;
  /** Enforcement per webhook short name (deny for the others). */
  enforcement: Record<string, EnforcementAction>;
  namespaces: { name: string; labels: Record<string, string> }[];
  /** ElasticQuota objects as the API server stores them. */
  quotas: JsonObject[];
  /** What each quota's pods use, as quantities. */
  quotaUsed: Record<string, Record<string, string>>;
  profiles: { name: string; annotations: Record<string, string>; spec: JsonObject }[];
  priorityClasses: { name: string; value: number }[];
  quotaProfiles: { namespace: string; name: string; treeId: string; nodeSelector?: JsonObject }[];
  /** data of pod-enhanced-validator-config, when it exists. */
  enhancedConfig?: Record<string, string>;
  /** What the profiles' probability roll gives (0..99), fixed for a state so a case replays. */
  roll: number;
}

/** The table and state built from a generated state, as the operator builds them. */
export interface BuiltState {
  webhooks: WebhookEntry[];
  state: ReachState;
  enforcement: Enforcement;
  namespaceLabels: (name: string) => Readonly<Record<string, string>>;
}

function labelsFrom(
  rng: Rng,
  vocabulary: Readonly<Record<string, readonly string[]>>,
  count: number,
): Record<string, string> {
  const labels: Record<string, string> = {};
  const keys = Object.keys(vocabulary);
  for (let i = 0; i < count; i++) {
    const key = rng.pick(keys);
    putOwn(labels, key, rng.pick(vocabulary[key] ?? ['x']));
  }
  return labels;
}

/** A label selector, mostly valid, sometimes one the rules cannot parse or the API server would refuse. */
export function selector(
  rng: Rng,
  vocabulary: Readonly<Record<string, readonly string[]>>,
): JsonValue | undefined {
  const keys = Object.keys(vocabulary);
  const key = (): string => (rng.chance(0.05) ? 'bad key!' : rng.pick(keys));
  const value = (k: string): string =>
    rng.chance(0.03) ? 'not a label value!' : rng.pick(vocabulary[k] ?? ['x']);
  const roll = rng.int(20);
  if (roll === 0) return undefined;
  if (roll === 1) return {};
  if (roll === 2) return 'not a selector';
  if (roll === 3) return { matchExpressions: [{ key: key(), operator: 'Sometimes', values: ['x'] }] };
  if (roll === 4) return { matchExpressions: [{ key: key(), operator: 'In', values: [] }] };
  if (roll === 5) return { matchLabels: { [key()]: 7 } };
  const result: JsonObject = {};
  if (rng.chance(0.6)) {
    const k = key();
    result.matchLabels = {
      [k]: value(k),
      ...(rng.chance(0.2)
        ? (() => {
            const other = key();
            return { [other]: value(other) };
          })()
        : {}),
    };
  }
  if (rng.chance(0.5) || result.matchLabels === undefined) {
    const expressions: JsonValue[] = [];
    for (let i = rng.range(1, 2); i > 0; i--) {
      const k = key();
      const operator = rng.pick(['In', 'NotIn', 'Exists', 'DoesNotExist'] as const);
      const needsValues = operator === 'In' || operator === 'NotIn';
      expressions.push({
        key: k,
        operator,
        ...(needsValues ? { values: [...new Set([value(k), value(k)])] } : {}),
      });
    }
    result.matchExpressions = expressions;
  }
  return result;
}

function profile(
  rng: Rng,
  index: number,
  count: number,
  priorityClasses: string[],
): GeneratedState['profiles'][number] {
  const spec: JsonObject = {};
  // Among many profiles, valid selectors only: one that does not parse sends every pod, which
  // would leave the bounds on many selectors untested.
  const many = count >= 40;
  const namespaceSelector = many
    ? rng.pick([undefined, { matchLabels: { team: rng.pick(['a', 'b']) } }])
    : rng.chance(0.7)
      ? selector(rng, NAMESPACE_LABELS)
      : undefined;
  // A selector of its own now and then: many such profiles make a condition past its bound.
  const podSelector =
    many || rng.chance(0.85)
      ? many || rng.chance(0.3)
        ? {
            matchLabels: { app: `app-${index}` },
            ...(rng.chance(0.5)
              ? { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['dev'] }] }
              : {}),
          }
        : selector(rng, POD_LABELS)
      : undefined;
  if (namespaceSelector !== undefined) spec.namespaceSelector = namespaceSelector;
  if (podSelector !== undefined) spec.selector = podSelector;
  if (rng.chance(0.5)) spec.labels = { [`profile-${index}`]: 'applied' };
  if (rng.chance(0.3)) spec.annotations = { [`profile-${index}`]: 'applied' };
  if (rng.chance(0.5)) spec.qosClass = rng.pick(['BE', 'LS', 'LSR', 'bogus']);
  if (rng.chance(0.4)) spec.priorityClassName = rng.pick([...priorityClasses, 'missing-class']);
  if (rng.chance(0.3)) spec.koordinatorPriority = rng.pick<JsonValue>([7, 1111, 'x']);
  if (rng.chance(0.3)) spec.schedulerName = 'koord-scheduler';
  if (rng.chance(0.2)) spec.probability = rng.pick<JsonValue>([0, 100, '50%', 'often', -5]);
  if (rng.chance(0.2)) {
    spec.patch = rng.pick<JsonValue>([
      { metadata: { labels: { patched: 'yes' } } },
      { spec: { tolerations: [{ key: 'batch', operator: 'Exists' }] } },
      'not a patch',
    ]);
  }
  const annotations: Record<string, string> = {};
  if (rng.chance(0.15)) annotations['config.koordinator.sh/skip-update-resources'] = 'true';
  return { name: `profile-${String(index).padStart(2, '0')}`, annotations, spec };
}

function quota(rng: Rng, name: string, namespace: string, names: string[]): JsonObject {
  const labels: Record<string, string> = {};
  const annotations: Record<string, string> = {};
  if (rng.chance(0.25)) labels[Q('is-parent')] = 'true';
  if (rng.chance(0.3)) labels[Q('parent')] = rng.pick(names);
  if (rng.chance(0.3)) labels[Q('tree-id')] = rng.pick(['t1', 't2']);
  if (rng.chance(0.3))
    annotations[Q('namespaces')] = JSON.stringify([rng.pick(NAMESPACES), rng.pick(NAMESPACES)]);
  if (rng.chance(0.05)) annotations[Q('namespaces')] = 'not json';
  if (rng.chance(0.2)) annotations[Q('admission')] = rng.pick(['{"cpu":"2"}', '{"cpu":"x"}', '{}']);
  const max: Record<string, string> = {};
  for (const key of [
    'cpu',
    'memory',
    'nvidia.com/gpu',
    'pods',
    'example.com/widgets',
    'toString',
    '__proto__',
  ]) {
    if (rng.chance(key.startsWith('_') || key === 'toString' ? 0.05 : 0.4))
      putOwn(max, key, rng.pick(['1', '4', '8Gi', '100']));
  }
  return {
    apiVersion: 'scheduling.sigs.k8s.io/v1alpha1',
    kind: 'ElasticQuota',
    metadata: { name, namespace, labels, annotations },
    spec: { max, min: { cpu: '1' } },
  };
}

/** A state drawn from `rng`. */
export function generateState(rng: Rng): GeneratedState {
  // The webhook gates (…Webhook) rarely off: a state without the pod webhooks checks little.
  const gates = (Object.keys(FEATURE_GATE_DEFAULTS) as FeatureGate[])
    .filter((gate) => rng.chance(gate.endsWith('Webhook') ? 0.05 : 0.35))
    .map((gate) => `${gate}=${rng.chance(0.5) ? 'true' : 'false'}`)
    .join(',');
  const enforcement: Record<string, EnforcementAction> = {};
  for (const name of ['mutate-pod', 'validate-pod', 'mutate-pod-gpu-class']) {
    if (rng.chance(0.2)) enforcement[name] = rng.pick(ENFORCEMENT_ACTIONS);
  }
  const namespaces = NAMESPACES.slice(0, -1)
    .filter((name) => name === 'default' || rng.chance(0.9))
    .map((name) => ({
      name,
      labels: { ...labelsFrom(rng, NAMESPACE_LABELS, rng.int(3)), [NAMESPACE_NAME_LABEL]: name },
    }));
  const priorityClasses = [
    { name: 'koord-batch', value: 5500 },
    { name: 'koord-prod', value: 9500 },
    { name: 'plain-high', value: 100_000 },
  ];
  const quotaNames = [
    'quota-a',
    'tree-x',
    'team-a',
    'shared',
    'leaf',
    'koordinator-root-quota',
    'koordinator-default-quota',
    'constructor',
    'prototype',
  ];
  const quotas: JsonObject[] = [];
  for (const name of quotaNames) {
    if (!rng.chance(0.4)) continue;
    // Mostly in the namespace of its name (Koordinator's namespace quota), sometimes elsewhere.
    const namespace = NAMESPACES.includes(name) && rng.chance(0.7) ? name : rng.pick(NAMESPACES);
    quotas.push(quota(rng, name, namespace, quotaNames));
  }
  if (rng.chance(0.05)) {
    // A quota binding more namespaces than a condition lists: they go into a namespace selector.
    const bound = [...Array.from({ length: 300 }, (_, i) => `bound-${i}`), rng.pick(NAMESPACES)];
    const wide = quota(rng, 'wide', rng.pick(NAMESPACES), quotaNames);
    (asObject(wide.metadata)?.annotations as JsonObject)[Q('namespaces')] = JSON.stringify(bound);
    quotas.push(wide);
  }
  const quotaUsed: GeneratedState['quotaUsed'] = {};
  for (const name of quotaNames)
    if (rng.chance(0.3)) quotaUsed[name] = { cpu: rng.pick(['0', '1', '3', '8']) };
  // Now and then many: more namespace groups than a path has entries for, conditions past their bound.
  const profileCount = rng.chance(0.03) ? rng.pick([12, 40, 200]) : rng.pick([0, 0, 1, 2, 3, 5]);
  const profiles = Array.from({ length: profileCount }, (_, index) =>
    profile(
      rng,
      index,
      profileCount,
      priorityClasses.map((pc) => pc.name),
    ),
  );
  const quotaProfiles: GeneratedState['quotaProfiles'] = [];
  for (const treeId of ['t1', 't2']) {
    if (!rng.chance(0.5)) continue;
    quotaProfiles.push({
      namespace: 'quotas',
      name: `profile-${treeId}`,
      treeId,
      ...(rng.chance(0.8) ? { nodeSelector: { matchLabels: { pool: treeId } } } : {}),
    });
  }
  const enhancedRoll = rng.int(6);
  const enhancedConfig =
    enhancedRoll === 0
      ? undefined
      : enhancedRoll === 1
        ? { enable: 'false', rules: '[]' }
        : enhancedRoll === 2
          ? { enable: 'true', rules: 'not json' }
          : {
              enable: rng.pick(['true', ' True ']),
              rules: JSON.stringify(
                Array.from({ length: rng.range(1, 2) }, (_, index) => ({
                  name: `rule-${index}`,
                  requiredLabels: [rng.pick(['team', 'app', 'env', 'bad key!'])],
                  namespaceWhitelist: [
                    rng.pick(NAMESPACES),
                    rng.pick(['', 'kube-public', 'Not A Namespace']),
                  ],
                })),
              ),
            };
  return {
    gates,
    enforcement,
    namespaces,
    quotas,
    quotaUsed,
    profiles,
    priorityClasses,
    quotaProfiles,
    ...(enhancedConfig ? { enhancedConfig } : {}),
    roll: rng.int(100),
  };
}

/** The table (the fuzz world's context with this state's gates) and the state the rules read. */
export function buildState(generated: GeneratedState): BuiltState {
  const context = {
    ...fuzzTableContext(),
    gates: parseFeatureGates(generated.gates),
    roll: () => generated.roll,
  };
  const state = stateSnapshot({
    namespaces: generated.namespaces,
    elasticQuotas: generated.quotas.map((object) => quotaView(object)),
    quotaUsed: Object.fromEntries(
      Object.entries(generated.quotaUsed).map(([name, used]) => [
        name,
        Object.fromEntries(Object.entries(used).map(([key, text]) => [key, parseQuantity(text)])),
      ]),
    ),
    colocationProfiles: generated.profiles,
    priorityClasses: generated.priorityClasses,
    elasticQuotaProfiles: generated.quotaProfiles,
    configMaps: generated.enhancedConfig
      ? [
          {
            namespace: KOORDINATOR_NAMESPACE,
            name: POD_ENHANCED_VALIDATOR_CONFIG_NAME,
            uid: 'pev',
            resourceVersion: '1',
            data: generated.enhancedConfig,
          },
        ]
      : [],
  });
  const known = new Set(webhookShortNames());
  const byWebhook = new Map(Object.entries(generated.enforcement).filter(([name]) => known.has(name)));
  return {
    webhooks: enabledWebhooks(context),
    state,
    enforcement: { byWebhook, fallback: 'deny' },
    // As the API server reads a namespace's labels (and the chain does: its name only, when unknown).
    namespaceLabels: (name) => state.namespace(name)?.labels ?? { [NAMESPACE_NAME_LABEL]: name },
  };
}
