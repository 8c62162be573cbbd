/**
 * What a rule may ask of the cluster state. The operator's watch-fed store implements it;
 * every answer comes from memory (O(1) or O(log n) from an index), never from the API server.
 */
import type { AdmissionRequest, Decision, JsonObject, JsonValue } from './admission/types.js';

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

/** A Koordinator ClusterColocationProfile: its name, annotations and spec as the API server stored them. */
export interface ColocationProfileView {
  name: string;
  annotations: Readonly<Record<string, string>>;
  spec: JsonObject;
}

/** A scheduling.k8s.io/v1 PriorityClass: what a profile copies onto the pods it names it for. */
export interface PriorityClassView {
  name: string;
  value: number;
  preemptionPolicy?: string;
}

/** A node, by the labels SLO node strategies select on. */
export interface NodeView {
  name: string;
  labels: Readonly<Record<string, string>>;
}

/** A Koordinator ElasticQuotaProfile (quota.koordinator.sh/v1alpha1): the nodes of one quota tree. */
export interface ElasticQuotaProfileView {
  namespace: string;
  name: string;
  treeId: string;
  /** spec.nodeSelector, a LabelSelector; absent when the profile has none. */
  nodeSelector?: JsonObject;
}

/** A Koordinator Reservation: where it stands. */
export interface ReservationView {
  name: string;
  phase: string;
  nodeName: string;
}

/**
 * What the quota rules know of an ElasticQuota: its place in the tree (from labels), its bounds
 * and its bound namespaces (from annotations); read by rules/koordinator/quota/quota-view.ts.
 */
export interface QuotaView {
  namespace: string;
  name: string;
  /** The parent quota; quotas without the label hang under the root. */
  parent: string;
  isParent: boolean;
  treeId: string;
  isRoot: boolean;
  allowForceUpdate: boolean;
  min: Readonly<Record<string, string>>;
  max: Readonly<Record<string, string>>;
  /** Namespaces bound by the namespaces annotation (a JSON array); an unparsable one binds none. */
  namespaces: readonly string[];
  /**
   * The admission annotation's limit when it is a non-empty JSON map; quota admission then uses it
   * instead of max. Values as written: quota admission refuses, naming the key, what is no quantity.
   */
  admission?: Readonly<Record<string, JsonValue>>;
}

/**
 * The GPU tier mapping (KubeNexus): which GPU classes each tenant tier gets; read from its
 * ConfigMap by rules/kubenexus/tier-mapping.ts.
 */
export interface TierMapping {
  namespaceLabelKey: string;
  nodeLabelKey: string;
  gpuResources: readonly string[];
  /** Lower-cased tier → its classes, in the order given. */
  tiers: ReadonlyMap<string, readonly string[]>;
  workloadTypeLabel: string;
  /** Lower-cased tier → workload type → classes. */
  workloadOverrides: ReadonlyMap<string, ReadonlyMap<string, readonly string[]>>;
}

export interface StateSnapshot {
  namespace(name: string): NamespaceView | undefined;
  configMap(namespace: string, name: string): ConfigMapView | undefined;
  /** An ElasticQuota by name (Koordinator treats quota names as unique across namespaces). */
  elasticQuota(name: string): QuotaView | undefined;
  /** The quotas whose parent is `name`. */
  quotaChildren(name: string): readonly QuotaView[];
  /** The quota whose namespaces annotation binds `namespace`. */
  quotaBoundTo(namespace: string): QuotaView | undefined;
  /** The live pods (namespace/name) counted against a quota. */
  quotaPods(quota: string): readonly string[];
  /** The live pods (namespace/name) labelled for a quota (`quota.scheduling.koordinator.sh/name`), a subset of quotaPods. */
  quotaLabelledPods(quota: string): readonly string[];
  /** What a quota's live pods request, plus the pods admitted but not yet seen by the watch. */
  quotaUsed(quota: string): ReadonlyMap<string, bigint>;
  /** What quotaUsed counts for the live pod `namespace/name`, and against which quota, if anything. */
  podQuotaUsage(podKey: string): { quota: string; requests: ReadonlyMap<string, bigint> } | undefined;
  /** The GPU tier mapping in force: the last valid gpu-tier-mapping ConfigMap, or the built-in default. */
  gpuTierMapping(): TierMapping;
  /** Every ClusterColocationProfile, sorted by name (byte order), the order Koordinator applies them in. */
  colocationProfiles(): readonly ColocationProfileView[];
  /**
   * The profiles that could match a pod with these labels in a namespace with these labels, in
   * the order of colocationProfiles(): every profile that matches is among them (others may be).
   */
  colocationProfileCandidates(
    podLabels: Readonly<Record<string, string>>,
    namespaceLabels: Readonly<Record<string, string>>,
  ): readonly ColocationProfileView[];
  priorityClass(name: string): PriorityClassView | undefined;
  /** Every node (name and labels). */
  nodes(): Iterable<NodeView>;
  /** The ElasticQuotaProfiles of a quota tree, sorted by namespace then name (the API server's list order). */
  elasticQuotaProfiles(treeId: string): readonly ElasticQuotaProfileView[];
  reservation(name: string): ReservationView | undefined;
}

/**
 * The state the webhook configurations are derived from (webhook/narrowing/): what a rule may ask,
 * plus every ElasticQuota, since which namespaces a quota governs is read from the quotas.
 */
export interface ReachState extends StateSnapshot {
  /** Every ElasticQuota, in no particular order. */
  elasticQuotas(): Iterable<QuotaView>;
}

/** A rule: a pure function of the request and the state. It does no I/O. */
export type Rule = (request: AdmissionRequest, state: StateSnapshot) => Decision;
