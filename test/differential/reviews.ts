/**
 * Generated AdmissionReviews for Koordinator's eight paths, against a world (world.ts): objects
 * the API server could send (every field of the type it has in Go; the API server decodes a
 * built-in kind into its type before any webhook sees it), with values drawn from the suite's
 * vocabulary so they meet the world's quotas, profiles, strategies and nodes, and with the
 * mutations an UPDATE brings (a label changed, a quota moved, a parent flipped).
 *
 * Out of scope: reviews the API server can never send, such as a field of the wrong JSON type
 * in a typed object or a quantity that does not parse (Koordinator's decoder refuses those with a
 * Go error, ours with a message naming the field; the fuzzer, test/fuzz/, covers them for
 * safety), or a namespaced object without its namespace (the API server sets it from the URL
 * before admission). The pods are what the API server hands the webhooks: defaulted (requests
 * taken from limits where missing) and with the priority of their PriorityClass.
 */
import type { JsonObject, JsonValue, KubeObject } from '../../webhook/admission/types.js';
import type { Rng } from '../fuzz/prng.js';
import { withDrawnKey } from '../fuzz/prototype-keys.js';
import { SLO_KEYS, sloKey } from './slo-config.js';
import {
  APP_VALUES,
  COUNTS,
  CPU_QUANTITIES,
  EXTENDED_SPEC_ANNOTATION,
  GPU_PERCENTS,
  KOORDINATOR_NAMESPACE,
  MEMORY_QUANTITIES,
  NAMESPACES,
  NODE_LABELS,
  PRIORITY_CLASS_LABEL,
  PRIORITY_CLASS_VALUES,
  PRIORITY_CLASSES,
  PRIORITY_LABEL,
  PRIORITY_VALUES,
  Q,
  QOS_LABEL,
  QOS_VALUES,
  QUOTA_NAMES,
  RATIO_ANNOTATION,
  RAW_ALLOCATABLE_ANNOTATION,
  RESERVE_POD_ANNOTATION,
  SHARED_COUNTS,
  SLO_CONFIG_NAME,
  some,
  SPECIAL_QUOTAS,
  text,
  TREE_IDS,
} from './vocabulary.js';
import { quotaKeys, quotaMin, resourceList, type World } from './world.js';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE';

export interface GeneratedReview {
  path: string;
  /** The AdmissionReview (admission.k8s.io/v1) as the API server would send it. */
  review: JsonObject;
  /** What the generator did, for a difference's report. */
  note: string;
}

interface Kind {
  group: string;
  version: string;
  kind: string;
  resource: string;
}

const POD: Kind = { group: '', version: 'v1', kind: 'Pod', resource: 'pods' };
const NODE: Kind = { group: '', version: 'v1', kind: 'Node', resource: 'nodes' };
const CONFIGMAP: Kind = { group: '', version: 'v1', kind: 'ConfigMap', resource: 'configmaps' };
const QUOTA: Kind = {
  group: 'scheduling.sigs.k8s.io',
  version: 'v1alpha1',
  kind: 'ElasticQuota',
  resource: 'elasticquotas',
};
const RESERVATION: Kind = {
  group: 'scheduling.koordinator.sh',
  version: 'v1alpha1',
  kind: 'Reservation',
  resource: 'reservations',
};

export const KOORDINATOR_PATHS = [
  '/mutate-pod',
  '/validate-pod',
  '/mutate-node-status',
  '/validate-node',
  '/mutate-scheduling-sigs-k8s-io-v1alpha1-elasticquota',
  '/validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota',
  '/validate-configmap',
  '/mutate-reservation',
] as const;
export type KoordinatorPath = (typeof KOORDINATOR_PATHS)[number];

