/**
 * Kthena v1.0.0's networking.serving.volcano.sh/v1alpha1 kinds (ModelRoute, ModelServer) as typed
 * decoders (`pkg/apis/networking/v1alpha1`), decoded as its router webhook's `json.Unmarshal`
 * decodes them. The types the rules read are inferred from the decoders.
 */
import { list, map, struct } from '../../../util/go-decode/composites.js';
import type { Decoded } from '../../../util/go-decode/decoding.js';
import { objectDecoder } from '../../../util/go-decode/entry-points.js';
import { goDuration, goInt32, goString, goUint32 } from '../../../util/go-decode/scalars.js';
import { objectMeta, typeMeta } from './meta.js';

const stringMatch = struct({ exact: goString, prefix: goString, regex: goString });

/** `ModelMatch`, which ModelBooster embeds too. */
export const modelMatch = struct({
  // map[string]*StringMatch: a null entry is a nil pointer, kept as undefined.
  headers: map(stringMatch),
  uri: stringMatch,
  body: struct({ model: goString }),
});

const parentReference = struct({
  group: goString,
  kind: goString,
  namespace: goString,
  name: goString,
  sectionName: goString,
  port: goInt32,
});

const modelRoute = struct({
  ...typeMeta,
  metadata: objectMeta,
  spec: struct({
    modelName: goString,
    loraAdapters: list(goString, ''),
    parentRefs: list(parentReference, {}),
    // []*Rule and []*TargetModel: a null element is a nil pointer.
    rules: list(
      struct({
        name: goString,
        modelMatch,
        targetModels: list(struct({ modelServerName: goString, weight: goUint32 })),
      }),
    ),
    rateLimit: struct({
      inputTokensPerUnit: goUint32,
      outputTokensPerUnit: goUint32,
      unit: goString,
      global: struct({ redis: struct({ address: goString }) }),
    }),
  }),
  status: struct({}),
});

const modelServer = struct({
  ...typeMeta,
  metadata: objectMeta,
  spec: struct({
    model: goString,
    inferenceEngine: goString,
    workloadSelector: struct({
      matchLabels: map(goString),
      pdGroup: struct({ groupKey: goString, prefillLabels: map(goString), decodeLabels: map(goString) }),
    }),
    workloadPort: struct({ port: goInt32, protocol: goString }),
    trafficPolicy: struct({
      timeout: goDuration,
      retry: struct({ attempts: goInt32, retryInterval: goDuration }),
    }),
    kvConnector: struct({ type: goString }),
  }),
  status: struct({}),
});

export type ModelRoute = Decoded<typeof modelRoute>;
export type ModelMatch = Decoded<typeof modelMatch>;
export type ModelServer = Decoded<typeof modelServer>;

export const decodeModelRoute = objectDecoder(modelRoute);

export const decodeModelServer = objectDecoder(modelServer);
