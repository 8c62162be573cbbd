/**
 * What the webhooks' example reviews (webhook/webhooks/<name>/examples.ts) are built from: the
 * request envelope, and the objects several webhooks share, each with its hot spots (the places
 * where hostile values hurt most: quantities, JSON or YAML carried in strings, label values,
 * names, durations, free-form objects).
 */
import type { JsonObject, JsonValue } from '../../webhook/admission/types.js';
import type { KindDefinition } from '../../webhook/kinds.js';
import {
  ENHANCED_RULES,
  KOORDINATOR_NAMESPACE,
  OPERATOR_NAMESPACE,
  SLO_THRESHOLD_CONFIG,
  TIER_MAPPING_YAML,
} from './world.js';

export type HotKind =
  'quantity' | 'json-text' | 'yaml-text' | 'label-value' | 'name' | 'duration' | 'int' | 'free-form';

/** A place in the request (keys and indexes from request's root) and what lives there. */
export interface HotSpot {
  at: (string | number)[];
  kind: HotKind;
}

export interface Seed {
  path: string;
  label: string;
  /** The AdmissionReview's `request`, without its uid. */
  request: JsonObject;
  hot: HotSpot[];
}

export const Q = (key: string): string => `quota.scheduling.koordinator.sh/${key}`;
export const RATIO = 'node.koordinator.sh/resource-amplification-ratio';
export const RAW = 'node.koordinator.sh/raw-allocatable';
export const SPEC_ANNOTATION = 'node.koordinator.sh/extended-resource-spec';

export function request(
  kind: KindDefinition,
  operation: 'CREATE' | 'UPDATE' | 'DELETE',
  object: JsonObject | null,
  extra: JsonObject = {},
): JsonObject {
  const metadata = (object?.metadata ?? {}) as JsonObject;
  return {
    kind: { group: kind.group, version: kind.version, kind: kind.kind },
    resource: { group: kind.group, version: kind.version, resource: kind.plural },
    ...(typeof metadata.name === 'string' ? { name: metadata.name } : {}),
    ...(typeof metadata.namespace === 'string' ? { namespace: metadata.namespace } : {}),
    operation,
    userInfo: { username: 'fuzz', groups: ['system:authenticated'] },
    ...(operation === 'DELETE' ? {} : { object }),
    ...(operation === 'UPDATE' || operation === 'DELETE' ? { oldObject: structuredClone(object) } : {}),
    dryRun: false,
    ...extra,
  };
}

export function pod(
  namespace: string,
  labels: JsonObject,
  containers: JsonValue[],
  extra: JsonObject = {},
): JsonObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p-1', namespace, labels, annotations: { owner: 'fuzz' } },
    spec: { containers, ...extra },
  };
}

export const both = (resources: JsonObject): JsonObject => ({ requests: resources, limits: resources });

/** Hot spots of container 0's resources and the pod's labels and annotations. */
export function podHot(
  prefix: string,
  containerKeys: string[],
  labelKeys: string[],
  annotationKeys: string[],
): HotSpot[] {
  return [
    ...containerKeys.flatMap((key): HotSpot[] => [
      { at: [prefix, 'spec', 'containers', 0, 'resources', 'requests', key], kind: 'quantity' },
      { at: [prefix, 'spec', 'containers', 0, 'resources', 'limits', key], kind: 'quantity' },
    ]),
    ...labelKeys.map((key): HotSpot => ({ at: [prefix, 'metadata', 'labels', key], kind: 'label-value' })),
    ...annotationKeys.map((key): HotSpot => ({
      at: [prefix, 'metadata', 'annotations', key],
      kind: 'json-text',
    })),
    { at: [prefix, 'metadata', 'name'], kind: 'name' },
    { at: [prefix, 'spec', 'containers', 0, 'name'], kind: 'name' },
    { at: [prefix, 'spec', 'priority'], kind: 'int' },
    { at: [prefix, 'spec', 'overhead', 'cpu'], kind: 'quantity' },
  ];
}

