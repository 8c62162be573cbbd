/**
 * The in-memory view of the cluster the rules read, fed by watches. Each watched kind keeps
 * only the fields rules need, indexed for O(1) lookups. Rules run synchronously, so a rule
 * always sees one consistent state while it runs.
 */
import { CoreV1Api, type KubeConfig, type V1ConfigMap, type V1Namespace } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { OperatorMetrics } from '../../webhook/server/metrics.js';
import type { ConfigMapView, NamespaceView, StateSnapshot } from '../../webhook/state.js';
import { SupervisedInformer } from '../kube/supervised-informer.js';

export interface StateStoreOptions {
  kubeConfig: KubeConfig;
  /** The ConfigMaps the operator owns (tier mapping, SLO config), each watched by name. */
  configMaps: readonly { namespace: string; name: string }[];
  logger: Logger;
  metrics: OperatorMetrics;
}

const configMapKey = (namespace: string, name: string): string => `${namespace}/${name}`;

export class StateStore implements StateSnapshot {
  private readonly namespaces = new Map<string, NamespaceView>();
  private readonly configMaps = new Map<string, ConfigMapView>();
  private readonly informers: SupervisedInformer<V1Namespace | V1ConfigMap>[] = [];

  constructor(options: StateStoreOptions) {
    const core = options.kubeConfig.makeApiClient(CoreV1Api);
    const onRestart = (kind: string): void => {
      options.metrics.informerRestarts.inc({ kind });
    };

    const namespaces = new SupervisedInformer<V1Namespace>(
      options.kubeConfig,
      { kind: 'namespaces', path: '/api/v1/namespaces', list: () => core.listNamespace() },
      options.logger,
      onRestart,
    );
    const putNamespace = (ns: V1Namespace): void => {
      const name = ns.metadata?.name;
      if (name) this.namespaces.set(name, { name, labels: { ...(ns.metadata?.labels ?? {}) } });
    };
    namespaces.on('add', putNamespace);
    namespaces.on('update', putNamespace);
    namespaces.on('delete', (ns) => {
      if (ns.metadata?.name) this.namespaces.delete(ns.metadata.name);
    });
    this.informers.push(namespaces);

    for (const { namespace, name } of options.configMaps) {
      const fieldSelector = `metadata.name=${name}`;
      const informer = new SupervisedInformer<V1ConfigMap>(
        options.kubeConfig,
        {
          kind: `configmap ${namespace}/${name}`,
          path: `/api/v1/namespaces/${namespace}/configmaps`,
          list: () => core.listNamespacedConfigMap({ namespace, fieldSelector }),
          fieldSelector,
        },
        options.logger,
        onRestart,
      );
      const putConfigMap = (cm: V1ConfigMap): void => {
        this.configMaps.set(configMapKey(namespace, name), {
          namespace,
          name,
          data: { ...(cm.data ?? {}) },
          resourceVersion: cm.metadata?.resourceVersion ?? '',
        });
      };
      informer.on('add', putConfigMap);
      informer.on('update', putConfigMap);
      informer.on('delete', () => {
        this.configMaps.delete(configMapKey(namespace, name));
      });
      this.informers.push(informer);
    }
  }

  /** Starts every watch; resolves when all have listed once. */
  async start(): Promise<void> {
    await Promise.all(this.informers.map((informer) => informer.start()));
  }

  /** Names of the watches that have not listed yet (empty when the store is synced). */
  unsynced(): string[] {
    return this.informers.filter((informer) => !informer.synced).map((informer) => informer.kind);
  }

  namespace(name: string): NamespaceView | undefined {
    return this.namespaces.get(name);
  }

  configMap(namespace: string, name: string): ConfigMapView | undefined {
    return this.configMaps.get(configMapKey(namespace, name));
  }

  async stop(): Promise<void> {
    await Promise.all(this.informers.map((informer) => informer.stop()));
  }
}
