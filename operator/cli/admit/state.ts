/**
 * The state the rules read, in the operator's own store (operator/store/state-store.ts), fed
 * from files, or listed once from a cluster by the operator's informers and then stopped, or
 * both: the cluster's objects first, the files' on top. The command never writes to the cluster:
 * the store's Event recorder is replaced by one that records nothing, and no webhook is registered.
 *
 * Objects reach the store the way watch events do, so what the rules see of a file's Namespace,
 * ElasticQuota or Pod is exactly what they would see of the same object in a cluster.
 */
import { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { KubeObject } from '../../../webhook/admission/types.js';
import { NAMESPACE_NAME_LABEL } from '../../../webhook/names.js';
import { operatorMetrics } from '../../metrics/operator-metrics.js';
import { EventRecorder, type EventTarget } from '../../kube/events.js';
import { Reflector, type ReflectorSink, type ReflectorSpec } from '../../kube/reflector.js';
import { StateStore, type StoreSource } from '../../store/state-store.js';
import { collectionPaths } from './kinds.js';
import { apiVersionOf, kindOf, whereOf, type Manifest } from './manifests.js';

/** How long `--cluster` waits for every kind to list once. */
const CLUSTER_LIST_TIMEOUT_MS = 30_000;

/** Records nothing: the command only reads. */
class NoEvents extends EventRecorder {
  override warning(_target: EventTarget, _reason: string, _message: string): Promise<void> {
    return Promise.resolve();
  }
}

/** A watched kind of the store, fed by the cluster's reflector (if any) and then by objects handed to it. */
class FeedSource implements StoreSource {
  private readonly pending: KubeObject[] = [];
  private hasSynced = false;
  private readonly name: string | undefined;

  constructor(
    readonly spec: ReflectorSpec,
    private readonly sink: ReflectorSink,
    private readonly live: Reflector | undefined,
  ) {
    this.name = /^metadata\.name=(.+)$/.exec(spec.fieldSelector ?? '')?.[1];
  }

  get kind(): string {
    return this.spec.kind;
  }

  get synced(): boolean {
    return this.hasSynced;
  }

  /** Whether this watch would see `object` (its collection path and field selector). */
  accepts(object: KubeObject): boolean {
    const namespace = typeof object.metadata.namespace === 'string' ? object.metadata.namespace : '';
    const paths = collectionPaths(apiVersionOf(object), kindOf(object), namespace);
    if (!paths.includes(this.spec.path)) return false;
    return this.name === undefined || object.metadata.name === this.name;
  }

  /** An object to add once the cluster's objects are in (or at once, after start). */
  feed(object: KubeObject): void {
    if (this.hasSynced) this.sink.put(structuredClone(object));
    else this.pending.push(object);
  }

  async start(): Promise<void> {
    if (this.live) await this.live.start();
    else {
      this.sink.listing();
      this.sink.listed();
    }
    for (const object of this.pending.splice(0)) this.sink.put(structuredClone(object));
    this.hasSynced = true;
  }

  async stop(): Promise<void> {
    await this.live?.stop();
  }
}

export interface ClusterSource {
  kubeconfig: string | undefined;
  context: string | undefined;
}

export interface StateOptions {
  /** The objects of --state files, in order. */
  files: readonly Manifest[];
  cluster: ClusterSource | undefined;
  /** The ConfigMaps the operator watches (and so the only ones the rules can read). */
  configMaps: readonly { namespace: string; name: string }[];
  operatorNamespace: string;
  logger: Logger;
  /** Count pods as their replace-resources annotation renames them (feature-gates.ts, replaceResourcesCounted). */
  replaceResources?: boolean;
}

export interface LoadedState {
  store: StateStore;
  /** What the state was read with (offline: a config that reaches nothing). */
  kubeConfig: KubeConfig;
  /** The namespace of the kubeconfig context, with --cluster. */
  contextNamespace: string | undefined;
  /** Adds an object the way a watch event would; false when the rules read nothing of its kind. */
  add(object: KubeObject): boolean;
  /** What was given as state but is not state the rules read. */
  warnings: string[];
}

export class StateError extends Error {
  override name = 'StateError';
}

/** A namespace as the API server stores it: it always carries its name as a label. */
function asStored(object: KubeObject): KubeObject {
  if (object.kind !== 'Namespace' || object.apiVersion !== 'v1' || typeof object.metadata.name !== 'string')
    return object;
  const labels =
    typeof object.metadata.labels === 'object' && object.metadata.labels !== null
      ? object.metadata.labels
      : {};
  return {
    ...object,
    metadata: { ...object.metadata, labels: { ...labels, [NAMESPACE_NAME_LABEL]: object.metadata.name } },
  };
}

function offlineKubeConfig(): KubeConfig {
  const kubeConfig = new KubeConfig();
  // Never contacted: every watch is fed from files.
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'offline', server: 'https://offline.invalid', skipTLSVerify: true }],
    users: [{ name: 'offline' }],
    contexts: [{ name: 'offline', cluster: 'offline', user: 'offline' }],
    currentContext: 'offline',
  });
  return kubeConfig;
}

