/**
 * The in-memory view of the cluster the rules read, fed by watches. Each watched kind keeps
 * only the fields rules need, indexed for O(1) lookups. Rules run synchronously, so a rule
 * always sees one consistent state while it runs.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { collectionPath, KINDS, type KindDefinition } from '../../webhook/kinds.js';
import { GPU_TIER_MAPPING_NAME } from '../../webhook/names.js';
import type { JsonObject } from '../../webhook/admission/types.js';
import type { TierMapping } from '../../webhook/rules/kubenexus/tier-mapping.js';
import { quotaView, type QuotaView } from '../../webhook/rules/koordinator/quota/quota-view.js';
import { QUOTA_LABELS } from '../../webhook/rules/koordinator/quota/keys.js';
import { quotaNameFor } from '../../webhook/rules/koordinator/quota/resolve-quota.js';
import { formatQuantity } from '../../webhook/util/quantity.js';
import type { OperatorMetrics } from '../metrics/operator-metrics.js';
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
import { asObject, labelsOf, stringsOf } from '../../webhook/util/json.js';
import { systemClock, type Clock } from '../kube/clock.js';
import type { EventRecorder } from '../kube/events.js';
import { watchSilenceHandler } from '../kube/operator-events.js';
import { Reflector, type ReflectorSink, type ReflectorSpec } from '../kube/reflector.js';
import { QuotaIndex } from './quota-index.js';
import { QuotaUsage, type PodUsage } from './quota-usage.js';
import { GroupedIndex, profileCandidates, SortedIndex } from './indexes.js';
import { keyedSink, type CountingSink } from './keyed-sink.js';
import { KindPresence } from './kind-presence.js';
import { podKeyOf, podRecord } from './pod-record.js';
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
   * Builds what feeds each watched kind: a Reflector on the cluster unless a caller feeds the
   * store itself (the `admit` command reads state from files, or lists a cluster once).
   */
  sources?: (spec: ReflectorSpec, sink: ReflectorSink) => StoreSource;
  /** Judges pods past their deletion grace period and times the watches. */
  clock?: Clock;
  /** The replica's own Pod, where Events about its watches go (the operator namespace and POD_NAME). */
  selfPod?: { namespace: string; name: string };
  /** Count pods as their replace-resources annotation renames them (feature-gates.ts, replaceResourcesCounted). */
  replaceResources?: boolean;
}

/** What the store needs of the source of one watched kind. */
export interface StoreSource {
  readonly kind: string;
  readonly synced: boolean;
  /** Resolves once every object that exists has been put. */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Lists again from scratch, where the source can. */
  relist?(): void;
  /** Milliseconds since the API server was last heard from; undefined before it ever was. */
  silentFor?(): number | undefined;
}

const key = (namespace: string, name: string): string => `${namespace}/${name}`;

/** One watched kind: where it lives in the API and what keeps it. */
interface WatchedKind {
  /** The registry's kind (webhook/kinds.ts); one from a CRD may not be installed (see ReflectorSpec.optional). */
  kind: KindDefinition;
  /** Watched in this namespace only; cluster-wide when omitted. */
  namespace?: string;
  fieldSelector?: string;
  labelSelector?: string;
  /** The name in logs, metrics and readiness; the plural when omitted. */
  name?: string;
  sink: CountingSink;
}

/** The reflector's view of a watched kind. */
function reflectorSpec(watched: WatchedKind): ReflectorSpec {
  const { namespace, fieldSelector, labelSelector } = watched;
  const { plural: resource, crd: optional } = watched.kind;
  return {
    kind: watched.name ?? resource,
    path: collectionPath(watched.kind, namespace),
    ...(fieldSelector === undefined ? {} : { fieldSelector }),
    ...(labelSelector === undefined ? {} : { labelSelector }),
    ...(optional ? { optional } : {}),
  };
}