function review(
  uid: string,
  kind: Kind,
  operation: Operation,
  object: KubeObject | null,
  oldObject: KubeObject | null,
  subResource?: string,
): JsonObject {
  const metadata = (object ?? oldObject)?.metadata ?? {};
  // A generateName create is named by the API server after the review's name was taken from the URL.
  const unnamed = operation === 'CREATE' && metadata.generateName !== undefined;
  const name =
    typeof metadata.name === 'string' && metadata.name !== '' && !unnamed ? metadata.name : undefined;
  const namespace =
    typeof metadata.namespace === 'string' && metadata.namespace !== '' ? metadata.namespace : undefined;
  const gvk = { group: kind.group, version: kind.version, kind: kind.kind };
  const gvr = { group: kind.group, version: kind.version, resource: kind.resource };
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: gvk,
      resource: gvr,
      ...(subResource ? { subResource } : {}),
      requestKind: gvk,
      requestResource: gvr,
      ...(subResource ? { requestSubResource: subResource } : {}),
      ...(name ? { name } : {}),
      ...(namespace ? { namespace } : {}),
      operation,
      userInfo: { username: 'differential', groups: ['system:authenticated'] },
      object,
      oldObject,
      dryRun: false,
      options: {
        apiVersion: 'meta.k8s.io/v1',
        kind: `${operation[0]}${operation.slice(1).toLowerCase()}Options`,
      },
    },
  };
}

/** The review's namespace when the object has none (a pod created in the URL's namespace). */
function withNamespace(body: JsonObject, namespace: string): JsonObject {
  const request = body.request as JsonObject;
  request.namespace = namespace;
  return body;
}

const worldObjects = (world: World, kind: string): KubeObject[] =>
  world.objects.filter((o) => o.kind === kind);

// ---- pods -----------------------------------------------------------------------------------

const POD_RESOURCES: readonly [string, readonly string[], number][] = [
  ['cpu', CPU_QUANTITIES, 0.8],
  ['memory', MEMORY_QUANTITIES, 0.7],
  ['kubernetes.io/batch-cpu', ['1000', '500', '2k', '1e3'], 0.12],
  ['kubernetes.io/batch-memory', ['1Gi', '512Mi', '2G'], 0.12],
  ['kubernetes.io/mid-cpu', ['1000'], 0.03],
  ['koordinator.sh/gpu', GPU_PERCENTS, 0.12],
  ['koordinator.sh/gpu-core', GPU_PERCENTS, 0.08],
  ['koordinator.sh/gpu-memory-ratio', GPU_PERCENTS, 0.08],
  ['koordinator.sh/gpu-memory', ['8Gi', '0', '16Gi'], 0.05],
  ['koordinator.sh/gpu.shared', SHARED_COUNTS, 0.08],
  ['huawei.com/npu-core', ['0', '1'], 0.03],
  ['nvidia.com/gpu', COUNTS, 0.1],
  ['ephemeral-storage', MEMORY_QUANTITIES, 0.08],
];

function podResources(rng: Rng): JsonObject {
  const requests: Record<string, string> = {};
  for (const [name, values, p] of POD_RESOURCES) if (rng.chance(p)) requests[name] = rng.pick(values);
  const shape = rng.int(10);
  // Requests only, limits only, both equal, or limits of their own.
  if (shape === 0) return {};
  if (shape <= 2) return { requests };
  if (shape === 3) return { limits: requests };
  if (shape <= 7) return { requests, limits: { ...requests } };
  const limits: Record<string, string> = {};
  for (const [name, values] of POD_RESOURCES)
    if (name in requests || rng.chance(0.05)) limits[name] = rng.pick(values);
  return { requests, limits };
}

/** A container as the API server's defaulting leaves it: a limit without a request is requested too. */
function container(rng: Rng, name: string): JsonObject {
  const resources = podResources(rng);
  const limits = resources.limits as Record<string, string> | undefined;
  if (limits) {
    const requests = (resources.requests ?? {}) as Record<string, string>;
    for (const [key, value] of Object.entries(limits)) requests[key] ??= value;
    resources.requests = requests;
  }
  return { name, image: `${name}:1`, resources };
}

function podLabels(rng: Rng): Record<string, string> {
  const labels: Record<string, string> = {};
  if (rng.chance(0.7)) labels.app = rng.pick(APP_VALUES);
  if (rng.chance(0.3)) labels['koordinator-colocation-pod'] = 'true';
  if (rng.chance(0.3)) labels.team = rng.pick(['a', 'b']);
  if (rng.chance(0.4)) labels[QOS_LABEL] = rng.pick(QOS_VALUES);
  if (rng.chance(0.15)) labels[PRIORITY_CLASS_LABEL] = rng.pick(PRIORITY_CLASS_VALUES);
  if (rng.chance(0.15)) labels[PRIORITY_LABEL] = rng.pick(['7', '1111', 'x', '']);
  if (rng.chance(0.5)) labels[Q('name')] = rng.pick([...QUOTA_NAMES, ...SPECIAL_QUOTAS, 'missing', '']);
  if (rng.chance(0.1)) labels[Q('preemptible')] = rng.pick(['true', 'false']);
  if (rng.chance(0.05)) labels['pod.koordinator.sh/skip-enhanced-validation'] = 'true';
  if (rng.chance(0.1)) labels['cost-center'] = 'c1';
  if (rng.chance(0.1)) labels.owner = 'me';
  return labels;
}

