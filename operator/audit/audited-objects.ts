/**
 * The existing objects an audit judges, listed read-only from the cluster a page at a time (so a
 * cluster of 100,000 pods is never held in memory at once): the registry's kinds a validating
 * webhook matches (webhook/kinds.ts, webhook/webhooks/), and the operator's ConfigMaps. A kind whose CRD is not installed is skipped and said so. A scope narrows it as kubectl's -n and -l do: one namespace
 * (whose namespaced objects only, as `kubectl get all -n`), objects matching a label selector.
 */
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { KubeObject } from '../../webhook/admission/types.js';
import { ALL_KINDS, apiVersionOf, collectionPath, KINDS, type KindDefinition } from '../../webhook/kinds.js';
import { pagedList } from '../kube/paged-list.js';
import { WEBHOOKS } from '../../webhook/webhooks/index.js';
import { isNotFound } from '../kube/errors.js';

/** A kind the audit judges: an entry of the kind registry (webhook/kinds.ts). */
export type AuditedKind = KindDefinition;

/**
 * The kinds an audit judges, in the registry's order: those a validating webhook matches (the
 * audit reports refusals; a kind only mutated, as Reservations, has none to report), but the
 * kinds read by name (ConfigMaps: the operator's own and Koordinator's, read below).
 */
export const AUDITED_KINDS: readonly AuditedKind[] = ALL_KINDS.filter(
  (kind) =>
    !kind.byName &&
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
  /**
   * On a kind's last page: the objects of the kind the cluster holds in the scope, as the API
   * server counted them (docs/cli.md, "audit"); undefined on the pages before.
   */
  held: number | undefined;
  /** The kind's list went on from a newer snapshot after its first one expired (operator/kube/paged-list.ts). */
  resumed: boolean;
}

/** Which objects an audit judges; everything when empty. */
export interface AuditScope {
  /** Only the namespaced objects of this namespace. */
  namespace?: string | undefined;
  /** Only objects matching this label selector (the API server's syntax, checked by it). */
  labelSelector?: string | undefined;
}

/**
 * Every page of every audited kind; `skipped` receives the kinds the cluster does not serve. A
 * list that cannot be read in full throws (IncompleteList, or the API server's error): an audit of
 * part of a kind is no audit of it.
 */
export async function* auditedPages(
  kubeConfig: KubeConfig,
  configMaps: readonly { namespace: string; name: string }[],
  skipped: (kind: AuditedKind, why: string) => void,
  scope: AuditScope = {},
  chunkSize = DEFAULT_CHUNK_SIZE,
): AsyncGenerator<ListedPage> {
  const { namespace, labelSelector } = scope;
  for (const kind of AUDITED_KINDS) {
    if (namespace !== undefined && kind.scope !== 'Namespaced') continue;
    const pages = pagedList(kubeConfig, collectionPath(kind, namespace), {
      limit: chunkSize,
      labelSelector,
      resumeExpired: true,
    });
    try {
      for await (const { items, held, resumed } of pages) {
        const objects = items as unknown as KubeObject[];
        // Lists leave kind and apiVersion out of their items.
        for (const object of objects) {
          object.kind = kind.kind;
          object.apiVersion = apiVersionOf(kind);
        }
        yield { kind, objects, held, resumed };
      }
    } catch (error) {
      if (!isNotFound(error)) throw error;
      skipped(kind, 'its API is not served (CRD not installed)');
    }
  }
  const core = kubeConfig.makeApiClient(CoreV1Api);
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
  yield { kind: CONFIGMAP, objects: found, held: found.length, resumed: false };
}
