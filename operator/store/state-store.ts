/**
 * The in-memory view of the cluster the rules read, fed by watches. Each watched kind keeps
 * only the fields rules need, indexed for O(1) lookups. Rules run synchronously, so a rule
 * always sees one consistent state while it runs.
 */
import {
  CoreV1Api,
  CustomObjectsApi,
  SchedulingV1Api,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type V1ConfigMap,
  type V1Namespace,
  type V1Node,
  type V1Pod,
  type V1PriorityClass,
} from '@kubernetes/client-node';
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { GPU_TIER_MAPPING_NAME } from '../../webhook/names.js';
import type { JsonObject } from '../../webhook/admission/types.js';
import type { TierMapping } from '../../webhook/rules/gpu-class/tier-mapping.js';
import { quotaView, type QuotaView } from '../../webhook/rules/quota/quota-view.js';
import { DEFAULT_QUOTA, QUOTA_LABELS } from '../../webhook/rules/quota/keys.js';
import { podIsDone, podRequests } from '../../webhook/rules/quota/pod-requests.js';
import { quotaNameOf } from '../../webhook/rules/quota/resolve-quota.js';
import { formatQuantity } from '../../webhook/util/quantity.js';
import type { OperatorMetrics } from '../../webhook/metrics/operator-metrics.js';
import type {
  ColocationProfileView,
  ConfigMapView,
  ElasticQuotaProfileView,
  NamespaceView,
  NodeView,
  ObjectRef,
  PriorityClassView,
  ReservationView,
  StateSnapshot,
} from '../../webhook/state.js';
import { asObject, labelsOf } from '../../webhook/util/json.js';
import type { EventRecorder } from '../kube/events.js';
import { dropManagedFields, pagedList } from '../kube/paged-list.js';
import { SupervisedInformer, type InformerEvents, type WatchSpec } from '../kube/supervised-informer.js';
import { QuotaIndex } from './quota-index.js';
import { QuotaUsage, type PodUsage } from './quota-usage.js';
import { GroupedIndex, profileCandidates, SortedIndex } from './indexes.js';
import { slimNode } from './slim-node.js';
import { slimPod } from './slim-pod.js';
import { TierMappingTracker } from './tier-mapping-tracker.js';

export interface StateStoreOptions {
  kubeConfig: KubeConfig;
  /** The ConfigMaps the operator owns (tier mapping, SLO config), each watched by name. */
  configMaps: readonly { namespace: string; name: string }[];
  /** Where the gpu-tier-mapping ConfigMap lives (the operator namespace). */
  tierMappingNamespace: string;
  logger: Logger;
  metrics: OperatorMetrics;
  events: EventRecorder;
  /**
   * Builds the informer behind each watch: a SupervisedInformer unless a caller feeds the store
   * itself (the `admit` command reads state from files, or lists a cluster once).
   */
  informers?: <T extends KubernetesObject>(spec: WatchSpec<T>) => StoreInformer<T>;
}

/** What the store needs of an informer. */
export interface StoreInformer<T extends KubernetesObject> extends EventEmitter<InformerEvents<T>> {
  readonly kind: string;
  readonly synced: boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
}

const key = (namespace: string, name: string): string => `${namespace}/${name}`;

interface StateStoreEvents {
  tierMappingChanged: [TierMapping];
  /** One of the watched ConfigMaps changed or was deleted (also sent for each once the watches listed). */
  configMapChanged: [namespace: string, name: string];
}

export class StateStore extends EventEmitter<StateStoreEvents> implements StateSnapshot {
  private readonly namespaces = new Map<string, NamespaceView>();
  private readonly configMaps = new Map<string, ConfigMapView>();
  private readonly autoscalingPolicies = new Map<string, ObjectRef>();
  private readonly colocationProfileIndex = new SortedIndex<ColocationProfileView>();
  private readonly priorityClasses = new Map<string, PriorityClassView>();
  private readonly nodeLabels = new Map<string, NodeView>();
  private readonly quotaProfiles = new GroupedIndex<ElasticQuotaProfileView>((profile) => profile.treeId);
  private readonly reservations = new Map<string, ReservationView>();
  private readonly elasticQuotas = new QuotaIndex();
  private readonly usage = new QuotaUsage();
  /** The quota bindings the pods' quotas were last resolved against. */
  private resolvedBindings = 0;
  /** What re-resolving a pod's quota needs: its namespace and quota labels. */
  private readonly podLabels = new Map<string, { namespace: string; labels: Record<string, string> }>();
  private readonly informers: StoreInformer<KubernetesObject>[] = [];
  private readonly tierMapping: TierMappingTracker;
  private started = false;