/** Pods of Koordinator's and KubeNexus's webhooks, with their hot spots. */
export function podFixtures() {
  const colocated = pod(
    'default',
    { 'koordinator-colocation-pod': 'true', app: 'web', [Q('name')]: 'leaf' },
    [
      { name: 'main', image: 'app:1', resources: both({ cpu: '1', memory: '2Gi' }) },
      {
        name: 'batch',
        image: 'job:1',
        resources: both({ 'kubernetes.io/batch-cpu': '1000', 'kubernetes.io/batch-memory': '4Gi' }),
      },
    ],
    {
      initContainers: [{ name: 'init', resources: both({ cpu: '500m', memory: '1Gi' }) }],
      overhead: { cpu: '100m' },
      priority: 5999,
    },
  );
  const gpu = pod(
    'team',
    { team: 'a', 'koordinator.sh/qosClass': 'LS', 'workload.kubenexus.io/type': 'inference' },
    [
      {
        name: 'main',
        image: 'cuda:12',
        resources: both({ 'koordinator.sh/gpu': '200', cpu: '2', memory: '8Gi', 'nvidia.com/gpu': '1' }),
      },
    ],
    { priority: 9500, priorityClassName: 'koord-prod' },
  );
  gpu.metadata = { ...(gpu.metadata as JsonObject), annotations: { [SPEC_ANNOTATION]: '{"containers":{}}' } };
  const quotaPod = pod(
    'team',
    {
      team: 'a',
      [Q('name')]: 'tight',
      [Q('preemptible')]: 'false',
      'koordinator.sh/priority-class': 'koord-batch',
    },
    [{ name: 'main', image: 'app:1', resources: { requests: { cpu: '1', memory: '1Gi' } } }],
  );
  const optedIn = pod('team', { team: 'a', 'pod.koordinator.sh/mutating-update': 'true', app: 'web' }, [
    {
      name: 'main',
      image: 'app:1',
      resources: both({ 'koordinator.sh/gpu-core': '100', 'koordinator.sh/gpu-memory-ratio': '100' }),
    },
  ]);
  const hotColocated = podHot(
    'object',
    ['cpu', 'memory'],
    ['koordinator-colocation-pod', Q('name')],
    [],
  ).concat(
    {
      at: ['object', 'spec', 'containers', 1, 'resources', 'requests', 'kubernetes.io/batch-cpu'],
      kind: 'quantity',
    },
    { at: ['object', 'spec', 'initContainers', 0, 'resources', 'requests', 'memory'], kind: 'quantity' },
  );
  const hotGpu = podHot(
    'object',
    ['koordinator.sh/gpu', 'nvidia.com/gpu', 'memory'],
    ['koordinator.sh/qosClass', 'workload.kubenexus.io/type'],
    [SPEC_ANNOTATION],
  );
  const hotQuota = podHot(
    'object',
    ['cpu', 'memory'],
    [Q('name'), Q('preemptible'), 'koordinator.sh/priority-class'],
    [],
  );
  const hotOpted = podHot(
    'object',
    ['koordinator.sh/gpu-core', 'koordinator.sh/gpu-memory-ratio'],
    ['pod.koordinator.sh/mutating-update'],
    [],
  );
  return { colocated, gpu, quotaPod, optedIn, hotColocated, hotGpu, hotQuota, hotOpted };
}

export function node(
  labels: JsonObject,
  annotations: JsonObject,
  allocatable: JsonObject | null,
): JsonObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'n1', labels, annotations },
    ...(allocatable ? { status: { allocatable, capacity: allocatable } } : {}),
  };
}

/** A node with amplified resources, and its hot spots. */
export function nodeFixture() {
  const amplified = node(
    { pool: 'a' },
    { [RATIO]: '{"cpu":1.5,"memory":2}', [RAW]: '{"cpu":"4","memory":"8Gi"}' },
    {
      cpu: '4',
      memory: '8Gi',
      pods: '110',
    },
  );
  const hot: HotSpot[] = [
    { at: ['object', 'metadata', 'annotations', RATIO], kind: 'json-text' },
    { at: ['object', 'metadata', 'annotations', RAW], kind: 'json-text' },
    { at: ['object', 'status', 'allocatable', 'cpu'], kind: 'quantity' },
    { at: ['object', 'status', 'allocatable', 'memory'], kind: 'quantity' },
    { at: ['oldObject', 'status', 'allocatable', 'cpu'], kind: 'quantity' },
    { at: ['oldObject', 'metadata', 'annotations', RAW], kind: 'json-text' },
    { at: ['object', 'metadata', 'labels', 'pool'], kind: 'label-value' },
    { at: ['object', 'metadata', 'name'], kind: 'name' },
  ];
  return { amplified, hot };
}

export function elasticQuota(
  name: string,
  labels: JsonObject,
  annotations: JsonObject,
  min: JsonObject,
  max: JsonObject,
): JsonObject {
  return {
    apiVersion: 'scheduling.sigs.k8s.io/v1alpha1',
    kind: 'ElasticQuota',
    metadata: { name, namespace: 'team', labels, annotations },
    spec: { min, max },
  };
}

