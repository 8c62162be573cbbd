/**
 * Kthena v1.0.0's networking.serving.volcano.sh/v1alpha1 kinds (ModelRoute, ModelServer) as typed
 * decoders (`pkg/apis/networking/v1alpha1`), decoded as its router webhook's `json.Unmarshal`
 * decodes them. The types the rules read are inferred from the decoders.
 */
import type { KubeObject } from '../../../admission/types.js';
import type { Result } from '../../../util/result.js';
import { list, map, struct } from '../../../util/go-decode/composites.js';
import type { Decoder } from '../../../util/go-decode/decoding.js';
import { decodeParsed } from '../../../util/go-decode/entry-points.js';
import { goDuration, goInt32, goString, goUint32 } from '../../../util/go-decode/scalars.js';
import { FieldPath, type FieldError } from '../../shared/field-errors.js';

export const typeMeta = { apiVersion: goString, kind: goString };
/** Only what the rules read; the API server owns the rest of the metadata. */
export const objectMeta = struct({ name: goString, namespace: goString });

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

type Decoded<D> = D extends Decoder<infer T> ? T : never;

export type ModelRoute = Decoded<typeof modelRoute>;
export type ModelMatch = Decoded<typeof modelMatch>;
export type ModelServer = Decoded<typeof modelServer>;

export const decodeModelRoute = (object: KubeObject): Result<ModelRoute, FieldError[]> =>
  decodeParsed(object, modelRoute, FieldPath.root());

export const decodeModelServer = (object: KubeObject): Result<ModelServer, FieldError[]> =>
  decodeParsed(object, modelServer, FieldPath.root());