  constructor(private readonly options: StateStoreOptions) {
    super();
    this.tierMapping = new TierMappingTracker(options.logger, options.metrics, options.events, (mapping) =>
      this.emit('tierMappingChanged', mapping),
    );
    const core = options.kubeConfig.makeApiClient(CoreV1Api);
    const custom = options.kubeConfig.makeApiClient(CustomObjectsApi);
    const scheduling = options.kubeConfig.makeApiClient(SchedulingV1Api);
    const listCustom =
      (group: string, plural: string) => (): Promise<KubernetesListObject<KubernetesObject>> =>
        pagedList(
          (page) =>
            custom.listClusterCustomObject({ group, version: 'v1alpha1', plural, ...page }) as Promise<
              KubernetesListObject<KubernetesObject>
            >,
          dropManagedFields,
        );

    this.watch<V1Namespace, NamespaceView>(
      {
        kind: 'namespaces',
        path: '/api/v1/namespaces',
        list: () => pagedList((page) => core.listNamespace(page), dropManagedFields),
      },
      this.namespaces,
      (ns) =>
        ns.metadata?.name
          ? [ns.metadata.name, { name: ns.metadata.name, labels: { ...(ns.metadata.labels ?? {}) } }]
          : undefined,
    );

    for (const { namespace, name } of options.configMaps) {
      const fieldSelector = `metadata.name=${name}`;
      this.watch<V1ConfigMap, ConfigMapView>(
        {
          kind: `configmap ${namespace}/${name}`,
          path: `/api/v1/namespaces/${namespace}/configmaps`,
          list: () => core.listNamespacedConfigMap({ namespace, fieldSelector }),
          fieldSelector,
        },
        this.configMaps,
        (cm) => [
          key(namespace, name),
          {
            namespace,
            name,
            uid: cm.metadata?.uid ?? '',
            data: { ...(cm.data ?? {}) },
            resourceVersion: cm.metadata?.resourceVersion ?? '',
          },
        ],
        () => {
          if (name === GPU_TIER_MAPPING_NAME && namespace === options.tierMappingNamespace)
            this.observeTierMapping();
          if (this.started) this.emit('configMapChanged', namespace, name);
        },
      );
    }

    this.watch<KubernetesObject, ObjectRef>(
      {
        kind: 'autoscalingpolicies',
        path: '/apis/registry.volcano.sh/v1alpha1/autoscalingpolicies',
        list: listCustom('registry.volcano.sh', 'autoscalingpolicies'),
        optional: true,
      },
      this.autoscalingPolicies,
      (policy) => {
        const { namespace = '', name = '' } = policy.metadata ?? {};
        return name ? [key(namespace, name), { namespace, name }] : undefined;
      },
    );

    this.watch<KubernetesObject, QuotaView>(
      {
        kind: 'elasticquotas',
        path: '/apis/scheduling.sigs.k8s.io/v1alpha1/elasticquotas',
        list: listCustom('scheduling.sigs.k8s.io', 'elasticquotas'),
        optional: true,
      },
      this.elasticQuotas,
      (object) => {
        const quota = quotaView(object as unknown as JsonObject);
        return quota.name ? [quota.name, quota] : undefined;
      },
      () => {
        // A new quota or namespace binding can change which quota a pod counts against.
        if (this.elasticQuotas.bindingsVersion === this.resolvedBindings) return;
        this.resolvedBindings = this.elasticQuotas.bindingsVersion;
        this.usage.reassign((key) => {
          const pod = this.podLabels.get(key);
          return pod ? quotaNameOf(pod.labels, pod.namespace, this) : DEFAULT_QUOTA;
        });
      },
    );

    this.watch<KubernetesObject, ColocationProfileView>(
      {
        kind: 'clustercolocationprofiles',
        path: '/apis/config.koordinator.sh/v1alpha1/clustercolocationprofiles',
        list: listCustom('config.koordinator.sh', 'clustercolocationprofiles'),
        optional: true,
      },
      this.colocationProfileIndex,
      (profile) => {
        const json = profile as unknown as JsonObject;
        const name = profile.metadata?.name;
        if (!name) return undefined;
        return [
          name,
          {
            name,
            annotations: { ...(profile.metadata?.annotations ?? {}) },
            spec: asObject(json.spec) ?? {},
          },
        ];
      },
    );

    this.watch<V1PriorityClass, PriorityClassView>(
      {
        kind: 'priorityclasses',
        path: '/apis/scheduling.k8s.io/v1/priorityclasses',
        list: () => pagedList((page) => scheduling.listPriorityClass(page), dropManagedFields),
      },
      this.priorityClasses,
      (pc) => {
        const name = pc.metadata?.name;
        if (!name) return undefined;
        return [
          name,
          {
            name,
            value: pc.value,
            ...(pc.preemptionPolicy ? { preemptionPolicy: pc.preemptionPolicy } : {}),
          },
        ];
      },
    );

    this.watch<V1Node, NodeView>(
      {
        kind: 'nodes',
        path: '/api/v1/nodes',
        list: () => pagedList((page) => core.listNode(page), slimNode),
      },
      this.nodeLabels,
      (node) => {
        slimNode(node);
        const name = node.metadata?.name;
        return name ? [name, { name, labels: { ...(node.metadata?.labels ?? {}) } }] : undefined;
      },
    );

    this.watch<KubernetesObject, ElasticQuotaProfileView>(
      {
        kind: 'elasticquotaprofiles',
        path: '/apis/quota.koordinator.sh/v1alpha1/elasticquotaprofiles',
        list: listCustom('quota.koordinator.sh', 'elasticquotaprofiles'),
        optional: true,
      },
      this.quotaProfiles,
      (profile) => {
        const { namespace = '', name = '' } = profile.metadata ?? {};
        if (!name) return undefined;
        const spec = asObject((profile as unknown as JsonObject).spec);
        const nodeSelector = asObject(spec?.nodeSelector);
        return [
          key(namespace, name),
          {
            namespace,
            name,
            treeId: labelsOf(profile as unknown as JsonObject)[QUOTA_LABELS.treeId] ?? '',
            ...(nodeSelector ? { nodeSelector } : {}),
          },
        ];
      },
    );

    this.watch<KubernetesObject, ReservationView>(
      {
        kind: 'reservations',
        path: '/apis/scheduling.koordinator.sh/v1alpha1/reservations',
        list: listCustom('scheduling.koordinator.sh', 'reservations'),
        optional: true,
      },
      this.reservations,
      (reservation) => {
        const name = reservation.metadata?.name;
        if (!name) return undefined;
        const status = asObject((reservation as unknown as JsonObject).status);
        const text = (value: unknown): string => (typeof value === 'string' ? value : '');
        return [name, { name, phase: text(status?.phase), nodeName: text(status?.nodeName) }];
      },
    );

    this.watch<V1Pod, PodUsage>(
      {
        kind: 'pods',
        path: '/api/v1/pods',
        list: () => pagedList((page) => core.listPodForAllNamespaces(page), slimPod),
      },
      {
        set: (key, usage) => {
          this.usage.set(key, usage);
        },
        delete: (key) => {
          this.usage.delete(key);
          this.podLabels.delete(key);
        },
      },
      (pod) => {
        slimPod(pod);
        const { name, namespace = '' } = pod.metadata ?? {};
        if (!name) return undefined;
        const key = `${namespace}/${name}`;
        const json = pod as unknown as JsonObject;
        if (podIsDone(json, new Date())) {
          this.usage.delete(key);
          return undefined;
        }
        const labels = pod.metadata?.labels ?? {};
        this.podLabels.set(key, { namespace, labels });
        return [key, { quota: quotaNameOf(labels, namespace, this), requests: podRequests(json) }];
      },
    );
  }

