/** An in-memory StateSnapshot for rule unit tests. */
import { profileCandidates } from '../../operator/store/indexes.js';
import { DEFAULT_TIER_MAPPING, type TierMapping } from '../../webhook/rules/kubenexus/tier-mapping.js';
import type { QuotaView } from '../../webhook/rules/koordinator/quota/quota-view.js';
import { own } from '../../webhook/util/own.js';
import type {
  ColocationProfileView,
  ConfigMapView,
  ElasticQuotaProfileView,
  NamespaceView,
  NodeView,
  PriorityClassView,
  ReachState,
  ReservationView,
} from '../../webhook/state.js';

export interface StateFixture {
  namespaces?: NamespaceView[];
  configMaps?: ConfigMapView[];
  elasticQuotas?: QuotaView[];
  /** What each quota's pods use, by resource, in nano-units. */
  quotaUsed?: Record<string, Record<string, bigint>>;
  /** What the store counts for each live pod (namespace/name): its quota and requests in nano-units. */
  podUsage?: Record<string, { quota: string; requests: Record<string, bigint> }>;
  /** The pods (namespace/name) counted against each quota. */
  quotaPods?: Record<string, string[]>;
  /** The pods labelled for each quota; quotaPods when omitted. */
  quotaLabelledPods?: Record<string, string[]>;
  /** The mapping in force; KubeNexus's default when omitted. */
  gpuTierMapping?: TierMapping;
  colocationProfiles?: ColocationProfileView[];
  priorityClasses?: PriorityClassView[];
  nodes?: NodeView[];
  elasticQuotaProfiles?: ElasticQuotaProfileView[];
  reservations?: ReservationView[];
}

// As the store orders them (and the API server lists them): by bytes, not by locale.
const byteOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export function stateSnapshot(fixture: StateFixture = {}): ReachState {
  const key = (namespace: string, name: string): string => `${namespace}/${name}`;
  const namespaces = new Map((fixture.namespaces ?? []).map((ns) => [ns.name, ns]));
  const configMaps = new Map((fixture.configMaps ?? []).map((cm) => [key(cm.namespace, cm.name), cm]));
  const quotas = new Map((fixture.elasticQuotas ?? []).map((q) => [q.name, q]));
  // Indexed as the operator's store indexes them, so the bench's large state measures the rules
  // and not a scan of this fixture.
  const boundTo = new Map<string, QuotaView>();
  const children = new Map<string, QuotaView[]>();
  for (const quota of quotas.values()) {
    for (const namespace of quota.namespaces) if (!boundTo.has(namespace)) boundTo.set(namespace, quota);
    if (quota.parent === quota.name) continue;
    const siblings = children.get(quota.parent);
    if (siblings) siblings.push(quota);
    else children.set(quota.parent, [quota]);
  }
  const profiles = [...(fixture.colocationProfiles ?? [])].sort((a, b) => byteOrder(a.name, b.name));
  return {
    namespace: (name) => namespaces.get(name),
    configMap: (namespace, name) => configMaps.get(key(namespace, name)),
    elasticQuota: (name) => quotas.get(name),
    elasticQuotas: () => quotas.values(),
    quotaChildren: (name) => children.get(name) ?? [],
    quotaPods: (quota) => own(fixture.quotaPods, quota) ?? [],
    quotaLabelledPods: (quota) =>
      own(fixture.quotaLabelledPods, quota) ?? own(fixture.quotaPods, quota) ?? [],
    quotaUsed: (quota) => new Map(Object.entries(own(fixture.quotaUsed, quota) ?? {})),
    podQuotaUsage: (podKey) => {
      const usage = own(fixture.podUsage, podKey);
      return usage && { quota: usage.quota, requests: new Map(Object.entries(usage.requests)) };
    },
    quotaBoundTo: (namespace) => boundTo.get(namespace),
    gpuTierMapping: () => fixture.gpuTierMapping ?? DEFAULT_TIER_MAPPING,
    colocationProfiles: () => profiles,
    colocationProfileCandidates: (podLabels, namespaceLabels) =>
      profileCandidates(profiles).candidates(podLabels, namespaceLabels),
    priorityClass: (name) => fixture.priorityClasses?.find((pc) => pc.name === name),
    nodes: () => fixture.nodes ?? [],
    elasticQuotaProfiles: (treeId) =>
      (fixture.elasticQuotaProfiles ?? [])
        .filter((profile) => profile.treeId === treeId)
        .sort((a, b) => byteOrder(key(a.namespace, a.name), key(b.namespace, b.name))),
    reservation: (name) => fixture.reservations?.find((reservation) => reservation.name === name),
  };
}
