/**
 * The Kubernetes core types Kthena embeds (k8s.io/api v0.33: EnvVar, EnvFromSource,
 * ResourceRequirements, Affinity, and metav1.Condition), as decoders: only their Go field types
 * matter here, since Kthena's webhook never reads them but fails to decode a mistyped one.
 */
import { list, map, struct } from '../../util/go-decode/composites.js';
import type { Decoder } from '../../util/go-decode/decoding.js';
import { goBool, goInt32, goInt64, goQuantity, goString, goTime } from '../../util/go-decode/scalars.js';

const strings: Decoder<string[]> = list(goString, '');

const keySelector = struct({ name: goString, key: goString, optional: goBool });
const localObjectReference = struct({ name: goString, optional: goBool });

export const envVar = struct({
  name: goString,
  value: goString,
  valueFrom: struct({
    fieldRef: struct({ apiVersion: goString, fieldPath: goString }),
    resourceFieldRef: struct({ containerName: goString, resource: goString, divisor: goQuantity }),
    configMapKeyRef: keySelector,
    secretKeyRef: keySelector,
  }),
});

export const envFromSource = struct({
  prefix: goString,
  configMapRef: localObjectReference,
  secretRef: localObjectReference,
});

export const resourceRequirements = struct({
  limits: map(goQuantity),
  requests: map(goQuantity),
  claims: list(struct({ name: goString, request: goString }), {}),
});

const selectorRequirement = struct({ key: goString, operator: goString, values: strings });
const nodeSelectorTerm = struct({
  matchExpressions: list(selectorRequirement, {}),
  matchFields: list(selectorRequirement, {}),
});
const labelSelector = struct({
  matchLabels: map(goString),
  matchExpressions: list(selectorRequirement, {}),
});
const podAffinityTerm = struct({
  labelSelector,
  namespaceSelector: labelSelector,
  namespaces: strings,
  topologyKey: goString,
  matchLabelKeys: strings,
  mismatchLabelKeys: strings,
});
const podAffinity = struct({
  requiredDuringSchedulingIgnoredDuringExecution: list(podAffinityTerm, {}),
  preferredDuringSchedulingIgnoredDuringExecution: list(struct({ weight: goInt32, podAffinityTerm }), {}),
});

export const affinity = struct({
  nodeAffinity: struct({
    requiredDuringSchedulingIgnoredDuringExecution: struct({
      nodeSelectorTerms: list(nodeSelectorTerm, {}),
    }),
    preferredDuringSchedulingIgnoredDuringExecution: list(
      struct({ weight: goInt32, preference: nodeSelectorTerm }),
      {},
    ),
  }),
  podAffinity,
  podAntiAffinity: podAffinity,
});

export const condition = struct({
  type: goString,
  status: goString,
  observedGeneration: goInt64,
  lastTransitionTime: goTime,
  reason: goString,
  message: goString,
});