  /** Keeps `index` equal to the watched objects, each reduced by `view` to what rules need. */
  private watch<T extends KubernetesObject, V>(
    spec: WatchSpec<T>,
    index: { set(key: string, value: V): unknown; delete(key: string): unknown },
    view: (object: T) => [string, V] | undefined,
    changed: () => void = () => undefined,
  ): void {
    const informer =
      this.options.informers?.(spec) ??
      new SupervisedInformer<T>(this.options.kubeConfig, spec, this.options.logger, (kind) => {
        this.options.metrics.informerRestarts.inc({ kind });
      });
    const put = (object: T): void => {
      // Listed objects were trimmed page by page; watched ones arrive here first.
      dropManagedFields(object);
      const entry = view(object);
      if (entry) index.set(entry[0], entry[1]);
      changed();
    };
    informer.on('add', put);
    informer.on('update', put);
    informer.on('delete', (object) => {
      const entry = view(object);
      if (entry) index.delete(entry[0]);
      changed();
    });
    this.informers.push(informer);
  }

  /** Starts every watch; resolves when all have listed once. */
  async start(): Promise<void> {
    await Promise.all(this.informers.map((informer) => informer.start()));
    this.started = true;
    // An absent ConfigMap sends no event: decide on the default once the watch has listed.
    this.observeTierMapping();
    for (const { namespace, name } of this.options.configMaps) this.emit('configMapChanged', namespace, name);
  }

