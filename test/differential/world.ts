/**
 * A generated cluster state, as the Kubernetes objects both sides read: namespaces, priority
 * classes, a quota tree with stand-alone quotas, pods counted against them, colocation profiles,
 * nodes, ElasticQuotaProfiles and Koordinator's two ConfigMaps. Every world of a seed is a pure
 * function of its random stream.
 *
 * Profiles keep their probability at 0 or 100 (absent, 0, 100, "0%" or "100%"): Koordinator draws
 * any other with math/rand, which the suite cannot replay.
 */
import type { JsonObject, KubeObject } from '../../webhook/admission/types.js';
import type { StateSnapshot } from '../../webhook/state.js';
import { podRequestsFormatted } from '../../webhook/rules/koordinator/quota/pod-requests.js';
import { addFormatted, goQuantityString, type FormattedAmount } from '../../webhook/util/quantity.js';
import type { Rng } from '../fuzz/prng.js';
import { PROTOTYPE_KEYS, putOwn } from '../fuzz/prototype-keys.js';
import { sloConfigData } from './slo-config.js';
import {
  APP_VALUES,
  ENHANCED_VALIDATOR_CONFIG_NAME,
  KOORDINATOR_NAMESPACE,
  NAMESPACES,
  NODE_LABELS,
  PRIORITY_CLASSES,
  Q,
  QOS_VALUES,
  quantityFor,
  RESOURCES,
  SKIP_UPDATE_RESOURCES_ANNOTATION,
  SLO_CONFIG_NAME,
  some,
  text,
  TREE_IDS,
} from './vocabulary.js';

export interface World {
  objects: KubeObject[];
}

const object = (
  apiVersion: string,
  kind: string,
  metadata: JsonObject,
  rest: JsonObject = {},
): KubeObject => ({
  apiVersion,
  kind,
  metadata,
  ...rest,
});

function namespaces(rng: Rng): KubeObject[] {
  return [...NAMESPACES, KOORDINATOR_NAMESPACE].map((name) => {
    const labels: Record<string, string> = {};
    if (rng.chance(0.5)) labels['enable-koordinator-colocation'] = 'true';
    if (rng.chance(0.4)) labels.team = rng.pick(['a', 'b']);
    return object('v1', 'Namespace', { name, labels });
  });
}

function priorityClasses(): KubeObject[] {
  return PRIORITY_CLASSES.map(({ name, value, preemptionPolicy }) =>
    object(
      'scheduling.k8s.io/v1',
      'PriorityClass',
      { name },
      {
        value,
        ...(preemptionPolicy ? { preemptionPolicy } : {}),
      },
    ),
  );
}

/** A resource list over `keys`, each with a quantity of its kind. */
export function resourceList(rng: Rng, keys: readonly string[]): Record<string, string> {
  return Object.fromEntries(keys.map((key) => [key, quantityFor(rng, key)]));
}

/** Resource names a quota bounds: mostly cpu and memory, sometimes GPUs or pods. */
export function quotaKeys(rng: Rng): string[] {
  const keys = ['cpu', 'memory'].filter(() => rng.chance(0.85));
  for (const [name] of RESOURCES.slice(2)) if (rng.chance(0.15)) keys.push(name);
  // A resource named like an Object.prototype member: to Go's map only a name.
  if (rng.chance(0.05)) keys.push(rng.pick(PROTOTYPE_KEYS));
  return keys.length > 0 ? keys : ['cpu'];
}

/** min over some of max's keys (and now and then one max lacks), each at or under max's mostly. */
export function quotaMin(rng: Rng, max: Record<string, string>): Record<string, string> {
  const min: Record<string, string> = {};
  for (const [key, value] of Object.entries(max)) {
    if (rng.chance(0.7)) putOwn(min, key, rng.chance(0.8) ? value : quantityFor(rng, key));
  }
  if (rng.chance(0.1)) min[rng.pick(RESOURCES)[0]] = '1';
  return min;
}

interface QuotaPlan {
  name: string;
  namespace: string;
  parent?: string;
  isParent?: boolean;
}

/** The quota tree: org > team-a, team-b > squad; solo, tight, gpu-pool stand alone; ml is named after its namespace. */
const QUOTA_PLAN: readonly QuotaPlan[] = [
  { name: 'org', namespace: 'team', isParent: true },
  { name: 'team-a', namespace: 'team', parent: 'org' },
  { name: 'team-b', namespace: 'team', parent: 'org', isParent: true },
  { name: 'squad', namespace: 'batch', parent: 'team-b' },
  { name: 'solo', namespace: 'default' },
  { name: 'tight', namespace: 'default' },
  { name: 'ml', namespace: 'ml' },
  { name: 'gpu-pool', namespace: 'plain' },
];

