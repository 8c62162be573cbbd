/**
 * The one registry of kinds: every kind a webhook matches, the store watches, the audit judges
 * or `kubectl admit` maps, with its group, version, plural and scope. Whether the audit judges a
 * kind is not written here but follows from the folders: it does when a validating webhook
 * matches it (operator/audit/audited-objects.ts). It sits on the webhook floor, below the table
 * and the operator that read it, and needs nothing itself, so rules may name a kind's plural
 * through it: a plural is spelled here and nowhere else under webhook/ and operator/.
 */

export type Scope = 'Namespaced' | 'Cluster';

export interface KindDefinition {
  /** The API group; '' for the core group. */
  group: string;
  version: string;
  kind: string;
  plural: string;
  scope: Scope;
  /** Served by a CRD a cluster may not have installed: its watch counts as synced while absent. */
  crd: boolean;
  /**
   * Its CRD is the project's to ship: `crds/<plural>.<group>.yaml`, which `npm run chart:generate`
   * copies into the chart. False for a kind served by a CRD only another project installs.
   */
  shipsCrd: boolean;
  /** Watched into the operator's state store (what the rules read). */
  watched: boolean;
  /**
   * Read only as named objects (a watch or a get per name), never listed whole: the audit reads
   * those objects by name, and the chart grants them by name (by hand), not the whole kind.
   */
  byName: boolean;
}

type Draft = Pick<KindDefinition, 'group' | 'version' | 'kind' | 'plural' | 'scope'> &
  Partial<Pick<KindDefinition, 'watched' | 'byName' | 'shipsCrd'>>;

const define = (draft: Draft): KindDefinition => {
  const crd = !['', 'apps', 'batch', 'scheduling.k8s.io'].includes(draft.group);
  return { watched: false, byName: false, shipsCrd: crd, ...draft, crd };
};

const core = (kind: string, plural: string, scope: Scope, flags: Partial<Draft> = {}): KindDefinition =>
  define({ group: '', version: 'v1', kind, plural, scope, ...flags });

const koordinator = (group: string, kind: string, plural: string, scope: Scope, flags: Partial<Draft> = {}) =>
  define({ group, version: 'v1alpha1', kind, plural, scope, ...flags });

const KTHENA_WORKLOAD = 'workload.serving.volcano.sh';
const KTHENA_NETWORKING = 'networking.serving.volcano.sh';
const kthena = (group: string, kind: string, plural: string): KindDefinition =>
  define({ group, version: 'v1alpha1', kind, plural, scope: 'Namespaced' });

const watched = { watched: true } as const;

