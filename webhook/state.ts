/**
 * What a rule may ask of the cluster state. The operator's watch-fed store implements it;
 * every answer comes from memory (O(1) or O(log n) from an index), never from the API server.
 */
import type { AdmissionRequest, Decision } from './admission/types.js';
import type { TierMapping } from './rules/gpu-class/tier-mapping.js';
import type { QuotaView } from './rules/quota/quota-view.js';

export interface NamespaceView {
  name: string;
  labels: Readonly<Record<string, string>>;
}

export interface ConfigMapView {
  namespace: string;
  name: string;
  uid: string;
  data: Readonly<Record<string, string>>;
  resourceVersion: string;
}

/** A namespaced object known only by its name (existence checks). */
export interface ObjectRef {
  namespace: string;
  name: string;
}

export interface StateSnapshot {
  namespace(name: string): NamespaceView | undefined;
  configMap(namespace: string, name: string): ConfigMapView | undefined;
  /** A Kthena AutoscalingPolicy (registry.volcano.sh/v1alpha1), if it exists. */
  autoscalingPolicy(namespace: string, name: string): ObjectRef | undefined;
  /** An ElasticQuota by name (Koordinator treats quota names as unique across namespaces). */
  elasticQuota(name: string): QuotaView | undefined;
  /** The quotas whose parent is `name`. */
  quotaChildren(name: string): readonly QuotaView[];
  /** The quota whose namespaces annotation binds `namespace`. */
  quotaBoundTo(namespace: string): QuotaView | undefined;
  /** The live pods (namespace/name) counted against a quota. */
  quotaPods(quota: string): readonly string[];
  /** What a quota's live pods request, plus the pods admitted but not yet seen by the watch. */
  quotaUsed(quota: string): ReadonlyMap<string, bigint>;
  /** The GPU tier mapping in force: the last valid gpu-tier-mapping ConfigMap, or the built-in default. */
  gpuTierMapping(): TierMapping;
}

/** A rule: a pure function of the request and the state. It does no I/O. */
export type Rule = (request: AdmissionRequest, state: StateSnapshot) => Decision;