function clusterKubeConfig(source: ClusterSource): KubeConfig {
  const kubeConfig = new KubeConfig();
  try {
    if (source.kubeconfig) kubeConfig.loadFromFile(source.kubeconfig);
    else kubeConfig.loadFromDefault();
  } catch (error) {
    throw new StateError(`--kubeconfig: cannot be read: ${(error as Error).message}`);
  }
  if (source.context !== undefined) {
    if (!kubeConfig.getContextObject(source.context)) {
      throw new StateError(`--context: no context ${JSON.stringify(source.context)} in the kubeconfig`);
    }
    kubeConfig.setCurrentContext(source.context);
  }
  if (!kubeConfig.getCurrentCluster()) throw new StateError('--cluster: the kubeconfig names no cluster');
  return kubeConfig;
}

export async function loadState(options: StateOptions): Promise<LoadedState> {
  const kubeConfig = options.cluster ? clusterKubeConfig(options.cluster) : offlineKubeConfig();
  const feeds: FeedSource[] = [];
  const store = new StateStore({
    kubeConfig,
    configMaps: options.configMaps,
    tierMappingNamespace: options.operatorNamespace,
    logger: options.logger,
    replaceResources: options.replaceResources ?? false,
    // Counted into a registry of its own that nothing serves: a command exports no metrics.
    metrics: operatorMetrics(),
    events: new NoEvents(kubeConfig, options.logger),
    sources: (spec, sink) => {
      const live = options.cluster ? new Reflector(kubeConfig, spec, sink, options.logger) : undefined;
      const feed = new FeedSource(spec, sink, live);
      feeds.push(feed);
      return feed;
    },
  });
  const add = (object: KubeObject): boolean => {
    const stored = asStored(object);
    const targets = feeds.filter((feed) => feed.accepts(stored));
    for (const feed of targets) feed.feed(stored);
    return targets.length > 0;
  };
  const warnings: string[] = [];
  for (const manifest of options.files) {
    if (!add(manifest.object)) {
      const { metadata } = manifest.object;
      const kind = kindOf(manifest.object);
      const name = typeof metadata.name === 'string' ? metadata.name : '';
      const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : '';
      warnings.push(
        kind === 'ConfigMap'
          ? `${whereOf(manifest)}: ConfigMap ${namespace}/${name} ignored: the rules read only ${options.configMaps.map((cm) => `${cm.namespace}/${cm.name}`).join(', ')}`
          : `${whereOf(manifest)}: ${kind} ${name} ignored: the rules read no state of this kind`,
      );
    }
  }

  let timer: NodeJS.Timeout | undefined;
  const listed = options.cluster
    ? Promise.race([
        store.start(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            reject(
              new StateError(
                `--cluster: could not list within ${CLUSTER_LIST_TIMEOUT_MS / 1000} s: ${store.unsynced().join(', ')} (see the warnings above)`,
              ),
            );
          }, CLUSTER_LIST_TIMEOUT_MS);
        }),
      ])
    : store.start();
  try {
    await listed;
  } finally {
    clearTimeout(timer);
    // Read once: the watches stop as soon as every kind has listed.
    await store.stop();
  }
  const contextNamespace = options.cluster
    ? kubeConfig.getContextObject(kubeConfig.getCurrentContext())?.namespace
    : undefined;
  return { store, kubeConfig, contextNamespace, add, warnings };
}