function quotas(rng: Rng): KubeObject[] {
  const treeId = rng.pick(TREE_IDS);
  const parentKeys = quotaKeys(rng);
  const bound = new Set<string>();
  const out: KubeObject[] = [];
  for (const plan of QUOTA_PLAN) {
    if (plan.name !== 'org' && rng.chance(0.15)) continue;
    const labels: Record<string, string> = {};
    const annotations: Record<string, string> = {};
    if (plan.parent) labels[Q('parent')] = plan.parent;
    if (plan.isParent && rng.chance(0.9)) labels[Q('is-parent')] = 'true';
    const inTree = plan.name === 'org' || plan.parent !== undefined;
    if (inTree && treeId && rng.chance(0.9)) labels[Q('tree-id')] = treeId;
    if (plan.name === 'org' && rng.chance(0.2)) labels[Q('is-root')] = 'true';
    if (rng.chance(0.15)) labels[Q('allow-force-update')] = 'true';
    if (rng.chance(0.1)) labels[Q('allow-lent-resource')] = 'false';
    // Parent and children mostly bound the same resources (Koordinator requires it by default).
    const keys = inTree && rng.chance(0.8) ? parentKeys : quotaKeys(rng);
    const max = resourceList(rng, keys);
    const min = quotaMin(rng, max);
    if (rng.chance(0.3)) {
      const free = ['plain', 'batch', 'default', 'team'].filter((ns) => !bound.has(ns) && ns !== plan.name);
      const chosen = some(rng, free, 0.3).slice(0, 2);
      for (const ns of chosen) bound.add(ns);
      annotations[Q('namespaces')] = JSON.stringify(chosen);
    }
    if (plan.name === 'tight' || rng.chance(0.1)) {
      annotations[Q('admission')] = JSON.stringify(resourceList(rng, some(rng, keys, 0.7)));
    }
    if (rng.chance(0.2)) annotations[Q('shared-weight')] = JSON.stringify(resourceList(rng, keys));
    const status: JsonObject = {};
    if (rng.chance(0.1)) {
      annotations[Q('max-strict-check-resource-keys')] = JSON.stringify(some(rng, keys));
      status.used = resourceList(rng, some(rng, keys));
    }
    out.push(
      object(
        'scheduling.sigs.k8s.io/v1alpha1',
        'ElasticQuota',
        { name: plan.name, namespace: plan.namespace, labels, annotations },
        { spec: { max, min }, ...(Object.keys(status).length > 0 ? { status } : {}) },
      ),
    );
  }
  return out;
}

/** A container with requests and limits over a few resources. */
function worldPods(rng: Rng, quotaNames: readonly string[]): KubeObject[] {
  const pods: KubeObject[] = [];
  const count = rng.range(0, 8);
  for (let i = 0; i < count; i++) {
    const namespace = rng.pick(NAMESPACES);
    const labels: Record<string, string> = { app: rng.pick(APP_VALUES) };
    if (quotaNames.length > 0 && rng.chance(0.6)) labels[Q('name')] = rng.pick(quotaNames);
    const requests = resourceList(
      rng,
      some(rng, ['cpu', 'memory', 'nvidia.com/gpu', 'ephemeral-storage'], 0.6),
    );
    const phase = rng.pick(['Running', 'Running', 'Pending', 'Succeeded']);
    const spec: JsonObject = {
      nodeName: 'n1',
      containers: [{ name: 'main', image: 'app:1', resources: { requests, limits: requests } }],
    };
    const status: JsonObject = { phase };
    // A sidecar, counted beside the containers.
    if (rng.chance(0.15)) {
      spec.initContainers = [
        {
          name: 'proxy',
          image: 'proxy:1',
          restartPolicy: 'Always',
          resources: { requests: { cpu: '100m' } },
        },
      ];
    }
    // Pod-level resources, which replace the containers' cpu and memory.
    if (rng.chance(0.15)) spec.resources = { requests: { cpu: rng.pick(['1', '2500m']) } };
    // Resized in place: the kubelet has allocated the new size, or not yet (a larger one is
    // pending). A shrink the kubelet has not actuated counts at its old size in our store, as in
    // Kubernetes' ResourceQuota; Koordinator's child-request would hold the new one, so the
    // worlds leave that case out.
    if (phase === 'Running' && 'cpu' in requests && rng.chance(0.3)) {
      const allocated = rng.chance(0.5) ? requests.cpu : '0';
      status.containerStatuses = [
        {
          name: 'main',
          allocatedResources: { cpu: allocated },
          resources: { requests: { cpu: allocated } },
        },
      ];
    }
    pods.push(object('v1', 'Pod', { name: `existing-${i}`, namespace, labels }, { spec, status }));
  }
  return pods;
}

