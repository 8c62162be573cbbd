/** Koordinator's elastic-quota labels, annotations and special quota names. */
const PREFIX = 'quota.scheduling.koordinator.sh';

export const QUOTA_LABELS = {
  name: `${PREFIX}/name`,
  parent: `${PREFIX}/parent`,
  isParent: `${PREFIX}/is-parent`,
  treeId: `${PREFIX}/tree-id`,
  isRoot: `${PREFIX}/is-root`,
  allowForceUpdate: `${PREFIX}/allow-force-update`,
  preemptible: `${PREFIX}/preemptible`,
} as const;

export const QUOTA_ANNOTATIONS = {
  sharedWeight: `${PREFIX}/shared-weight`,
  namespaces: `${PREFIX}/namespaces`,
  admission: `${PREFIX}/admission`,
  maxStrictCheckResourceKeys: `${PREFIX}/max-strict-check-resource-keys`,
} as const;

export const ROOT_QUOTA = 'koordinator-root-quota';
export const SYSTEM_QUOTA = 'koordinator-system-quota';
export const DEFAULT_QUOTA = 'koordinator-default-quota';
