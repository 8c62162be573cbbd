/**
 * Generated reviews for the seven Kthena v1.0.0 paths: objects drawn from small vocabularies that
 * reach every rule of every handler (worker types per backend type, replica bounds, images,
 * targets, metrics and ratio constraints, ModelServing names, roles, rollout, gang and recovery,
 * route weights and regexes), mostly well-typed, now and then a field of the wrong JSON type (the
 * decoding refusal), under CREATE and UPDATE.
 */
import type { JsonObject, JsonValue } from '../../../webhook/admission/types.js';
import type { Rng } from '../../fuzz/prng.js';
import { withDrawnKey } from '../../fuzz/prototype-keys.js';

export const KTHENA_PATHS = [
  '/mutate/modelbooster',
  '/validate/modelbooster',
  '/mutate/autoscalingpolicy',
  '/validate/autoscalingpolicy',
  '/validate-workload-ai-v1alpha1-modelserving',
  '/validate/modelroute',
  '/validate/modelserver',
] as const;
export type KthenaPath = (typeof KTHENA_PATHS)[number];

interface Kind {
  group: string;
  kind: string;
  resource: string;
}

const workload = (kind: string, resource: string): Kind => ({
  group: 'workload.serving.volcano.sh',
  kind,
  resource,
});
const networking = (kind: string, resource: string): Kind => ({
  group: 'networking.serving.volcano.sh',
  kind,
  resource,
});
const KIND_OF: Record<KthenaPath, Kind> = {
  '/mutate/modelbooster': workload('ModelBooster', 'modelboosters'),
  '/validate/modelbooster': workload('ModelBooster', 'modelboosters'),
  '/mutate/autoscalingpolicy': workload('AutoscalingPolicy', 'autoscalingpolicies'),
  '/validate/autoscalingpolicy': workload('AutoscalingPolicy', 'autoscalingpolicies'),
  '/validate-workload-ai-v1alpha1-modelserving': workload('ModelServing', 'modelservings'),
  '/validate/modelroute': networking('ModelRoute', 'modelroutes'),
  '/validate/modelserver': networking('ModelServer', 'modelservers'),
};

/** Sets `key` when the draw says so (absent otherwise). */
function maybe(rng: Rng, object: JsonObject, key: string, value: () => JsonValue, p = 0.7): void {
  if (rng.chance(p)) object[key] = value();
}

const list = <T extends JsonValue>(rng: Rng, max: number, item: (i: number) => T): T[] =>
  Array.from({ length: rng.int(max + 1) }, (_, i) => item(i));

const IMAGES = [
  'vllm/vllm-openai:v0.10.0',
  '',
  'a b',
  ' ',
  '\t',
  'x\ty',
  'img:latest ',
  'registry/x@sha256:abc',
];
const DURATIONS = ['0s', '30s', '1m', '5m', '30m', '30m0.000000001s', '31m', '-1s', '-1m30s', '1h', '0'];
const QUANTITIES: JsonValue[] = [
  '1',
  '0',
  '-1',
  '100m',
  '-100m',
  '0.5',
  '1.5Gi',
  '1e400',
  '1e3',
  '2',
  3,
  0.25,
  '0.000000001',
];
const REGEXES = [
  '^premium-[a-z]+$',
  '[',
  '(a',
  'a)',
  'a**',
  '\\p{Greek}',
  '\\8',
  '(?P<n>x)',
  'x{1001}',
  '*',
  '[z-a]',
  '.*',
  '(?i)abc',
];

function boosterSpec(rng: Rng): JsonObject {
  const backend: JsonObject = {
    name: 'backend1',
    type: rng.pick(['vLLM', 'SGLang', 'MindIE', 'vLLMDisaggregated', 'MindIEDisaggregated', '']),
    modelURI: 'hf://Qwen/Qwen2.5-0.5B-Instruct',
  };
  maybe(rng, backend, 'replicas', () => rng.pick([0, 1, 3, 1000000, 1000001, -1, 2147483647]), 0.8);
  maybe(rng, backend, 'workers', () =>
    list(rng, 4, () => {
      const worker: JsonObject = {};
      maybe(
        rng,
        worker,
        'type',
        () => rng.pick(['server', 'prefill', 'decode', 'controller', 'coordinator', '', 'other']),
        0.9,
      );
      maybe(rng, worker, 'image', () => rng.pick(IMAGES));
      maybe(rng, worker, 'pods', () => rng.pick([1, 2]), 0.3);
      maybe(rng, worker, 'config', () => ({ 'max-model-len': 4096 }), 0.3);
      return worker;
    }),
  );
  return { backend };
}

