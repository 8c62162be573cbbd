/**
 * The existing objects an audit judges, listed read-only from the cluster a page at a time (so a
 * cluster of 100,000 pods is never held in memory at once): pods, nodes, ElasticQuotas, Models,
 * AutoscalingPolicies and their Bindings, and the operator's ConfigMaps. A kind whose CRD is not
 * installed is skipped and said so.
 */
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import type { KubeObject } from '../../webhook/admission/types.js';
import { isNotFound } from '../kube/errors.js';

export interface AuditedKind {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
}

export const AUDITED_KINDS: readonly AuditedKind[] = [
  { group: '', version: 'v1', kind: 'Pod', plural: 'pods', namespaced: true },
  { group: '', version: 'v1', kind: 'Node', plural: 'nodes', namespaced: false },
  {
    group: 'scheduling.sigs.k8s.io',
    version: 'v1alpha1',
    kind: 'ElasticQuota',
    plural: 'elasticquotas',
    namespaced: true,
  },
  { group: 'registry.volcano.sh', version: 'v1alpha1', kind: 'Model', plural: 'models', namespaced: true },
  {
    group: 'registry.volcano.sh',
    version: 'v1alpha1',
    kind: 'AutoscalingPolicy',
    plural: 'autoscalingpolicies',
    namespaced: true,
  },
  {
    group: 'registry.volcano.sh',
    version: 'v1alpha1',
    kind: 'AutoscalingPolicyBinding',
    plural: 'autoscalingpolicybindings',
    namespaced: true,
  },
];

const CONFIGMAP: AuditedKind = {
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  plural: 'configmaps',
  namespaced: true,
};

/** Objects per list request: what one page holds in memory. */
export const PAGE_SIZE = 500;

export interface ListedPage {
  kind: AuditedKind;
  objects: KubeObject[];
}

interface ListBody {
  items?: unknown[];
  metadata?: { continue?: string };
}

/** Every page of every audited kind; `skipped` receives the kinds the cluster does not serve. */
export async function* auditedPages(
  kubeConfig: KubeConfig,
  configMaps: readonly { namespace: string; name: string }[],
  skipped: (kind: AuditedKind, why: string) => void,
): AsyncGenerator<ListedPage> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  for (const kind of AUDITED_KINDS) {
    let token: string | undefined;
    do {
      const page = { limit: PAGE_SIZE, ...(token ? { _continue: token } : {}) };
      let body: ListBody;
      try {
        if (kind.plural === 'pods') body = (await core.listPodForAllNamespaces(page)) as ListBody;
        else if (kind.plural === 'nodes') body = (await core.listNode(page)) as ListBody;
        else {
          body = (await custom.listClusterCustomObject({
            group: kind.group,
            version: kind.version,
            plural: kind.plural,
            ...page,
          })) as ListBody;
        }
      } catch (error) {
        if (!isNotFound(error)) throw error;
        skipped(kind, 'its API is not served (CRD not installed)');
        break;
      }
      const objects = (body.items ?? []) as KubeObject[];
      // Typed lists leave kind and apiVersion out of their items.
      for (const object of objects) {
        object.kind = kind.kind;
        object.apiVersion = kind.group ? `${kind.group}/${kind.version}` : kind.version;
      }
      yield { kind, objects };
      token = body.metadata?.continue || undefined;
    } while (token);
  }
  const found: KubeObject[] = [];
  for (const { namespace, name } of configMaps) {
    try {
      const configMap = (await core.readNamespacedConfigMap({ namespace, name })) as unknown as KubeObject;
      configMap.kind = 'ConfigMap';
      configMap.apiVersion = 'v1';
      found.push(configMap);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
  yield { kind: CONFIGMAP, objects: found };
}