export function generatePod(rng: Rng, index: number): KubeObject {
  const namespace = rng.chance(0.03) ? KOORDINATOR_NAMESPACE : rng.pick(NAMESPACES);
  const metadata: JsonObject = rng.chance(0.05)
    ? { generateName: 'gen-', namespace }
    : { name: `p-${index}`, namespace };
  metadata.labels = podLabels(rng);
  const annotations: Record<string, string> = {};
  if (rng.chance(0.3)) annotations.owner = 'someone';
  if (rng.chance(0.05)) annotations[RESERVE_POD_ANNOTATION] = 'true';
  // Koordinator v1.8.0's replace-resources (read with its two gates on): renames, erasures, junk.
  if (rng.chance(0.15)) {
    annotations['pod.koordinator.sh/replace-resources'] = rng.pick([
      'cpu:kubernetes.io/batch-cpu',
      'memory:',
      'cpu:kubernetes.io/batch-cpu,memory:kubernetes.io/batch-memory',
      'nvidia.com/gpu:koordinator.sh/gpu',
      'cpu',
      'memory:, ephemeral-storage:',
    ]);
  }
  if (rng.chance(0.1)) {
    annotations[EXTENDED_SPEC_ANNOTATION] = rng.pick([
      '{}',
      'not json',
      '{"containers":{"c0":{"limits":{"kubernetes.io/batch-cpu":"1k"},"requests":{"kubernetes.io/batch-cpu":"1k"}}}}',
    ]);
  }
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  const spec: JsonObject = {
    containers: Array.from({ length: rng.pick([1, 1, 1, 2, 3]) }, (_, i) => container(rng, `c${i}`)),
  };
  if (rng.chance(0.25)) {
    spec.initContainers = [
      { ...container(rng, 'init'), ...(rng.chance(0.3) ? { restartPolicy: 'Always' } : {}) },
    ];
  }
  if (rng.chance(0.1))
    spec.overhead = { cpu: rng.pick(['100m', '250m']), ...(rng.chance(0.5) ? { memory: '64Mi' } : {}) };
  // Pod-level resources (PodLevelResources, on since Kubernetes 1.34): cpu and memory, requested as
  // the API server's defaulting leaves them.
  if (rng.chance(0.12)) {
    const requests: Record<string, string> = { cpu: rng.pick(['1', '2', '3', '1500m', '4']) };
    if (rng.chance(0.4)) requests.memory = rng.pick(['1Gi', '4Gi']);
    spec.resources = rng.chance(0.4) ? { requests, limits: { ...requests } } : { requests };
  }
  if (rng.chance(0.3)) spec.priority = rng.pick(PRIORITY_VALUES);
  if (rng.chance(0.15)) {
    // The Priority admission plugin, before any webhook, sets the class's value.
    const priorityClass = rng.pick(
      PRIORITY_CLASSES.filter((pc) => ['koord-batch', 'koord-prod', 'high'].includes(pc.name)),
    );
    spec.priorityClassName = priorityClass.name;
    spec.priority = priorityClass.value;
  }
  if (rng.chance(0.1)) spec.schedulerName = 'default-scheduler';
  if (rng.chance(0.1))
    spec.affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['z1'] }] }],
        },
      },
    };
  const pod: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata, spec };
  if (rng.chance(0.05)) pod.status = { phase: rng.pick(['Pending', 'Succeeded', 'Failed']) };
  return pod;
}

/** The pod after an update: labels, priority or quota changed, or nothing but a harmless label. */
function updatedPod(rng: Rng, old: KubeObject): KubeObject {
  const pod = structuredClone(old);
  const labels = (pod.metadata.labels ?? {}) as Record<string, string>;
  pod.metadata.labels = labels;
  const spec = pod.spec as JsonObject;
  const change = rng.int(8);
  if (change === 0) labels[QOS_LABEL] = rng.pick(QOS_VALUES);
  else if (change === 1) labels[PRIORITY_LABEL] = rng.pick(['7', '8', '1111']);
  else if (change === 2) labels[PRIORITY_CLASS_LABEL] = rng.pick(PRIORITY_CLASS_VALUES);
  else if (change === 3) spec.priority = rng.pick(PRIORITY_VALUES);
  else if (change === 4) labels[Q('preemptible')] = rng.pick(['true', 'false']);
  else if (change === 5) labels[Q('name')] = rng.pick([...QUOTA_NAMES, 'missing']);
  else if (change === 6) Reflect.deleteProperty(labels, rng.pick(Object.keys(labels).concat('app')));
  else labels.touched = 'yes';
  return pod;
}