function metric(rng: Rng): JsonObject {
  const m: JsonObject = { name: rng.pick(['qps', 'latency', 'kv', '']) };
  maybe(rng, m, 'targetValue', () => rng.pick(QUANTITIES), 0.9);
  return m;
}

function stablePolicy(rng: Rng): JsonObject {
  const policy: JsonObject = {};
  maybe(rng, policy, 'instances', () => rng.pick([0, 1, 4]), 0.4);
  maybe(rng, policy, 'percent', () => rng.pick([0, 100]), 0.4);
  maybe(rng, policy, 'period', () => rng.pick(DURATIONS), 0.5);
  maybe(rng, policy, 'selectPolicy', () => rng.pick(['Or', 'And', '']), 0.3);
  maybe(rng, policy, 'stabilizationWindow', () => rng.pick(DURATIONS), 0.5);
  return policy;
}

function panicPolicy(rng: Rng): JsonObject {
  const policy: JsonObject = {};
  maybe(rng, policy, 'percent', () => rng.pick([0, 200]), 0.4);
  maybe(rng, policy, 'period', () => rng.pick(DURATIONS), 0.5);
  maybe(rng, policy, 'panicThresholdPercent', () => rng.pick([100, 200]), 0.4);
  maybe(rng, policy, 'panicModeHold', () => rng.pick(DURATIONS), 0.5);
  return policy;
}

const targetRef = (rng: Rng): JsonObject => {
  const ref: JsonObject = {};
  maybe(rng, ref, 'kind', () => rng.pick(['ModelServing', 'ModelServing', '', 'Deployment']));
  maybe(rng, ref, 'name', () => rng.pick(['ms', 'ms', '']), 0.8);
  return ref;
};

const ROLE_NAMES = ['prefill', 'decode', 'x', ''];

function policySpec(rng: Rng): JsonObject {
  const spec: JsonObject = { tolerancePercent: rng.pick([0, 10]) };
  maybe(rng, spec, 'metrics', () => list(rng, 3, () => metric(rng)), 0.6);
  if (rng.chance(0.7)) {
    const behavior: JsonObject = {};
    maybe(rng, behavior, 'scaleDown', () => stablePolicy(rng));
    if (rng.chance(0.7)) {
      const scaleUp: JsonObject = {};
      maybe(rng, scaleUp, 'stablePolicy', () => stablePolicy(rng));
      maybe(rng, scaleUp, 'panicPolicy', () => panicPolicy(rng));
      behavior.scaleUp = scaleUp;
    }
    spec.behavior = behavior;
  }
  const targets = rng.pick([1, 1, 1, 1, 0, 2]);
  const kinds = ['homogeneousTarget', 'heterogeneousTarget', 'disaggregatedTarget'];
  const first = rng.int(3);
  for (let t = 0; t < targets; t++) {
    const kind = kinds[(first + t) % 3] ?? 'homogeneousTarget';
    if (kind === 'homogeneousTarget') {
      spec.homogeneousTarget = { target: { targetRef: targetRef(rng) }, minReplicas: 1, maxReplicas: 4 };
    } else if (kind === 'heterogeneousTarget') {
      spec.heterogeneousTarget = {
        params: list(rng, 3, () => ({
          target: { targetRef: targetRef(rng) },
          cost: 10,
          minReplicas: 1,
          maxReplicas: 2,
        })),
      };
    } else {
      const roles: JsonObject = {};
      for (const name of ROLE_NAMES) {
        if (!rng.chance(name === '' ? 0.1 : 0.6)) continue;
        const role: JsonObject = {
          minReplicas: rng.pick([0, 1, 2, 4]),
          maxReplicas: rng.pick([0, 1, 2, 4, 8]),
        };
        maybe(rng, role, 'metrics', () => list(rng, 2, () => metric(rng)), 0.5);
        maybe(
          rng,
          role,
          'metricSources',
          () => {
            const sources: JsonObject = {};
            for (const key of ['qps', 'latency', 'other']) {
              if (rng.chance(0.5)) sources[key] = { pod: { port: 8080 } };
            }
            return sources;
          },
          0.6,
        );
        roles[name] = role;
      }
      const disaggregated: JsonObject = { targetRef: targetRef(rng), roles };
      maybe(
        rng,
        disaggregated,
        'ratioConstraint',
        () => ({
          numeratorRole: rng.pick(ROLE_NAMES),
          denominatorRole: rng.pick(ROLE_NAMES),
          minRatio: rng.pick(QUANTITIES),
          maxRatio: rng.pick(QUANTITIES),
        }),
        0.6,
      );
      spec.disaggregatedTarget = disaggregated;
    }
  }
  return spec;
}