/** A label selector over the pod or namespace vocabulary; now and then one that does not parse. */
export function selector(rng: Rng, kind: 'pod' | 'namespace' | 'node'): JsonObject | undefined {
  if (rng.chance(0.25)) return undefined;
  if (rng.chance(0.1)) return {};
  const pairs: readonly (readonly [string, readonly string[]])[] =
    kind === 'pod'
      ? [
          ['app', APP_VALUES],
          ['koordinator-colocation-pod', ['true']],
          ['team', ['a', 'b']],
        ]
      : kind === 'namespace'
        ? [
            ['enable-koordinator-colocation', ['true']],
            ['team', ['a', 'b']],
          ]
        : NODE_LABELS;
  const [key, values] = rng.pick(pairs);
  if (rng.chance(0.6)) return { matchLabels: { [key]: rng.pick(values) } };
  const operator = rng.pick(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Bogus']);
  const needsValues = operator === 'In' || operator === 'NotIn';
  return {
    matchExpressions: [
      { key, operator, ...(needsValues || rng.chance(0.1) ? { values: some(rng, values, 0.8) } : {}) },
    ],
  };
}

function colocationProfiles(rng: Rng): KubeObject[] {
  const out: KubeObject[] = [];
  const count = rng.range(0, 4);
  for (let i = 0; i < count; i++) {
    const spec: JsonObject = {};
    const podSelector = selector(rng, 'pod');
    if (podSelector) spec.selector = podSelector;
    const namespaceSelector = selector(rng, 'namespace');
    if (namespaceSelector) spec.namespaceSelector = namespaceSelector;
    const probability = rng.pick([undefined, undefined, 100, 0, '100%', '0%']);
    if (probability !== undefined) spec.probability = probability;
    if (rng.chance(0.6)) spec.qosClass = rng.pick(QOS_VALUES.filter((qos) => qos !== 'bogus' && qos !== ''));
    if (rng.chance(0.5)) {
      spec.priorityClassName = rng.pick([
        'koord-batch',
        'koord-mid',
        'koord-prod',
        'koord-free',
        'koordinator-batch',
        'missing-class',
      ]);
    }
    if (rng.chance(0.3)) spec.koordinatorPriority = rng.pick([0, 7, 1111]);
    if (rng.chance(0.4))
      spec.labels = { [`profile-${i}`]: 'yes', ...(rng.chance(0.3) ? { team: 'infra' } : {}) };
    if (rng.chance(0.3)) spec.annotations = { [`profile-${i}/note`]: 'set' };
    if (rng.chance(0.2)) spec.labelKeysMapping = { app: 'mapped-app', absent: 'mapped-absent' };
    if (rng.chance(0.2)) spec.annotationKeysMapping = { owner: 'mapped-owner' };
    if (rng.chance(0.2)) spec.labelSuffixes = { app: '-suffix', absent: '-x' };
    if (rng.chance(0.3)) spec.schedulerName = rng.pick(['koord-scheduler', 'other-scheduler']);
    if (rng.chance(0.25)) {
      spec.patch = rng.pick<JsonObject>([
        { metadata: { labels: { patched: 'true' } } },
        { spec: { tolerations: [{ key: 'batch', operator: 'Exists' }] } },
        { spec: { nodeSelector: { pool: 'b' } } },
      ]);
    }
    const annotations: Record<string, string> = {};
    if (rng.chance(0.15)) annotations[SKIP_UPDATE_RESOURCES_ANNOTATION] = '';
    out.push(
      object(
        'config.koordinator.sh/v1alpha1',
        'ClusterColocationProfile',
        { name: `profile-${String.fromCharCode(97 + i)}`, annotations },
        { spec },
      ),
    );
  }
  return out;
}

function nodes(rng: Rng): KubeObject[] {
  return ['n1', 'n2', 'n3', 'n4'].map((name) => {
    const labels: Record<string, string> = {};
    for (const [key, values] of NODE_LABELS) if (rng.chance(0.5)) labels[key] = rng.pick(values);
    return object(
      'v1',
      'Node',
      { name, labels },
      {
        status: { allocatable: { cpu: '8', memory: '32Gi' } },
      },
    );
  });
}

function quotaProfiles(rng: Rng): KubeObject[] {
  return TREE_IDS.filter((id) => id !== '' && rng.chance(0.6)).map((treeId) =>
    object(
      'quota.koordinator.sh/v1alpha1',
      'ElasticQuotaProfile',
      { name: `profile-${treeId}`, namespace: KOORDINATOR_NAMESPACE, labels: { [Q('tree-id')]: treeId } },
      {
        spec: {
          quotaName: 'org',
          ...(rng.chance(0.8)
            ? { nodeSelector: selector(rng, 'node') ?? { matchLabels: { pool: 'a' } } }
            : {}),
        },
      },
    ),
  );
}

function configMaps(rng: Rng): KubeObject[] {
  const out: KubeObject[] = [];
  if (rng.chance(0.8)) {
    out.push(
      object(
        'v1',
        'ConfigMap',
        {
          name: SLO_CONFIG_NAME,
          namespace: KOORDINATOR_NAMESPACE,
          labels: { 'koordinator.sh/configmap-type': 'slo-controller-config' },
        },
        { data: sloConfigData(rng) },
      ),
    );
  }
  if (rng.chance(0.6)) {
    const rules = [
      {
        name: 'team-label',
        requiredLabels: some(rng, ['team', 'app', 'owner'], 0.6),
        namespaceWhitelist: some(rng, ['plain', 'ml', ''], 0.4),
      },
      ...(rng.chance(0.3) ? [{ name: 'second', requiredLabels: ['cost-center'] }] : []),
    ];
    out.push(
      object(
        'v1',
        'ConfigMap',
        { name: ENHANCED_VALIDATOR_CONFIG_NAME, namespace: KOORDINATOR_NAMESPACE },
        {
          data: { enable: rng.pick(['true', 'TRUE ', 'false']), rules: JSON.stringify(rules) },
        },
      ),
    );
  }
  return out;
}

export function generateWorld(rng: Rng): World {
  const quotaObjects = quotas(rng);
  const quotaNames = quotaObjects.map((quota) => text(quota.metadata.name));
  return {
    objects: [
      ...namespaces(rng),
      ...priorityClasses(),
      ...quotaObjects,
      ...worldPods(rng, quotaNames),
      ...colocationProfiles(rng),
      ...nodes(rng),
      ...quotaProfiles(rng),
      ...configMaps(rng),
    ],
  };
}

/**
 * The world with each quota's `child-request` annotation, Koordinator's record of what its pods use
 * (its quota admission adds each pod it admits): the pods our store counts for the quota (the
 * live ones), summed in the world's order as Go sums quantities (a sum keeps its first term's
 * format), over the keys of its max, zeros left out, as Koordinator writes it.
 */
export function withChildRequests(world: World, state: Pick<StateSnapshot, 'quotaPods'>): World {
  const pods = new Map(
    world.objects
      .filter((item) => item.kind === 'Pod')
      .map((pod) => [`${text(pod.metadata.namespace)}/${text(pod.metadata.name)}`, pod]),
  );
  return {
    objects: world.objects.map((item) => {
      if (item.kind !== 'ElasticQuota') return item;
      const max = ((item.spec as JsonObject | undefined)?.max ?? {}) as Record<string, string>;
      const counted = new Set(state.quotaPods(text(item.metadata.name)));
      const sum = new Map<string, FormattedAmount>();
      for (const [key, pod] of pods) {
        if (!counted.has(key)) continue;
        for (const [resource, amount] of podRequestsFormatted(pod)) {
          if (resource in max && amount.nanos !== 0n)
            sum.set(resource, addFormatted(sum.get(resource), amount));
        }
      }
      const used = Object.fromEntries(
        [...sum]
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([resource, amount]) => [resource, goQuantityString(amount.nanos, amount.format)]),
      );
      const annotations = { ...((item.metadata.annotations ?? {}) as Record<string, string>) };
      annotations[Q('child-request')] = JSON.stringify(used);
      return { ...item, metadata: { ...item.metadata, annotations } };
    }),
  };
}