function podReview(rng: Rng, uid: string, index: number, mutating: boolean): GeneratedReview {
  const pod = generatePod(rng, index);
  const namespace = text(pod.metadata.namespace);
  if (!mutating) {
    // After mutation and before validation the API server names a generateName pod and resets a
    // new pod's status (PrepareForCreate): validating webhooks see a Pending pod.
    if (pod.metadata.generateName !== undefined) pod.metadata.name = `gen-${index.toString(36)}`;
    pod.status = { phase: 'Pending' };
  }
  // Koordinator's objectSelector (ours: a matchCondition) sends /mutate-pod only opted-in updates.
  const update = rng.chance(mutating ? 0.1 : 0.35);
  if (update && mutating) {
    (pod.metadata.labels as Record<string, string>)['pod.koordinator.sh/mutating-update'] = 'true';
  }
  const object = update ? updatedPod(rng, pod) : pod;
  const operation = update ? 'UPDATE' : 'CREATE';
  return {
    path: mutating ? '/mutate-pod' : '/validate-pod',
    review: withNamespace(review(uid, POD, operation, object, update ? pod : null), namespace),
    note: `pod ${operation.toLowerCase()}`,
  };
}

// ---- nodes ----------------------------------------------------------------------------------

function nodeLabels(rng: Rng): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const [key, values] of NODE_LABELS) if (rng.chance(0.5)) labels[key] = rng.pick(values);
  return labels;
}

function generateNode(rng: Rng): KubeObject {
  const annotations: Record<string, string> = {};
  if (rng.chance(0.75)) {
    annotations[RATIO_ANNOTATION] = rng.pick([
      '',
      '{"cpu":1.5}',
      '{"cpu":2,"memory":1.5}',
      '{"cpu":0.5}',
      '{"memory":1}',
      '{"eni":2}',
      '{"cpu":1.25,"memory":3}',
      'not json',
      '{"cpu":"x"}',
    ]);
  }
  if (rng.chance(0.4)) {
    annotations[RAW_ALLOCATABLE_ANNOTATION] = rng.pick([
      '{"cpu":"8","memory":"32Gi"}',
      '{"cpu":"4"}',
      'bad',
      '{}',
    ]);
  }
  const status: JsonObject = {};
  if (rng.chance(0.9)) {
    const allocatable: Record<string, string> = {};
    if (rng.chance(0.9)) allocatable.cpu = rng.pick(['8', '7800m', '16', '1', '500m']);
    if (rng.chance(0.9)) allocatable.memory = rng.pick(['32Gi', '31Gi', '16G', '1000Mi']);
    if (rng.chance(0.5)) allocatable.pods = '110';
    status.allocatable = allocatable;
  }
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: rng.pick(['n1', 'n2', 'n3', 'n9']), labels: nodeLabels(rng), annotations },
    spec: {},
    status,
  };
}

function nodeStatusReview(rng: Rng, uid: string): GeneratedReview {
  const node = generateNode(rng);
  if (rng.chance(0.2)) {
    return {
      path: '/mutate-node-status',
      review: review(uid, NODE, 'CREATE', node, null, 'status'),
      note: 'node status create',
    };
  }
  const old = structuredClone(node);
  const oldStatus = old.status as JsonObject;
  if (rng.chance(0.4) && oldStatus.allocatable) {
    oldStatus.allocatable = { ...(oldStatus.allocatable as JsonObject), cpu: rng.pick(['8', '4', '7800m']) };
  }
  if (rng.chance(0.2)) delete oldStatus.allocatable;
  return {
    path: '/mutate-node-status',
    review: review(uid, NODE, 'UPDATE', node, old, 'status'),
    note: 'node status update',
  };
}