/** A string field's value, '' when absent or not a string. */
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** metadata.namespace and metadata.name of a raw object ('' when absent). */
function nameOf(object: JsonObject): { namespace: string; name: string } {
  const metadata = asObject(object.metadata);
  return { namespace: text(metadata?.namespace), name: text(metadata?.name) };
}

interface StateStoreEvents {
  tierMappingChanged: [TierMapping];
  /** One of the watched ConfigMaps changed or was deleted (also sent for each once the watches listed). */
  configMapChanged: [namespace: string, name: string];
  /**
   * Something the webhooks' reach reads changed (webhook/narrowing/): a profile, a quota's place or
   * bindings, an ElasticQuotaProfile, a watched ConfigMap. Namespaces' labels are not among them:
   * the API server reads those itself.
   */
  reachChanged: [];
}

export class StateStore extends EventEmitter<StateStoreEvents> implements ReachState {
  private readonly namespaces = new Map<string, NamespaceView>();
  private readonly configMaps = new Map<string, ConfigMapView>();
  private readonly colocationProfileIndex = new SortedIndex<ColocationProfileView>();
  private readonly priorityClasses = new Map<string, PriorityClassView>();
  private readonly nodeLabels = new Map<string, NodeView>();
  private readonly quotaProfiles = new GroupedIndex<ElasticQuotaProfileView>((profile) => profile.treeId);
  private readonly reservations = new Map<string, ReservationView>();
  private readonly quotaIndex = new QuotaIndex();
  private readonly clock: Clock;
  private readonly usage: QuotaUsage;
  /** The quota bindings the pods' quotas were last resolved against. */
  private resolvedBindings = 0;
  /** The quotas' reach version last announced. */
  private announcedQuotaReach = 0;
  private reachMoves = 0;
  private readonly sources: StoreSource[] = [];
  /** What each watched kind keeps, for admission_store_objects. */
  private readonly sinks = new Map<string, CountingSink>();
  private readonly tierMapping: TierMappingTracker;
  /** The watched custom kinds whose CRD is absent. */
  private readonly kinds: KindPresence;
  private started = false;

  constructor(private readonly options: StateStoreOptions) {
    super();
    this.clock = options.clock ?? systemClock;
    const { metrics } = options;
    this.usage = new QuotaUsage(this.clock, {
      evicted: () => {
        metrics.ledgerEvictions.inc();
      },
      expired: (count) => {
        metrics.ledgerExpired.inc(count);
      },
    });
    metrics.ledgerSize = () => this.usage.ledgerSize;
    this.tierMapping = new TierMappingTracker(options.logger, options.metrics, options.events, (mapping) =>
      this.emit('tierMappingChanged', mapping),
    );
    this.kinds = new KindPresence(options);
    for (const watched of this.watchedKinds()) this.watch(watched);
    options.metrics.storeSizes = () => [...this.sinks].map(([kind, sink]) => [kind, sink.size] as const);
    options.metrics.watchSilences = () =>
      this.sources.map((source) => [source.kind, source.silentFor?.()] as const);
  }