  private observeTierMapping(): void {
    if (!this.started) return;
    this.tierMapping.observe(this.configMap(this.options.tierMappingNamespace, GPU_TIER_MAPPING_NAME));
  }

  gpuTierMapping(): TierMapping {
    return this.tierMapping.mapping;
  }

  /** Names of the watches that have not listed yet (empty when the store is synced). */
  unsynced(): string[] {
    return this.informers.filter((informer) => !informer.synced).map((informer) => informer.kind);
  }

  namespace(name: string): NamespaceView | undefined {
    return this.namespaces.get(name);
  }

  configMap(namespace: string, name: string): ConfigMapView | undefined {
    return this.configMaps.get(key(namespace, name));
  }

  elasticQuota(name: string): QuotaView | undefined {
    return this.elasticQuotas.get(name);
  }

  quotaChildren(name: string): readonly QuotaView[] {
    return this.elasticQuotas.children(name);
  }

  quotaBoundTo(namespace: string): QuotaView | undefined {
    return this.elasticQuotas.boundTo(namespace);
  }

  /** GET /elasticQuota: every quota, the tree, and what each quota's pods use. */
  quotaDebugView(): unknown {
    const { quotas, children, trees } = this.elasticQuotas.snapshot();
    const used = Object.fromEntries(
      Object.keys(quotas).map((name) => [
        name,
        Object.fromEntries([...this.usage.used(name)].map(([key, value]) => [key, formatQuantity(value)])),
      ]),
    );
    return { quotas, children, trees, used };
  }

  quotaUsed(quota: string): ReadonlyMap<string, bigint> {
    return this.usage.used(quota);
  }

  quotaPods(quota: string): readonly string[] {
    return this.usage.podsOf(quota);
  }

  /** What the pod watch counts against a quota for the live pod `namespace/name`, if anything. */
  podQuotaUsage(podKey: string): PodUsage | undefined {
    return this.usage.usageOf(podKey);
  }

  /** Counts an admitted pod against its quota until the pod watch sees it. */
  reserve(reservation: { key: string; quota: string; requests: ReadonlyMap<string, bigint> }): void {
    this.usage.reserve(reservation.key, {
      quota: reservation.quota,
      requests: new Map(reservation.requests),
    });
  }

  colocationProfiles(): readonly ColocationProfileView[] {
    return this.colocationProfileIndex.values();
  }

  colocationProfileCandidates(
    podLabels: Readonly<Record<string, string>>,
    namespaceLabels: Readonly<Record<string, string>>,
  ): readonly ColocationProfileView[] {
    return profileCandidates(this.colocationProfileIndex.values()).candidates(podLabels, namespaceLabels);
  }

  priorityClass(name: string): PriorityClassView | undefined {
    return this.priorityClasses.get(name);
  }

  nodes(): Iterable<NodeView> {
    return this.nodeLabels.values();
  }

  elasticQuotaProfiles(treeId: string): readonly ElasticQuotaProfileView[] {
    return this.quotaProfiles.members(treeId);
  }

  reservation(name: string): ReservationView | undefined {
    return this.reservations.get(name);
  }

  autoscalingPolicy(namespace: string, name: string): ObjectRef | undefined {
    return this.autoscalingPolicies.get(key(namespace, name));
  }

  async stop(): Promise<void> {
    await Promise.all(this.informers.map((informer) => informer.stop()));
  }
}