function nodeReview(rng: Rng, uid: string): GeneratedReview {
  const node = generateNode(rng);
  if (rng.chance(0.2))
    return { path: '/validate-node', review: review(uid, NODE, 'CREATE', node, null), note: 'node create' };
  const old = structuredClone(node);
  if (rng.chance(0.7)) old.metadata.labels = nodeLabels(rng);
  return { path: '/validate-node', review: review(uid, NODE, 'UPDATE', node, old), note: 'node update' };
}

// ---- elastic quotas -------------------------------------------------------------------------

function generateQuota(rng: Rng, world: World): KubeObject {
  const existing = worldObjects(world, 'ElasticQuota');
  const name = rng.chance(0.05)
    ? rng.pick(SPECIAL_QUOTAS)
    : rng.chance(0.4)
      ? rng.pick(QUOTA_NAMES)
      : rng.pick(['new-a', 'new-b', 'new-c']);
  const labels: Record<string, string> = {};
  const parentChoice = rng.int(6);
  if (parentChoice === 1) labels[Q('parent')] = 'koordinator-root-quota';
  else if (parentChoice >= 2 && existing.length > 0)
    labels[Q('parent')] = text(rng.pick(existing).metadata.name);
  else if (parentChoice === 0 && rng.chance(0.2)) labels[Q('parent')] = 'missing-parent';
  if (rng.chance(0.2)) labels[Q('is-parent')] = rng.pick(['true', 'false']);
  if (rng.chance(0.3)) labels[Q('tree-id')] = rng.pick(TREE_IDS);
  if (rng.chance(0.1)) labels[Q('allow-force-update')] = 'true';
  if (rng.chance(0.05)) labels[Q('is-root')] = 'true';
  const annotations: Record<string, string> = {};
  const parent = existing.find((q) => q.metadata.name === labels[Q('parent')]);
  const parentMax = ((parent?.spec as JsonObject | undefined)?.max ?? {}) as Record<string, string>;
  const keys = parent && rng.chance(0.7) ? Object.keys(parentMax) : quotaKeys(rng);
  const max = resourceList(rng, keys);
  if (rng.chance(0.05)) max[keys[0] ?? 'cpu'] = '-1';
  const min = quotaMin(rng, max);
  if (rng.chance(0.25)) {
    annotations[Q('shared-weight')] = rng.pick([
      '',
      JSON.stringify(max),
      JSON.stringify(resourceList(rng, some(rng, keys))),
      JSON.stringify({ ...resourceList(rng, keys), 'nvidia.com/gpu': '1' }),
      '{"cpu":"-1"}',
      'not json',
    ]);
  }
  if (rng.chance(0.2)) annotations[Q('namespaces')] = JSON.stringify(some(rng, [...NAMESPACES], 0.3));
  if (rng.chance(0.08)) {
    annotations[Q('max-strict-check-resource-keys')] = rng.pick([JSON.stringify(keys), 'not json']);
  }
  const quota: KubeObject = {
    apiVersion: 'scheduling.sigs.k8s.io/v1alpha1',
    kind: 'ElasticQuota',
    metadata: { name, namespace: rng.pick(NAMESPACES), labels, annotations },
    spec: { max, min },
  };
  if (annotations[Q('max-strict-check-resource-keys')] && rng.chance(0.7)) {
    quota.status = { used: resourceList(rng, some(rng, keys, 0.7)) };
  }
  return quota;
}

/** An update of a world quota (or, now and then, of one the world lacks). */
function updatedQuota(rng: Rng, old: KubeObject, world: World): KubeObject {
  const quota = structuredClone(old);
  const labels = (quota.metadata.labels ?? {}) as Record<string, string>;
  const annotations = (quota.metadata.annotations ?? {}) as Record<string, string>;
  quota.metadata.labels = labels;
  quota.metadata.annotations = annotations;
  const spec = (quota.spec ?? {}) as { max?: Record<string, string>; min?: Record<string, string> };
  quota.spec = spec;
  const names = worldObjects(world, 'ElasticQuota').map((q) => text(q.metadata.name));
  for (let changes = rng.range(1, 2); changes > 0; changes--) {
    switch (rng.int(9)) {
      case 0:
        labels[Q('parent')] = rng.pick([...names, 'koordinator-root-quota', 'missing-parent']);
        break;
      case 1:
        labels[Q('is-parent')] = labels[Q('is-parent')] === 'true' ? 'false' : 'true';
        break;
      case 2:
        labels[Q('tree-id')] = rng.pick(TREE_IDS);
        break;
      case 3:
        spec.max = resourceList(
          rng,
          Object.keys(spec.max ?? {}).length > 0 && rng.chance(0.6)
            ? Object.keys(spec.max ?? {})
            : quotaKeys(rng),
        );
        break;
      case 4:
        spec.min = quotaMin(rng, spec.max ?? {});
        break;
      case 5:
        annotations[Q('namespaces')] = JSON.stringify(some(rng, [...NAMESPACES], 0.3));
        break;
      case 6:
        annotations[Q('shared-weight')] = JSON.stringify(
          resourceList(rng, Object.keys(spec.max ?? { cpu: '1' })),
        );
        break;
      case 7:
        labels[Q('allow-force-update')] = 'true';
        break;
      default:
        labels.touched = 'yes';
    }
  }
  return quota;
}