  /**
   * Every kind the store watches, one row each, in the order readiness names them. Custom kinds
   * come from CRDs a cluster may not have installed: their watches count as synced while absent.
   */
  private watchedKinds(): WatchedKind[] {
    return [
      {
        kind: KINDS.namespace,
        sink: keyedSink(this.namespaces, (ns) => {
          const { name } = nameOf(ns);
          return name ? [name, { name, labels: labelsOf(ns) }] : undefined;
        }),
      },
      ...this.options.configMaps.map(({ namespace, name }) => this.configMapWatch(namespace, name)),
      {
        kind: KINDS.elasticQuota,
        sink: keyedSink(
          this.quotaIndex,
          (object) => {
            const quota = quotaView(object);
            return quota.name ? [quota.name, quota] : undefined;
          },
          () => {
            this.resolvePodQuotas();
            if (this.quotaIndex.reachVersion !== this.announcedQuotaReach) {
              this.announcedQuotaReach = this.quotaIndex.reachVersion;
              this.reachMoved();
            }
          },
        ),
      },
      {
        kind: KINDS.clusterColocationProfile,
        sink: keyedSink(
          this.colocationProfileIndex,
          (profile) => {
            const { name } = nameOf(profile);
            if (!name) return undefined;
            const annotations = stringsOf(asObject(profile.metadata)?.annotations);
            return [name, { name, annotations, spec: asObject(profile.spec) ?? {} }];
          },
          () => {
            this.reachMoved();
          },
        ),
      },
      {
        kind: KINDS.priorityClass,
        sink: keyedSink(this.priorityClasses, (pc) => {
          const { name } = nameOf(pc);
          if (!name) return undefined;
          const value = typeof pc.value === 'number' ? pc.value : 0;
          const preemptionPolicy = typeof pc.preemptionPolicy === 'string' ? pc.preemptionPolicy : '';
          return [name, { name, value, ...(preemptionPolicy ? { preemptionPolicy } : {}) }];
        }),
      },
      {
        kind: KINDS.node,
        sink: keyedSink(this.nodeLabels, (node) => {
          const { name } = nameOf(node);
          return name ? [name, { name, labels: labelsOf(node) }] : undefined;
        }),
      },
      {
        kind: KINDS.elasticQuotaProfile,
        sink: keyedSink(
          this.quotaProfiles,
          (profile) => {
            const { namespace, name } = nameOf(profile);
            if (!name) return undefined;
            const nodeSelector = asObject(asObject(profile.spec)?.nodeSelector);
            return [
              key(namespace, name),
              {
                namespace,
                name,
                treeId: labelsOf(profile)[QUOTA_LABELS.treeId] ?? '',
                ...(nodeSelector ? { nodeSelector } : {}),
              },
            ];
          },
          () => {
            this.reachMoved();
          },
        ),
      },
      {
        kind: KINDS.reservation,
        sink: keyedSink(this.reservations, (reservation) => {
          const { name } = nameOf(reservation);
          if (!name) return undefined;
          const status = asObject(reservation.status);
          return [name, { name, phase: text(status?.phase), nodeName: text(status?.nodeName) }];
        }),
      },
      { kind: KINDS.pod, sink: this.podSink() },
    ];
  }

  /** Feeds the row's sink from the cluster (or from the caller's source). */
  private watch(watched: WatchedKind): void {
    const spec = reflectorSpec(watched);
    const { sink } = watched;
    this.sinks.set(spec.kind, sink);
    const { storeLists } = this.options.metrics;
    const counted: ReflectorSink = {
      listing: () => {
        sink.listing();
      },
      put: (object) => {
        sink.put(object);
      },
      remove: (object) => {
        sink.remove(object);
      },
      listed: (mode) => {
        sink.listed();
        storeLists.inc({ kind: spec.kind, mode: mode ?? 'none' });
      },
    };
    const source =
      this.options.sources?.(spec, counted) ??
      new Reflector(this.options.kubeConfig, spec, counted, this.options.logger, {
        onRestart: (kind) => {
          this.options.metrics.informerRestarts.inc({ kind });
        },
        onSilent: watchSilenceHandler(this.options),
        onInstalled: (kind, installed) => {
          this.kinds.observe(kind, watched.kind, installed);
        },
        // The pod watch is current: reservations whose pods never came can end (quota-usage.ts).
        ...(watched.kind === KINDS.pod
          ? {
              onCurrent: (_kind: string, at: number) => {
                this.usage.current(at);
              },
            }
          : {}),
        clock: this.clock,
      });
    this.sources.push(source);
  }

