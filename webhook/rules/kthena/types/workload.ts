/**
 * Kthena v1.0.0's workload.serving.volcano.sh/v1alpha1 kinds (ModelBooster, AutoscalingPolicy,
 * ModelServing) as typed decoders (`pkg/apis/workload/v1alpha1`), decoded as its webhooks'
 * `json.Unmarshal` decodes them. The types the rules read are inferred from the decoders.
 *
 * ModelServing's pod templates are `corev1.PodSpec`s; of them only the containers' images are
 * decoded (the one field the validator reads). The webhook only validates ModelServing, and the API
 * server checks the rest against the CRD's schema before any validating webhook is called.
 */
import { list, map, struct } from '../../../util/go-decode/composites.js';
import type { Decoded, Decoder } from '../../../util/go-decode/decoding.js';
import { objectDecoder } from '../../../util/go-decode/entry-points.js';
import {
  goAnyJson,
  goBool,
  goDuration,
  goInt32,
  goInt64,
  goIntOrString,
  goQuantity,
  goString,
} from '../../../util/go-decode/scalars.js';
import { affinity, condition, envFromSource, envVar, resourceRequirements } from '../core-types.js';
import { objectMeta, typeMeta } from './meta.js';
import { modelMatch } from './networking.js';

const strings: Decoder<string[]> = list(goString, '');

const toleration = struct({
  key: goString,
  operator: goString,
  value: goString,
  effect: goString,
  tolerationSeconds: goInt64,
});

const modelWorker = struct({
  type: goString,
  image: goString,
  replicas: goInt32,
  pods: goInt32,
  resources: resourceRequirements,
  affinity,
  tolerations: list(toleration, {}),
  config: goAnyJson,
});

const modelBooster = struct({
  ...typeMeta,
  metadata: objectMeta,
  spec: struct({
    name: goString,
    owner: goString,
    backend: struct({
      name: goString,
      type: goString,
      modelURI: goString,
      cacheURI: goString,
      envFrom: list(envFromSource, {}),
      env: list(envVar, {}),
      replicas: goInt32,
      workers: list(modelWorker, {}),
      schedulerName: goString,
      runtimeClassName: goString,
    }),
    modelMatch,
  }),
  status: struct({ conditions: list(condition, {}), observedGeneration: goInt64 }),
});

export const stablePolicy = struct({
  instances: goInt32,
  percent: goInt32,
  period: goDuration,
  selectPolicy: goString,
  stabilizationWindow: goDuration,
});

export const panicPolicy = struct({
  percent: goInt32,
  period: goDuration,
  panicThresholdPercent: goInt32,
  panicModeHold: goDuration,
});

/** `AutoscalingPolicyBehavior`, the part the mutator defaults. */
export const behavior = struct({ scaleUp: struct({ stablePolicy, panicPolicy }), scaleDown: stablePolicy });

const metric = struct({ name: goString, targetValue: goQuantity });
const labelSelector = struct({
  matchLabels: map(goString),
  matchExpressions: list(struct({ key: goString, operator: goString, values: strings }), {}),
});
const metricSource = struct({
  pod: struct({ name: goString, uri: goString, port: goInt32, labelSelector }),
  prometheus: struct({ serverURL: goString, query: goString, auth: struct({}) }),
});
const objectReference = struct({
  kind: goString,
  namespace: goString,
  name: goString,
  uid: goString,
  apiVersion: goString,
  resourceVersion: goString,
  fieldPath: goString,
});
const target = struct({ targetRef: objectReference, metricSources: map(metricSource, {}) });
const scalingStatus = struct({
  name: goString,
  currentReplicas: goInt32,
  desiredReplicas: goInt32,
  mode: goString,
  lastScaleTime: goAnyJson,
});

const autoscalingPolicy = struct({
  ...typeMeta,
  metadata: objectMeta,
  spec: struct({
    tolerancePercent: goInt32,
    metrics: list(metric, {}),
    behavior,
    homogeneousTarget: struct({ target, minReplicas: goInt32, maxReplicas: goInt32 }),
    heterogeneousTarget: struct({
      params: list(struct({ target, cost: goInt32, minReplicas: goInt32, maxReplicas: goInt32 }), {}),
      costExpansionRatePercent: goInt32,
    }),
    disaggregatedTarget: struct({
      targetRef: objectReference,
      // A null role is Go's zero RoleScalingParam.
      roles: map(
        struct({
          minReplicas: goInt32,
          maxReplicas: goInt32,
          metrics: list(metric, {}),
          metricSources: map(metricSource, {}),
        }),
        {},
      ),
      ratioConstraint: struct({
        numeratorRole: goString,
        denominatorRole: goString,
        minRatio: goQuantity,
        maxRatio: goQuantity,
      }),
    }),
  }),
  status: struct({
    observedGeneration: goInt64,
    conditions: list(condition, {}),
    homogeneousStatus: scalingStatus,
    disaggregatedStatus: struct({
      roles: list(scalingStatus, {}),
      ratioStatus: struct({ numeratorRole: goString, denominatorRole: goString, currentRatio: goString }),
      ratioAdjusted: goBool,
    }),
    heterogeneousStatus: list(scalingStatus, {}),
  }),
});

const podTemplate = struct({
  metadata: struct({ labels: map(goString), annotations: map(goString) }),
  spec: struct({ containers: list(struct({ name: goString, image: goString }), {}) }),
});

const modelServing = struct({
  ...typeMeta,
  metadata: objectMeta,
  spec: struct({
    replicas: goInt32,
    schedulerName: goString,
    plugins: list(
      struct({
        name: goString,
        type: goString,
        config: goAnyJson,
        scope: struct({ roles: strings, target: goString }),
      }),
      {},
    ),
    template: struct({
      restartGracePeriodSeconds: goInt64,
      gangPolicy: struct({ minRoleReplicas: map(goInt32, 0) }),
      networkTopology: goAnyJson,
      roles: list(
        struct({
          name: goString,
          replicas: goInt32,
          entryTemplate: podTemplate,
          workerReplicas: goInt32,
          workerTemplate: podTemplate,
          maxUnavailable: goIntOrString,
        }),
        {},
      ),
    }),
    rolloutStrategy: struct({
      type: goString,
      rollingUpdateConfiguration: struct({ maxUnavailable: goIntOrString, partition: goIntOrString }),
    }),
    recoveryPolicy: goString,
  }),
  status: struct({
    observedGeneration: goInt64,
    replicas: goInt32,
    currentReplicas: goInt32,
    updatedReplicas: goInt32,
    availableReplicas: goInt32,
    currentRevision: goString,
    updateRevision: goString,
    conditions: list(condition, {}),
    labelSelector: goString,
  }),
});

export type ModelBooster = Decoded<typeof modelBooster>;
export type ModelWorker = Decoded<typeof modelWorker>;
export type AutoscalingPolicy = Decoded<typeof autoscalingPolicy>;
export type AutoscalingPolicyMetric = Decoded<typeof metric>;
export type Behavior = Decoded<typeof behavior>;
export type ModelServing = Decoded<typeof modelServing>;

export const decodeModelBooster = objectDecoder(modelBooster);

export const decodeAutoscalingPolicy = objectDecoder(autoscalingPolicy);

export const decodeModelServing = objectDecoder(modelServing);