function quotaMutatingReview(rng: Rng, uid: string, world: World): GeneratedReview {
  const quota = generateQuota(rng, world);
  return {
    path: '/mutate-scheduling-sigs-k8s-io-v1alpha1-elasticquota',
    review: review(uid, QUOTA, 'CREATE', quota, null),
    note: 'quota create',
  };
}

/** A quota whose name no quota of the world has. */
function unknownQuota(rng: Rng, world: World, existing: readonly KubeObject[]): KubeObject {
  const quota = generateQuota(rng, world);
  const taken = new Set(existing.map((q) => text(q.metadata.name)));
  quota.metadata.name = ['new-a', 'new-b', 'new-c', 'new-d'].find((name) => !taken.has(name)) ?? 'new-z';
  return quota;
}

function quotaValidatingReview(rng: Rng, uid: string, world: World): GeneratedReview {
  const path = '/validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota';
  const existing = worldObjects(world, 'ElasticQuota');
  const operation = rng.pick<Operation>(['CREATE', 'CREATE', 'UPDATE', 'UPDATE', 'UPDATE', 'DELETE']);
  // The API server's old object is the stored quota; now and then one the world lacks (a quota
  // Koordinator's tree does not know yet).
  const stored = existing.length > 0 && rng.chance(0.9) ? rng.pick(existing) : undefined;
  const old = stored ?? unknownQuota(rng, world, existing);
  if (operation === 'CREATE') {
    return {
      path,
      review: review(uid, QUOTA, 'CREATE', generateQuota(rng, world), null),
      note: 'quota create',
    };
  }
  if (operation === 'DELETE') {
    const target = rng.chance(0.05)
      ? { ...structuredClone(old), metadata: { ...old.metadata, name: rng.pick(SPECIAL_QUOTAS) } }
      : old;
    return { path, review: review(uid, QUOTA, 'DELETE', null, target), note: 'quota delete' };
  }
  return {
    path,
    review: review(uid, QUOTA, 'UPDATE', updatedQuota(rng, old, world), old),
    note: 'quota update',
  };
}

// ---- reservations, SLO ConfigMap ------------------------------------------------------------

function reservationReview(rng: Rng, uid: string): GeneratedReview {
  const labels: Record<string, string> = {};
  if (rng.chance(0.6)) labels.app = rng.pick(APP_VALUES);
  if (rng.chance(0.3)) labels['koordinator-colocation-pod'] = 'true';
  if (rng.chance(0.3)) labels.team = rng.pick(['a', 'b']);
  const spec: JsonObject = { owners: [{ object: { name: 'owner-pod', namespace: 'default' } }] };
  // Mostly a ttl (the CRD's default is 24h), now and then an expiry or neither.
  const lifetime = rng.int(10);
  if (lifetime < 7) spec.ttl = rng.pick(['1h', '30m']);
  else if (lifetime < 9) spec.expires = '2030-01-01T00:00:00Z';
  if (rng.chance(0.85)) {
    spec.template = {
      metadata: { labels: { app: 'reserved' } },
      spec: {
        containers: [
          { name: 'main', resources: { requests: { cpu: rng.pick(CPU_QUANTITIES), memory: '1Gi' } } },
        ],
        ...(rng.chance(0.2) ? { schedulerName: 'koord-scheduler', priority: 5500 } : {}),
      },
    };
  }
  const reservation: KubeObject = {
    apiVersion: 'scheduling.koordinator.sh/v1alpha1',
    kind: 'Reservation',
    metadata: {
      name: `r-${uid.slice(-6)}`,
      labels,
      ...(rng.chance(0.3) ? { annotations: { owner: 'me' } } : {}),
    },
    spec,
  };
  return {
    path: '/mutate-reservation',
    review: review(uid, RESERVATION, 'CREATE', reservation, null),
    note: 'reservation create',
  };
}

