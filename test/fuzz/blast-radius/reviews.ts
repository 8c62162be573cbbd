/**
 * Generated pod reviews for the blast-radius property, shaped as the API server sends them: the
 * object decoded into a Pod and back (labels and annotations are strings, quantities valid, the
 * namespace in the object equal to the request's, spec.priority resolved by the Priority plugin,
 * requests defaulted from limits),
 * but otherwise drawn from what the pod rules read: Koordinator's labels and annotations, every
 * resource a step counts, init containers and overhead, priorities in and out of Koordinator's
 * bands, UPDATEs that change them or not. Labels are often borrowed from the state's profiles and
 * quotas, so reviews land near the edges of what narrowing sends.
 */
import type { AdmissionRequest, JsonObject, KubeObject } from '../../../webhook/admission/types.js';
import { asArray, asObject } from '../../../webhook/util/json.js';
import type { Rng } from '../prng.js';
import { putOwn } from '../prototype-keys.js';
import { NAMESPACES, POD_LABELS, type GeneratedState } from './states.js';

const Q = (key: string): string => `quota.scheduling.koordinator.sh/${key}`;

const RESOURCES = [
  'cpu',
  'memory',
  'ephemeral-storage',
  'kubernetes.io/batch-cpu',
  'kubernetes.io/batch-memory',
  'kubernetes.io/mid-cpu',
  'kubernetes.io/mid-memory',
  'koordinator.sh/gpu',
  'koordinator.sh/gpu-core',
  'koordinator.sh/gpu-memory',
  'koordinator.sh/gpu-memory-ratio',
  'koordinator.sh/gpu.shared',
  'nvidia.com/gpu',
  'amd.com/gpu',
  'huawei.com/npu-core',
  // Names a plain object answers for: a resource so named is only a resource.
  'constructor',
  'valueOf',
  '__proto__',
];
/** Plain resources, drawn more often: most pods ask for nothing else. */
const PLAIN = ['cpu', 'memory', 'ephemeral-storage'];
const QUANTITIES = ['0', '1', '2', '4', '100', '150', '200', '250', '500m', '1500m', '1Gi', '512Mi', '50'];
const PRIORITIES = [0, 0, 0, 1000, 3500, 5500, 5999, 7500, 9500, 2_000_000_000];

function resourceList(rng: Rng): JsonObject | undefined {
  if (rng.chance(0.2)) return undefined;
  const list: JsonObject = {};
  for (let i = rng.range(1, 3); i > 0; i--) {
    putOwn(list, rng.chance(0.6) ? rng.pick(PLAIN) : rng.pick(RESOURCES), rng.pick(QUANTITIES));
  }
  return list;
}

function container(rng: Rng, name: string, init: boolean): JsonObject {
  const limits = rng.chance(0.5) ? resourceList(rng) : undefined;
  // The API server defaults requests from limits (SetDefaults_Pod, containers and init containers)
  // before any webhook sees the pod, and again after each mutating webhook's patch.
  const asked = resourceList(rng);
  const requests = limits ? { ...limits, ...asked } : asked;
  return {
    name,
    image: 'registry.invalid/app:1',
    // The API server always writes resources (a struct), empty when nothing is asked for.
    resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) },
    ...(init && rng.chance(0.3) ? { restartPolicy: 'Always' } : {}),
  };
}

/** Labels the state's profiles select on, so some pods match them. */
function labelsFromState(rng: Rng, state: GeneratedState): Record<string, string> {
  const labels: Record<string, string> = {};
  const profile = state.profiles.length > 0 ? rng.pick(state.profiles) : undefined;
  const selector = asObject(profile?.spec.selector);
  for (const [key, value] of Object.entries(asObject(selector?.matchLabels) ?? {})) {
    if (typeof value === 'string' && rng.chance(0.8)) labels[key] = value;
  }
  for (const item of asArray(selector?.matchExpressions)) {
    const expression = asObject(item);
    const values = asArray(expression?.values).filter((each): each is string => typeof each === 'string');
    if (typeof expression?.key !== 'string' || !rng.chance(0.7)) continue;
    labels[expression.key] = values.length > 0 ? rng.pick(values) : 'any';
  }
  if (state.quotas.length > 0 && rng.chance(0.1)) {
    const quota = rng.pick(state.quotas);
    const name = asObject(quota.metadata)?.name;
    if (typeof name === 'string') labels[Q('name')] = name;
  }
  return labels;
}

function podLabels(rng: Rng, state: GeneratedState): Record<string, string> {
  const labels: Record<string, string> = rng.chance(0.4) ? labelsFromState(rng, state) : {};
  const keys = Object.keys(POD_LABELS);
  for (let i = rng.pick([0, 0, 1, 1, 2, 3]); i > 0; i--) {
    const key = rng.pick(keys);
    putOwn(labels, key, rng.pick(POD_LABELS[key] ?? ['x']));
  }
  if (rng.chance(0.05)) labels[Q('name')] = rng.pick(['koordinator-default-quota', 'no-such-quota', '']);
  return labels;
}