/** A child quota and a root-level one, and their hot spots. */
export function quotaFixtures() {
  const child = elasticQuota(
    'child',
    { [Q('parent')]: 'parent', [Q('tree-id')]: 't1' },
    { [Q('shared-weight')]: '{"cpu":"4","memory":"8Gi"}', [Q('namespaces')]: '["team"]' },
    { cpu: '1', memory: '1Gi' },
    { cpu: '4', memory: '8Gi' },
  );
  const root = elasticQuota(
    'fresh',
    {},
    { [Q('admission')]: '{"cpu":"2"}' },
    { cpu: '1' },
    { cpu: '10', memory: '20Gi' },
  );
  const hot: HotSpot[] = [
    { at: ['object', 'spec', 'min', 'cpu'], kind: 'quantity' },
    { at: ['object', 'spec', 'max', 'cpu'], kind: 'quantity' },
    { at: ['object', 'spec', 'max', 'memory'], kind: 'quantity' },
    { at: ['object', 'metadata', 'labels', Q('parent')], kind: 'label-value' },
    { at: ['object', 'metadata', 'labels', Q('tree-id')], kind: 'label-value' },
    { at: ['object', 'metadata', 'annotations', Q('shared-weight')], kind: 'json-text' },
    { at: ['object', 'metadata', 'annotations', Q('namespaces')], kind: 'json-text' },
    { at: ['object', 'metadata', 'annotations', Q('admission')], kind: 'json-text' },
    { at: ['object', 'metadata', 'name'], kind: 'name' },
    { at: ['oldObject', 'spec', 'max', 'cpu'], kind: 'quantity' },
  ];
  return { child, root, hot };
}

/** A Reservation with a template, and its hot spots. */
export function reservationFixture() {
  const reservation: JsonObject = {
    apiVersion: 'scheduling.koordinator.sh/v1alpha1',
    kind: 'Reservation',
    metadata: { name: 'r-1', labels: { app: 'web' } },
    spec: {
      owners: [{ object: { name: 'p', namespace: 'team' } }],
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'c', resources: both({ cpu: '2', memory: '4Gi' }) }] },
      },
    },
  };
  const hot: HotSpot[] = [
    { at: ['object', 'spec', 'template'], kind: 'free-form' },
    { at: ['object', 'spec', 'template', 'spec'], kind: 'free-form' },
    {
      at: ['object', 'spec', 'template', 'spec', 'containers', 0, 'resources', 'requests', 'cpu'],
      kind: 'quantity',
    },
    { at: ['object', 'spec', 'ttl'], kind: 'duration' },
    { at: ['object', 'metadata', 'labels', 'app'], kind: 'label-value' },
    { at: ['object', 'metadata', 'name'], kind: 'name' },
  ];
  return { reservation, hot };
}

export function configMap(namespace: string, name: string, data: JsonObject): JsonObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data };
}

/** The ConfigMaps the operator validates. */
export function configMapFixtures() {
  const slo = configMap(KOORDINATOR_NAMESPACE, 'slo-controller-config', {
    'colocation-config': JSON.stringify({
      enable: true,
      cpuReclaimThresholdPercent: 60,
      metricAggregateDurationSeconds: 300,
    }),
    'resource-threshold-config': SLO_THRESHOLD_CONFIG,
    'system-config': JSON.stringify({ clusterStrategy: { watermarkScaleFactor: 150 } }),
    'resource-qos-config': JSON.stringify({
      clusterStrategy: { lsClass: { cpuQOS: { enable: true, groupIdentity: 2 } } },
    }),
    'cpu-burst-config': JSON.stringify({ clusterStrategy: { policy: 'auto', cpuBurstPercent: 1000 } }),
  });
  const sloHot: HotSpot[] = [
    'colocation-config',
    'resource-threshold-config',
    'system-config',
    'resource-qos-config',
    'cpu-burst-config',
    'host-application-config',
    'cpu-normalization-config',
  ].map((key) => ({ at: ['object', 'data', key], kind: 'json-text' }));
  const tier = configMap(OPERATOR_NAMESPACE, 'gpu-tier-mapping', { 'mapping.yaml': TIER_MAPPING_YAML });
  const enhanced = configMap(KOORDINATOR_NAMESPACE, 'pod-enhanced-validator-config', {
    enable: 'true',
    rules: ENHANCED_RULES,
  });
  return { slo, sloHot, tier, enhanced };
}