  /** One operator-owned ConfigMap, watched by name. */
  private configMapWatch(namespace: string, name: string): WatchedKind {
    return {
      kind: KINDS.configMap,
      namespace,
      fieldSelector: `metadata.name=${name}`,
      name: `configmap ${namespace}/${name}`,
      sink: keyedSink(
        this.configMaps,
        (cm) => {
          const metadata = asObject(cm.metadata);
          return [
            key(namespace, name),
            {
              namespace,
              name,
              uid: text(metadata?.uid),
              data: stringsOf(cm.data),
              resourceVersion: text(metadata?.resourceVersion),
            },
          ];
        },
        () => {
          if (name === GPU_TIER_MAPPING_NAME && namespace === this.options.tierMappingNamespace)
            this.observeTierMapping();
          if (this.started) this.emit('configMapChanged', namespace, name);
          this.reachMoved();
        },
      ),
    };
  }

  /**
   * Pods are kept as compact records in the quota ledger, and nowhere else; a pod that can never
   * count again (finished, or past its deletion grace period) is not kept at all.
   */
  private podSink(): CountingSink {
    let epoch = 0;
    const quotaOf = (quotaLabel: string | undefined, namespace: string): string =>
      quotaNameFor(quotaLabel, namespace, this);
    const usage = this.usage;
    return {
      get size() {
        return usage.size;
      },
      listing: () => {
        epoch++;
      },
      put: (pod) => {
        const id = podKeyOf(pod);
        if (!id) return;
        const record = podRecord(pod, id, this.clock.now(), quotaOf, this.options.replaceResources);
        if (!record) {
          this.usage.delete(id.key);
          return;
        }
        record.listEpoch = epoch;
        this.usage.set(id.key, record);
      },
      remove: (pod) => {
        const id = podKeyOf(pod);
        if (id) this.usage.delete(id.key);
      },
      listed: () => {
        this.usage.sweep(epoch);
      },
    };
  }

  /**
   * Counts a change of what the webhooks' reach reads; what derives from the reach compares the
   * count instead of the state.
   */
  get reachVersion(): number {
    return this.reachMoves;
  }

  private reachMoved(): void {
    this.reachMoves += 1;
    this.emit('reachChanged');
  }

  /** A new quota or namespace binding can change which quota a pod counts against. */
  private resolvePodQuotas(): void {
    if (this.quotaIndex.bindingsVersion === this.resolvedBindings) return;
    this.resolvedBindings = this.quotaIndex.bindingsVersion;
    this.usage.reassign((record) => quotaNameFor(record.quotaLabel, record.namespace, this));
  }

  /** Starts every watch; resolves when all have listed once. */
  async start(): Promise<void> {
    await Promise.all(this.sources.map((source) => source.start()));
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

  /** The CRDs of watched kinds that are not installed (their watches count as synced, and empty). */
  kindsNotInstalled(): string[] {
    return this.kinds.missing();
  }

  /** Names of the watches that have not listed yet (empty when the store is synced). */
  unsynced(): string[] {
    return this.sources.filter((source) => !source.synced).map((source) => source.kind);
  }

  namespace(name: string): NamespaceView | undefined {
    return this.namespaces.get(name);
  }

  configMap(namespace: string, name: string): ConfigMapView | undefined {
    return this.configMaps.get(key(namespace, name));
  }

  elasticQuotas(): Iterable<QuotaView> {
    return this.quotaIndex.values();
  }

  elasticQuota(name: string): QuotaView | undefined {
    return this.quotaIndex.get(name);
  }

  quotaChildren(name: string): readonly QuotaView[] {
    return this.quotaIndex.children(name);
  }

  quotaBoundTo(namespace: string): QuotaView | undefined {
    return this.quotaIndex.boundTo(namespace);
  }

  /** GET /elasticQuota: every quota, the tree, and what each quota's pods use. */
  quotaDebugView(): unknown {
    const { quotas, children, trees } = this.quotaIndex.snapshot();
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

  quotaLabelledPods(quota: string): readonly string[] {
    return this.usage.labelledPodsOf(quota);
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

  /** Every watch lists again from scratch (SIGHUP): what drifted is put right. */
  relist(): void {
    for (const source of this.sources) source.relist?.();
  }

  async stop(): Promise<void> {
    this.kinds.stop();
    await Promise.all(this.sources.map((source) => source.stop()));
  }
}