/** Every kind by a name of ours; the webhook folders, the store and the audit refer to these. */
export const KINDS = {
  pod: core('Pod', 'pods', 'Namespaced', watched),
  node: core('Node', 'nodes', 'Cluster', watched),
  namespace: core('Namespace', 'namespaces', 'Cluster', watched),
  configMap: core('ConfigMap', 'configmaps', 'Namespaced', { ...watched, byName: true }),
  secret: core('Secret', 'secrets', 'Namespaced'),
  service: core('Service', 'services', 'Namespaced'),
  serviceAccount: core('ServiceAccount', 'serviceaccounts', 'Namespaced'),
  endpoints: core('Endpoints', 'endpoints', 'Namespaced'),
  event: core('Event', 'events', 'Namespaced'),
  limitRange: core('LimitRange', 'limitranges', 'Namespaced'),
  resourceQuota: core('ResourceQuota', 'resourcequotas', 'Namespaced'),
  persistentVolume: core('PersistentVolume', 'persistentvolumes', 'Cluster'),
  persistentVolumeClaim: core('PersistentVolumeClaim', 'persistentvolumeclaims', 'Namespaced'),
  podTemplate: core('PodTemplate', 'podtemplates', 'Namespaced'),
  replicationController: core('ReplicationController', 'replicationcontrollers', 'Namespaced'),
  deployment: define({
    group: 'apps',
    version: 'v1',
    kind: 'Deployment',
    plural: 'deployments',
    scope: 'Namespaced',
  }),
  statefulSet: define({
    group: 'apps',
    version: 'v1',
    kind: 'StatefulSet',
    plural: 'statefulsets',
    scope: 'Namespaced',
  }),
  daemonSet: define({
    group: 'apps',
    version: 'v1',
    kind: 'DaemonSet',
    plural: 'daemonsets',
    scope: 'Namespaced',
  }),
  replicaSet: define({
    group: 'apps',
    version: 'v1',
    kind: 'ReplicaSet',
    plural: 'replicasets',
    scope: 'Namespaced',
  }),
  controllerRevision: define({
    group: 'apps',
    version: 'v1',
    kind: 'ControllerRevision',
    plural: 'controllerrevisions',
    scope: 'Namespaced',
  }),
  job: define({ group: 'batch', version: 'v1', kind: 'Job', plural: 'jobs', scope: 'Namespaced' }),
  cronJob: define({
    group: 'batch',
    version: 'v1',
    kind: 'CronJob',
    plural: 'cronjobs',
    scope: 'Namespaced',
  }),
  priorityClass: define({
    group: 'scheduling.k8s.io',
    version: 'v1',
    kind: 'PriorityClass',
    plural: 'priorityclasses',
    scope: 'Cluster',
    ...watched,
  }),
  elasticQuota: koordinator('scheduling.sigs.k8s.io', 'ElasticQuota', 'elasticquotas', 'Namespaced', watched),
  reservation: koordinator('scheduling.koordinator.sh', 'Reservation', 'reservations', 'Cluster', watched),
  clusterColocationProfile: koordinator(
    'config.koordinator.sh',
    'ClusterColocationProfile',
    'clustercolocationprofiles',
    'Cluster',
    watched,
  ),
  // Watched, never installed: Koordinator's chart alone ships its CRD (docs/beside-upstream.md).
  elasticQuotaProfile: koordinator(
    'quota.koordinator.sh',
    'ElasticQuotaProfile',
    'elasticquotaprofiles',
    'Namespaced',
    { ...watched, shipsCrd: false },
  ),
  modelBooster: kthena(KTHENA_WORKLOAD, 'ModelBooster', 'modelboosters'),
  autoscalingPolicy: kthena(KTHENA_WORKLOAD, 'AutoscalingPolicy', 'autoscalingpolicies'),
  modelServing: kthena(KTHENA_WORKLOAD, 'ModelServing', 'modelservings'),
  modelRoute: kthena(KTHENA_NETWORKING, 'ModelRoute', 'modelroutes'),
  modelServer: kthena(KTHENA_NETWORKING, 'ModelServer', 'modelservers'),
} as const satisfies Record<string, KindDefinition>;

export type KindName = keyof typeof KINDS;

/** Every registered kind, in the registry's order. */
export const ALL_KINDS: readonly KindDefinition[] = Object.values(KINDS);

/** `group/version`, or `version` for the core group: a manifest's apiVersion. */
export function apiVersionOf(kind: KindDefinition): string {
  return kind.group === '' ? kind.version : `${kind.group}/${kind.version}`;
}

/** The registered kind of `group` with this plural, if any. */
export function kindOfResource(group: string, plural: string): KindDefinition | undefined {
  return ALL_KINDS.find((kind) => kind.group === group && kind.plural === plural);
}

/** Where the API server serves a kind's objects: all of them, or one namespace's. */
export function collectionPath(
  kind: Pick<KindDefinition, 'group' | 'version' | 'plural'>,
  namespace?: string,
): string {
  const root = kind.group === '' ? `/api/${kind.version}` : `/apis/${kind.group}/${kind.version}`;
  return namespace === undefined
    ? `${root}/${kind.plural}`
    : `${root}/namespaces/${namespace}/${kind.plural}`;
}