const INT_OR_PERCENT: JsonValue[] = [
  0,
  1,
  3,
  -1,
  '50%',
  '0%',
  '100%',
  '101%',
  'abc',
  '1',
  '-5%',
  '5x%',
  '99999999999999999999%',
];

function container(rng: Rng): JsonObject {
  return { name: 'c', image: rng.pick(IMAGES) };
}

function servingSpec(rng: Rng): JsonObject {
  const spec: JsonObject = { schedulerName: 'volcano' };
  maybe(rng, spec, 'replicas', () => rng.pick([0, 1, 2, 3, -1, 10]), 0.85);
  const names = [
    'prefill',
    'decode',
    'Decode',
    '1x',
    'r-',
    'worker',
    'a-very-long-role-name-for-generated-names',
  ];
  const roles = list(rng, 3, () => {
    const role: JsonObject = {
      name: rng.pick(names),
      entryTemplate: { spec: { containers: list(rng, 2, () => container(rng)) } },
    };
    maybe(rng, role, 'replicas', () => rng.pick([0, 1, 2, -1]), 0.8);
    role.workerReplicas = rng.pick([0, 0, 1, 2, -1]);
    maybe(
      rng,
      role,
      'workerTemplate',
      () => ({ spec: { containers: list(rng, 2, () => container(rng)) } }),
      0.5,
    );
    maybe(rng, role, 'maxUnavailable', () => rng.pick(INT_OR_PERCENT), 0.3);
    return role;
  });
  const template: JsonObject = {};
  if (rng.chance(0.95)) template.roles = roles;
  maybe(
    rng,
    template,
    'gangPolicy',
    () => {
      const minRoleReplicas: JsonObject = {};
      for (const name of ['prefill', 'decode', 'ghost'])
        if (rng.chance(0.5)) minRoleReplicas[name] = rng.pick([-1, 0, 1, 3]);
      return { minRoleReplicas };
    },
    0.3,
  );
  spec.template = template;
  maybe(
    rng,
    spec,
    'rolloutStrategy',
    () => {
      const strategy: JsonObject = { type: rng.pick(['ServingGroupRollingUpdate', 'RoleRollingUpdate', '']) };
      maybe(
        rng,
        strategy,
        'rollingUpdateConfiguration',
        () => {
          const configuration: JsonObject = {};
          maybe(rng, configuration, 'maxUnavailable', () => rng.pick(INT_OR_PERCENT));
          maybe(rng, configuration, 'partition', () => rng.pick(INT_OR_PERCENT), 0.4);
          return configuration;
        },
        0.6,
      );
      return strategy;
    },
    0.6,
  );
  maybe(
    rng,
    spec,
    'recoveryPolicy',
    () => rng.pick(['', 'ServingGroupRecreate', 'RoleRecreate', 'None']),
    0.5,
  );
  return spec;
}

function stringMatch(rng: Rng): JsonObject {
  return rng.chance(0.7) ? { regex: rng.pick(REGEXES) } : { prefix: '/v1' };
}

function routeSpec(rng: Rng): JsonObject {
  const spec: JsonObject = {};
  maybe(rng, spec, 'modelName', () => rng.pick(['deepseek', '']), 0.7);
  maybe(rng, spec, 'loraAdapters', () => list(rng, 3, () => rng.pick(['lora-a', ''])), 0.3);
  spec.rules = list(rng, 3, () => {
    if (rng.chance(0.05)) return null;
    const rule: JsonObject = { name: 'r' };
    rule.targetModels = list(rng, 3, (): JsonValue => {
      // A null target makes Kthena's handler panic (docs/rules/kthena.md, divergence 2).
      if (rng.chance(0.02)) return null;
      const target: JsonObject = { modelServerName: rng.pick(['server-a', 'server-b', '']) };
      maybe(rng, target, 'weight', () => rng.pick([0, 1, 30, 100, 4294967295]), 0.6);
      return target;
    });
    maybe(
      rng,
      rule,
      'modelMatch',
      () => {
        const match: JsonObject = {};
        maybe(
          rng,
          match,
          'headers',
          () => {
            const headers: JsonObject = {};
            for (const key of ['x-user', 'x-tier']) {
              if (rng.chance(0.6))
                headers[key] = rng.chance(0.8) ? { regex: rng.pick(REGEXES) } : { exact: 'gold' };
            }
            return headers;
          },
          0.6,
        );
        maybe(rng, match, 'uri', () => stringMatch(rng), 0.5);
        return match;
      },
      0.5,
    );
    return rule;
  });
  return spec;
}

