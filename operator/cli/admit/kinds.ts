/**
 * Which resource a manifest's kind is, as the API server's REST mapping would say: the plural the
 * webhook rules match on, and whether the kind lives in a namespace. Kinds of an API group that
 * one of our webhooks watches must be known exactly (a wrong guess would send the object to the
 * wrong webhooks or to none); kinds of any other group reach no webhook, so a guessed plural is
 * as good as the real one.
 */
import type { GroupVersionKind, GroupVersionResource } from '../../../webhook/admission/types.js';
import { ALL_KINDS } from '../../../webhook/kinds.js';
import { failure, success, type Result } from '../../../webhook/util/result.js';

export interface KindInfo {
  group: string;
  kind: string;
  plural: string;
  namespaced: boolean;
}

/** Every kind of the registry (webhook/kinds.ts): whatever one of our webhooks matches is in it. */
const KNOWN: readonly KindInfo[] = ALL_KINDS.map(({ group, kind, plural, scope }) => ({
  group,
  kind,
  plural,
  namespaced: scope === 'Namespaced',
}));

const byGroupKind = new Map(KNOWN.map((info) => [`${info.group}/${info.kind}`, info]));

/** `apps/v1` → {group: apps, version: v1}; `v1` → the core group. */
export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** apimachinery's UnsafeGuessKindToResource: the lower-cased kind, pluralised. */
function guessPlural(kind: string): string {
  const lower = kind.toLowerCase();
  if (lower.endsWith('s')) return `${lower}es`;
  if (lower.endsWith('y')) return `${lower.slice(0, -1)}ies`;
  return `${lower}s`;
}

export interface KindMapping {
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  namespaced: boolean;
}

/**
 * The REST mapping of `apiVersion`/`kind`. `watchedGroups` are the API groups our webhooks
 * match; an unknown kind in one of them is an error.
 */
export function lookupKind(
  apiVersion: string,
  kind: string,
  watchedGroups: ReadonlySet<string>,
  hasNamespace: boolean,
): Result<KindMapping> {
  const { group, version } = splitApiVersion(apiVersion);
  const info = byGroupKind.get(`${group}/${kind}`);
  const gvk = { group, version, kind };
  if (info) {
    return success({
      kind: gvk,
      resource: { group, version, resource: info.plural },
      namespaced: info.namespaced,
    });
  }
  if (watchedGroups.has(group)) {
    const known = KNOWN.filter((each) => each.group === group).map((each) => each.kind);
    return failure(
      `unknown kind ${JSON.stringify(kind)} in API group ${JSON.stringify(group || 'core')}; known: ${known.join(', ')}`,
    );
  }
  return success({
    kind: gvk,
    resource: { group, version, resource: guessPlural(kind) },
    namespaced: hasNamespace,
  });
}

/** The collection paths the API server lists a kind at: cluster-wide and, if namespaced, in its namespace. */
export function collectionPaths(apiVersion: string, kind: string, namespace: string): string[] {
  const { group, version } = splitApiVersion(apiVersion);
  const info = byGroupKind.get(`${group}/${kind}`);
  if (!info) return [];
  const prefix = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
  const paths = [`${prefix}/${info.plural}`];
  if (info.namespaced) paths.push(`${prefix}/namespaces/${namespace}/${info.plural}`);
  return paths;
}
