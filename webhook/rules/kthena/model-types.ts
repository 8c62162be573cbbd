/**
 * Kthena's registry.volcano.sh/v1alpha1 kinds (Model, AutoscalingPolicy,
 * AutoscalingPolicyBinding) as of the registry webhook (kthena e4fb6663), as typed decoders. The
 * types the rules read are inferred from the decoders, so the two cannot drift apart.
 */
import { affinity, condition, envFromSource, envVar, resourceRequirements } from './core-types.js';
import { list, map, struct } from '../../util/go-decode/composites.js';
import type { Decoded } from '../../util/go-decode/decoding.js';
import { objectDecoder } from '../../util/go-decode/entry-points.js';
import { objectMeta, typeMeta } from './types/meta.js';
import { panicPolicy, stablePolicy } from './types/workload.js';
import {
  goAnyJson,
  goDuration,
  goInt32,
  goInt64,
  goQuantity,
  goString,
  goUint32,
} from '../../util/go-decode/scalars.js';

const autoscalingPolicySpec = struct({
  tolerancePercent: goInt32,
  metrics: list(struct({ metricName: goString, targetValue: goQuantity }), {}),
  behavior: struct({
    scaleUp: struct({ stablePolicy, panicPolicy }),
    scaleDown: stablePolicy,
  }),
});

const stringMatch = struct({ exact: goString, prefix: goString, regex: goString });

const modelWorker = struct({
  type: goString,
  image: goString,
  replicas: goInt32,
  pods: goInt32,
  resources: resourceRequirements,
  affinity,
  config: goAnyJson,
});

const modelBackend = struct({
  name: goString,
  type: goString,
  modelURI: goString,
  cacheURI: goString,
  envFrom: list(envFromSource, {}),
  env: list(envVar, {}),
  minReplicas: goInt32,
  maxReplicas: goInt32,
  scalingCost: goInt32,
  routeWeight: goUint32,
  scaleToZeroGracePeriod: goDuration,
  workers: list(modelWorker, {}),
  loraAdapters: list(struct({ name: goString, artifactURL: goString }), {}),
  autoscalingPolicy: autoscalingPolicySpec,
});

const model = struct({
  ...typeMeta,
  metadata: objectMeta,
  spec: struct({
    name: goString,
    owner: goString,
    backends: list(modelBackend, {}),
    autoscalingPolicy: autoscalingPolicySpec,
    costExpansionRatePercent: goInt32,
    modelMatch: struct({ headers: map(stringMatch), uri: stringMatch, body: struct({ model: goString }) }),
  }),
  status: struct({
    conditions: list(condition, {}),
    backendStatuses: list(struct({ name: goString, replicas: goInt32 }), {}),
    observedGeneration: goInt64,
  }),
});

const autoscalingPolicy = struct({
  ...typeMeta,
  metadata: objectMeta,
  spec: autoscalingPolicySpec,
  status: struct({}),
});

const target = struct({
  targetRef: struct({
    apiVersion: goString,
    fieldPath: goString,
    kind: goString,
    name: goString,
    namespace: goString,
    resourceVersion: goString,
    uid: goString,
  }),
  additionalMatchLabels: map(goString),
  metricEndpoint: struct({ uri: goString, port: goInt32 }),
});

const autoscalingPolicyBinding = struct({
  ...typeMeta,
  metadata: objectMeta,
  spec: struct({
    policyRef: struct({ name: goString }),
    optimizerConfiguration: struct({
      params: list(struct({ target, cost: goInt32, minReplicas: goInt32, maxReplicas: goInt32 }), {}),
      costExpansionRatePercent: goInt32,
    }),
    scalingConfiguration: struct({ target, minReplicas: goInt32, maxReplicas: goInt32 }),
  }),
  status: struct({}),
});

export type Model = Decoded<typeof model>;
export type ModelBackend = Decoded<typeof modelBackend>;
export type AutoscalingPolicy = Decoded<typeof autoscalingPolicy>;
export type StablePolicy = Decoded<typeof stablePolicy>;
export type PanicPolicy = Decoded<typeof panicPolicy>;
export type AutoscalingPolicyBinding = Decoded<typeof autoscalingPolicyBinding>;

export const decodeModel = objectDecoder(model);

export const decodeAutoscalingPolicy = objectDecoder(autoscalingPolicy);

export const decodeAutoscalingPolicyBinding = objectDecoder(autoscalingPolicyBinding);