function configMapReview(rng: Rng, uid: string, world: World): GeneratedReview {
  const path = '/validate-configmap';
  const existing = world.objects.find(
    (o) =>
      o.kind === 'ConfigMap' &&
      o.metadata.name === SLO_CONFIG_NAME &&
      o.metadata.namespace === KOORDINATOR_NAMESPACE,
  );
  const newData = (): Record<string, string> => {
    const data: Record<string, string> = { ...((existing?.data ?? {}) as Record<string, string>) };
    for (const key of some(rng, SLO_KEYS, 0.4)) data[key] = sloKey(rng, key);
    if (rng.chance(0.1)) Reflect.deleteProperty(data, rng.pick(SLO_KEYS));
    return data;
  };
  const configMap = (data: Record<string, string>): KubeObject => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: SLO_CONFIG_NAME,
      namespace: KOORDINATOR_NAMESPACE,
      labels: { 'koordinator.sh/configmap-type': 'slo-controller-config' },
    },
    data: data,
  });
  const operation = rng.pick<Operation>(['CREATE', 'UPDATE', 'UPDATE', 'UPDATE', 'DELETE']);
  const old = existing ?? configMap(newData());
  if (operation === 'CREATE')
    return {
      path,
      review: review(uid, CONFIGMAP, 'CREATE', configMap(newData()), null),
      note: 'slo config create',
    };
  if (operation === 'DELETE')
    return { path, review: review(uid, CONFIGMAP, 'DELETE', null, old), note: 'slo config delete' };
  return {
    path,
    review: review(uid, CONFIGMAP, 'UPDATE', configMap(newData()), old),
    note: 'slo config update',
  };
}

/** Review `index` of a world, for `path`. */
export function generateReview(
  rng: Rng,
  world: World,
  path: KoordinatorPath,
  index: number,
): GeneratedReview {
  const generated = reviewOf(rng, world, path, index);
  return rng.chance(PROTOTYPE_KEY_SHARE) ? withPrototypeKey(rng, generated) : generated;
}

/** Share of reviews with a key named like an Object.prototype member in one of their maps. */
const PROTOTYPE_KEY_SHARE = 0.15;

/**
 * The maps a user keys, which the API server passes on as written: labels, annotations, resource
 * lists, node selectors, ConfigMap data (a key elsewhere is a field the API server's decoding
 * drops), and every map in the JSON a string holds.
 */
const USER_KEYED_MAPS: ReadonlySet<string> = new Set([
  'labels',
  'annotations',
  'requests',
  'limits',
  'overhead',
  'max',
  'min',
  'used',
  'allocatable',
  'capacity',
  'nodeSelector',
  'matchLabels',
  'data',
]);

/** The review with one of Object.prototype's names (or `__proto__`) as a key in one of its user-keyed maps. */
function withPrototypeKey(rng: Rng, generated: GeneratedReview): GeneratedReview {
  const drawn = withDrawnKey(
    rng,
    generated.review.request as JsonObject,
    (site) => site.inText || USER_KEYED_MAPS.has(site.field),
  );
  return drawn
    ? {
        ...generated,
        review: { ...generated.review, request: drawn.request },
        note: `${generated.note}; ${drawn.note}`,
      }
    : generated;
}

function reviewOf(rng: Rng, world: World, path: KoordinatorPath, index: number): GeneratedReview {
  const uid = `00000000-0000-4000-8000-${index.toString(16).padStart(12, '0')}`;
  switch (path) {
    case '/mutate-pod':
      return podReview(rng, uid, index, true);
    case '/validate-pod':
      return podReview(rng, uid, index, false);
    case '/mutate-node-status':
      return nodeStatusReview(rng, uid);
    case '/validate-node':
      return nodeReview(rng, uid);
    case '/mutate-scheduling-sigs-k8s-io-v1alpha1-elasticquota':
      return quotaMutatingReview(rng, uid, world);
    case '/validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota':
      return quotaValidatingReview(rng, uid, world);
    case '/validate-configmap':
      return configMapReview(rng, uid, world);
    case '/mutate-reservation':
      return reservationReview(rng, uid);
  }
}

export type { JsonValue };