function serverSpec(rng: Rng): JsonObject {
  const spec: JsonObject = {
    workloadSelector: { matchLabels: { app: 'deepseek' } },
    workloadPort: { port: rng.pick([8000, 80]) },
    inferenceEngine: rng.pick(['vLLM', 'SGLang']),
  };
  maybe(rng, spec, 'model', () => 'deepseek-ai/DeepSeek-R1', 0.5);
  maybe(
    rng,
    spec,
    'trafficPolicy',
    () => ({ timeout: rng.pick(DURATIONS), retry: { attempts: rng.pick([0, 3]) } }),
    0.5,
  );
  maybe(rng, spec, 'kvConnector', () => ({ type: rng.pick(['http', 'nixl']) }), 0.3);
  return spec;
}

/** Puts one wrong JSON type somewhere Go's decoder looks (Kthena's plain-text 400). */
function mistype(rng: Rng, spec: JsonObject): void {
  const key = rng.pick(Object.keys(spec).length > 0 ? Object.keys(spec) : ['spec']);
  spec[key] = rng.pick<JsonValue>(['text', 12, true, [], {}]);
}

const SPECS: Record<string, (rng: Rng) => JsonObject> = {
  ModelBooster: boosterSpec,
  AutoscalingPolicy: policySpec,
  ModelServing: servingSpec,
  ModelRoute: routeSpec,
  ModelServer: serverSpec,
};

/** Kthena's maps (Go maps in its types): a key in any other object is a field Go ignores. */
const KTHENA_MAPS: ReadonlySet<string> = new Set([
  'roles',
  'metricSources',
  'headers',
  'matchLabels',
  'prefillLabels',
  'decodeLabels',
  'minRoleReplicas',
  'labels',
  'annotations',
  'limits',
  'requests',
]);
/** Share of reviews with a key named like an Object.prototype member in one of those maps. */
const PROTOTYPE_KEY_SHARE = 0.15;

/** One generated AdmissionReview for `path`. */
export function generateKthenaReview(rng: Rng, path: KthenaPath, index: number): JsonObject {
  const review = kthenaReview(rng, path, index);
  if (!rng.chance(PROTOTYPE_KEY_SHARE)) return review;
  const drawn = withDrawnKey(rng, review.request as JsonObject, (site) => KTHENA_MAPS.has(site.field));
  return drawn ? { ...review, request: drawn.request } : review;
}

function kthenaReview(rng: Rng, path: KthenaPath, index: number): JsonObject {
  const { group, kind, resource } = KIND_OF[path];
  const spec = (SPECS[kind] ?? boosterSpec)(rng);
  if (rng.chance(0.04)) mistype(rng, spec);
  const name =
    kind === 'ModelServing'
      ? rng.pick(['sample', 'Sample', 'llama-multinode-with-a-rather-long-name-x'])
      : 'obj';
  const object: JsonObject = {
    apiVersion: `${group}/v1alpha1`,
    kind,
    metadata: { name, namespace: 'ml', uid: `uid-${index}` },
    spec,
  };
  const operation = rng.chance(0.7) ? 'CREATE' : 'UPDATE';
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `review-${index}`,
      kind: { group, version: 'v1alpha1', kind },
      resource: { group, version: 'v1alpha1', resource },
      requestKind: { group, version: 'v1alpha1', kind },
      requestResource: { group, version: 'v1alpha1', resource },
      name,
      namespace: 'ml',
      operation,
      userInfo: { username: 'differential', groups: ['system:authenticated'] },
      object,
      ...(operation === 'UPDATE' ? { oldObject: structuredClone(object) } : {}),
      dryRun: false,
      options: {
        apiVersion: 'meta.k8s.io/v1',
        kind: operation === 'CREATE' ? 'CreateOptions' : 'UpdateOptions',
      },
    },
  };
}