/** Kthena v1.0.0's kinds, from its own examples. */
export function kthenaFixtures() {
  const booster: JsonObject = {
    apiVersion: 'workload.serving.volcano.sh/v1alpha1',
    kind: 'ModelBooster',
    metadata: { name: 'demo', namespace: 'ml' },
    spec: {
      backend: {
        name: 'backend1',
        type: 'vLLM',
        modelURI: 'hf://Qwen/Qwen2.5-0.5B-Instruct',
        replicas: 1,
        env: [{ name: 'HF_ENDPOINT', value: 'https://huggingface.co' }],
        workers: [
          {
            type: 'server',
            image: 'vllm/vllm-openai:v0.10.0',
            replicas: 1,
            pods: 1,
            config: { 'served-model-name': 'Qwen2.5-0.5B-Instruct', 'max-model-len': 32768 },
            resources: both({ cpu: '4', memory: '8Gi' }),
          },
        ],
      },
    },
  };
  const boosterHot: HotSpot[] = [
    { at: ['object', 'spec', 'backend', 'workers', 0, 'config'], kind: 'free-form' },
    { at: ['object', 'spec', 'backend', 'workers', 0, 'resources', 'limits', 'cpu'], kind: 'quantity' },
    { at: ['object', 'spec', 'backend', 'replicas'], kind: 'int' },
    { at: ['object', 'spec', 'backend', 'workers', 0, 'image'], kind: 'name' },
    { at: ['object', 'spec', 'backend', 'workers'], kind: 'free-form' },
  ];
  const policy: JsonObject = {
    apiVersion: 'workload.serving.volcano.sh/v1alpha1',
    kind: 'AutoscalingPolicy',
    metadata: { name: 'pd-policy', namespace: 'ml' },
    spec: {
      tolerancePercent: 10,
      behavior: {
        scaleDown: {
          period: '15s',
          stabilizationWindow: '30s',
          instances: 1,
          percent: 100,
          selectPolicy: 'Or',
        },
        scaleUp: {
          stablePolicy: {
            period: '15s',
            stabilizationWindow: '0s',
            instances: 2,
            percent: 100,
            selectPolicy: 'Or',
          },
          panicPolicy: { period: '5s', percent: 200, panicThresholdPercent: 200, panicModeHold: '30s' },
        },
      },
      disaggregatedTarget: {
        targetRef: { kind: 'ModelServing', name: 'pd-ms' },
        roles: {
          prefill: {
            minReplicas: 1,
            maxReplicas: 8,
            metrics: [{ name: 'prefill_rps', targetValue: '0.5' }],
            metricSources: {
              prefill_rps: { prometheus: { serverURL: 'http://prom:9090', query: 'sum(up)' } },
            },
          },
          decode: {
            minReplicas: 1,
            maxReplicas: 16,
            metrics: [{ name: 'decode_rps', targetValue: '0.5' }],
            metricSources: {
              decode_rps: { prometheus: { serverURL: 'http://prom:9090', query: 'sum(up)' } },
            },
          },
        },
        ratioConstraint: {
          numeratorRole: 'prefill',
          denominatorRole: 'decode',
          minRatio: '0.25',
          maxRatio: '1',
        },
      },
    },
  };
  const policyHot: HotSpot[] = [
    {
      at: ['object', 'spec', 'disaggregatedTarget', 'roles', 'prefill', 'metrics', 0, 'targetValue'],
      kind: 'quantity',
    },
    { at: ['object', 'spec', 'disaggregatedTarget', 'ratioConstraint', 'minRatio'], kind: 'quantity' },
    { at: ['object', 'spec', 'disaggregatedTarget', 'ratioConstraint', 'maxRatio'], kind: 'quantity' },
    { at: ['object', 'spec', 'disaggregatedTarget', 'roles', 'decode', 'maxReplicas'], kind: 'int' },
    { at: ['object', 'spec', 'behavior', 'scaleUp', 'panicPolicy', 'period'], kind: 'duration' },
    { at: ['object', 'spec', 'behavior', 'scaleDown', 'stabilizationWindow'], kind: 'duration' },
    { at: ['object', 'spec', 'disaggregatedTarget', 'roles'], kind: 'free-form' },
    { at: ['object', 'spec', 'behavior'], kind: 'free-form' },
  ];
  const container = {
    name: 'vllm',
    image: 'vllm/vllm-openai:v0.10.0',
    resources: both({ cpu: '2', memory: '4Gi' }),
  };
  const serving: JsonObject = {
    apiVersion: 'workload.serving.volcano.sh/v1alpha1',
    kind: 'ModelServing',
    metadata: { name: 'sample', namespace: 'ml' },
    spec: {
      schedulerName: 'volcano',
      replicas: 2,
      recoveryPolicy: 'ServingGroupRecreate',
      rolloutStrategy: {
        type: 'ServingGroupRollingUpdate',
        rollingUpdateConfiguration: { maxUnavailable: '50%' },
      },
      template: {
        restartGracePeriodSeconds: 60,
        gangPolicy: { minRoleReplicas: { prefill: 1 } },
        roles: [
          {
            name: 'prefill',
            replicas: 2,
            entryTemplate: { spec: { containers: [container] } },
            workerReplicas: 1,
            workerTemplate: { spec: { containers: [container] } },
          },
          {
            name: 'decode',
            replicas: 1,
            entryTemplate: { spec: { containers: [container] } },
            workerReplicas: 0,
          },
        ],
      },
    },
  };
  const servingHot: HotSpot[] = [
    { at: ['object', 'metadata', 'name'], kind: 'name' },
    { at: ['object', 'spec', 'template', 'roles', 0, 'name'], kind: 'name' },
    { at: ['object', 'spec', 'replicas'], kind: 'int' },
    { at: ['object', 'spec', 'template', 'roles', 0, 'workerReplicas'], kind: 'int' },
    {
      at: ['object', 'spec', 'rolloutStrategy', 'rollingUpdateConfiguration', 'maxUnavailable'],
      kind: 'free-form',
    },
    { at: ['object', 'spec', 'template', 'gangPolicy', 'minRoleReplicas', 'prefill'], kind: 'int' },
    {
      at: [
        'object',
        'spec',
        'template',
        'roles',
        0,
        'entryTemplate',
        'spec',
        'containers',
        0,
        'resources',
        'limits',
        'cpu',
      ],
      kind: 'quantity',
    },
    { at: ['object', 'spec', 'template', 'roles', 1, 'entryTemplate', 'spec'], kind: 'free-form' },
  ];
  const route: JsonObject = {
    apiVersion: 'networking.serving.volcano.sh/v1alpha1',
    kind: 'ModelRoute',
    metadata: { name: 'deepseek-subset', namespace: 'ml' },
    spec: {
      modelName: 'deepseek-subset',
      rules: [
        {
          name: 'deepseek-r1-route',
          modelMatch: { headers: { 'x-user': { regex: '^premium-[a-z]+$' } }, uri: { prefix: '/v1' } },
          targetModels: [
            { modelServerName: 'deepseek-r1-1-5b-v1', weight: 70 },
            { modelServerName: 'deepseek-r1-1-5b-v2', weight: 30 },
          ],
        },
      ],
    },
  };
  const routeHot: HotSpot[] = [
    { at: ['object', 'spec', 'rules', 0, 'modelMatch', 'headers', 'x-user', 'regex'], kind: 'name' },
    { at: ['object', 'spec', 'rules', 0, 'targetModels', 0, 'weight'], kind: 'int' },
    { at: ['object', 'spec', 'rules', 0, 'targetModels'], kind: 'free-form' },
    { at: ['object', 'spec', 'modelName'], kind: 'name' },
  ];
  const server: JsonObject = {
    apiVersion: 'networking.serving.volcano.sh/v1alpha1',
    kind: 'ModelServer',
    metadata: { name: 'deepseek-r1-1-5b', namespace: 'ml' },
    spec: {
      workloadSelector: { matchLabels: { app: 'deepseek-r1-1-5b' } },
      workloadPort: { port: 8000 },
      model: 'deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B',
      inferenceEngine: 'vLLM',
      trafficPolicy: { timeout: '10s', retry: { attempts: 3, retryInterval: '1s' } },
    },
  };
  const serverHot: HotSpot[] = [
    { at: ['object', 'spec', 'trafficPolicy', 'timeout'], kind: 'duration' },
    { at: ['object', 'spec', 'workloadPort', 'port'], kind: 'int' },
    { at: ['object', 'spec', 'workloadSelector', 'matchLabels', 'app'], kind: 'label-value' },
  ];
  return { booster, boosterHot, policy, policyHot, serving, servingHot, route, routeHot, server, serverHot };
}