function podAnnotations(rng: Rng): Record<string, string> {
  const annotations: Record<string, string> = {};
  if (rng.chance(0.3)) annotations.owner = 'fuzz';
  if (rng.chance(0.03)) annotations['scheduling.koordinator.sh/reserve-pod'] = 'true';
  if (rng.chance(0.05)) {
    annotations['node.koordinator.sh/extended-resource-spec'] = rng.pick([
      '{}',
      '{"containers":{"main":{"requests":{"kubernetes.io/batch-cpu":"1k"}}}}',
      'not json',
    ]);
  }
  return annotations;
}

/** A pod as the API server hands it to webhooks. */
function pod(rng: Rng, state: GeneratedState, namespace: string, name: string): KubeObject {
  const labels = podLabels(rng, state);
  const annotations = podAnnotations(rng);
  const spec: JsonObject = {
    containers: Array.from({ length: rng.range(1, 3) }, (_, i) =>
      container(rng, i === 0 ? 'main' : `c${i}`, false),
    ),
  };
  if (rng.chance(0.2)) spec.initContainers = [container(rng, 'init', true)];
  // Pod-level resources (PodLevelResources, Kubernetes 1.34 on): cpu, memory and hugepages only.
  if (rng.chance(0.1)) {
    const requests = { cpu: rng.pick(QUANTITIES), ...(rng.chance(0.5) ? { memory: '1Gi' } : {}) };
    spec.resources = rng.chance(0.3) ? { requests, limits: requests } : { requests };
  }
  if (rng.chance(0.1))
    spec.overhead = { cpu: '100m', ...(rng.chance(0.3) ? { 'kubernetes.io/batch-cpu': '10' } : {}) };
  if (rng.chance(0.95)) spec.priority = rng.pick(PRIORITIES);
  if (rng.chance(0.2)) spec.priorityClassName = rng.pick(['koord-batch', 'koord-prod', 'plain-high']);
  if (rng.chance(0.1)) spec.nodeSelector = { 'gpu.nvidia.com/class': 'a100' };
  if (rng.chance(0.1)) {
    spec.affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }],
        },
      },
    };
  }
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      ...(Object.keys(labels).length > 0 ? { labels } : {}),
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
    },
    spec,
  };
}

/** The pod before an UPDATE: the same pod, some of the labels Koordinator checks changed or not. */
function previous(rng: Rng, state: GeneratedState, current: KubeObject): KubeObject {
  const old = structuredClone(current);
  const labels = { ...((asObject(old.metadata.labels) ?? {}) as Record<string, string>) };
  for (let i = rng.pick([0, 0, 1, 2]); i > 0; i--) {
    const key = rng.pick([...Object.keys(POD_LABELS), Q('name')]);
    if (rng.chance(0.4)) Reflect.deleteProperty(labels, key);
    else putOwn(labels, key, rng.pick(POD_LABELS[key] ?? ['leaf', 'quota-a']));
  }
  if (Object.keys(labels).length > 0) old.metadata.labels = labels;
  else Reflect.deleteProperty(old.metadata, 'labels');
  if (rng.chance(0.1)) (old.spec as JsonObject).priority = rng.pick(PRIORITIES);
  if (rng.chance(0.1) && state.quotas.length > 0) old.metadata.labels = { ...labels, [Q('name')]: 'shared' };
  return old;
}

/**
 * The pod before an in-place resize (`pods/resize`): labels and everything else alike, the
 * containers' requests (and limits) as they were, and a status the kubelet may have written.
 */
function beforeResize(rng: Rng, current: KubeObject): KubeObject {
  const old = structuredClone(current);
  for (const each of asArray(asObject(old.spec)?.containers)) {
    const container = asObject(each);
    if (container && rng.chance(0.7)) container.resources = { requests: { cpu: rng.pick(QUANTITIES) } };
  }
  const status: JsonObject = { phase: 'Running' };
  if (rng.chance(0.5)) {
    status.containerStatuses = asArray(asObject(current.spec)?.containers).map((each) => ({
      name: asObject(each)?.name ?? 'main',
      allocatedResources: { cpu: rng.pick(QUANTITIES) },
      resources: { requests: { cpu: rng.pick(QUANTITIES) } },
    }));
  }
  old.status = status;
  current.status = structuredClone(status);
  return old;
}

/** A pod CREATE, UPDATE or resize review in one of the namespaces. */
export function generateReview(rng: Rng, state: GeneratedState): AdmissionRequest {
  const namespace = rng.pick(NAMESPACES);
  const name = `p-${rng.int(1000)}`;
  const object = pod(rng, state, namespace, name);
  const update = rng.chance(0.3);
  const resize = update && rng.chance(0.3);
  return {
    uid: 'blast-radius',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    ...(resize ? { subResource: 'resize' } : {}),
    name,
    namespace,
    operation: update ? 'UPDATE' : 'CREATE',
    userInfo: { username: 'fuzz' },
    object,
    oldObject: resize ? beforeResize(rng, object) : update ? previous(rng, state, object) : null,
    dryRun: false,
  };
}
