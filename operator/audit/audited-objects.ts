/**
 * The existing objects an audit judges, listed read-only from the cluster a page at a time (so a
 * cluster of 100,000 pods is never held in memory at once): the registry's kinds a validating
 * webhook matches (webhook/kinds.ts, webhook/webhooks/), and the operator's ConfigMaps. A kind whose CRD is not installed is skipped and said so. A scope narrows it as kubectl's -n and -l do: one namespace
 * (whose namespaced objects only, as `kubectl get all -n`), objects matching a label selector.
 */
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import type { KubeObject } from '../../webhook/admission/types.js';
import { ALL_KINDS, KINDS, type KindDefinition } from '../../webhook/kinds.js';
import { WEBHOOKS } from '../../webhook/webhooks/index.js';
import { isNotFound } from '../kube/errors.js';

/** A kind the audit judges: an entry of the kind registry (webhook/kinds.ts). */
export type AuditedKind = KindDefinition;

/**
 * The kinds an audit judges, in the registry's order: those a validating webhook matches (the
 * audit reports refusals; a kind only mutated, as Reservations, has none to report), but
 * ConfigMaps, read by name below.
 */
export const AUDITED_KINDS: readonly AuditedKind[] = ALL_KINDS.filter(
  (kind) =>
    kind !== KINDS.configMap &&
    WEBHOOKS.some(
      (webhook) =>
        webhook.type === 'validating' &&
        webhook.resourceRules.some(
          (rule) =>
            rule.apiGroups.includes(kind.group) &&
            rule.resources.some((resource) => resource.split('/')[0] === kind.plural),
        ),
    ),
);

/**
 * How reports name a kind: by its kind, and its group too where two audited kinds share the kind.
 */
export function auditedKindName(kind: AuditedKind): string {
  const shared = AUDITED_KINDS.filter((other) => other.kind === kind.kind).length > 1;
  return shared ? `${kind.kind}.${kind.group}` : kind.kind;
}

const CONFIGMAP: AuditedKind = KINDS.configMap;

/** Objects per list request (kubectl's default chunk size): what one page holds in memory. */
export const DEFAULT_CHUNK_SIZE = 500;

export interface ListedPage {
  kind: AuditedKind;
  objects: KubeObject[];
}

interface ListBody {
  items?: unknown[];
  metadata?: { continue?: string };
}

/** Which objects an audit judges; everything when empty. */
export interface AuditScope {
  /** Only the namespaced objects of this namespace. */
  namespace?: string | undefined;
  /** Only objects matching this label selector (the API server's syntax, checked by it). */
  labelSelector?: string | undefined;
}

/** Every page of every audited kind; `skipped` receives the kinds the cluster does not serve. */
export async function* auditedPages(
  kubeConfig: KubeConfig,
  configMaps: readonly { namespace: string; name: string }[],
  skipped: (kind: AuditedKind, why: string) => void,
  scope: AuditScope = {},
  chunkSize = DEFAULT_CHUNK_SIZE,
): AsyncGenerator<ListedPage> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const { namespace, labelSelector } = scope;
  for (const kind of AUDITED_KINDS) {
    if (namespace !== undefined && kind.scope !== 'Namespaced') continue;
    let token: string | undefined;
    do {
      const page = {
        limit: chunkSize,
        ...(token ? { _continue: token } : {}),
        ...(labelSelector !== undefined ? { labelSelector } : {}),
      };
      const listed = { group: kind.group, version: kind.version, plural: kind.plural, ...page };
      let body: ListBody;
      try {
        if (kind === KINDS.pod) {
          body = (await (namespace !== undefined
            ? core.listNamespacedPod({ namespace, ...page })
            : core.listPodForAllNamespaces(page))) as ListBody;
        } else if (kind === KINDS.node) body = (await core.listNode(page)) as ListBody;
        else {
          body = (await (namespace !== undefined
            ? custom.listNamespacedCustomObject({ namespace, ...listed })
            : custom.listClusterCustomObject(listed))) as ListBody;
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
  for (const configMap of configMaps) {
    if (namespace !== undefined && configMap.namespace !== namespace) continue;
    let object: KubeObject | undefined;
    if (labelSelector === undefined) {
      try {
        object = (await core.readNamespacedConfigMap(configMap)) as unknown as KubeObject;
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    } else {
      // The API server matches the selector: one list of at most the one named ConfigMap.
      const list = await core.listNamespacedConfigMap({
        namespace: configMap.namespace,
        fieldSelector: `metadata.name=${configMap.name}`,
        labelSelector,
      });
      object = list.items[0] as unknown as KubeObject | undefined;
    }
    if (!object) continue;
    object.kind = 'ConfigMap';
    object.apiVersion = 'v1';
    found.push(object);
  }
  yield { kind: CONFIGMAP, objects: found };
}
