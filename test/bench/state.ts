/**
 * `state`: the pod paths again with a large state in memory (built in process, as the store would
 * hold it), each as a share of its own rate on the empty state measured in the same run.
 */
import type { JsonObject } from '../../webhook/admission/types.js';
import type { QuotaView } from '../../webhook/rules/koordinator/quota/quota-view.js';
import { DEFAULT_TIER_LABEL_KEY, NAMESPACE_NAME_LABEL } from '../../webhook/names.js';
import type { ColocationProfileView, NamespaceView, StateSnapshot } from '../../webhook/state.js';
import { stateSnapshot } from '../harness/state.js';
import type { DriveSettings } from './drive.js';
import { benchCertificates } from './references.js';
import { inform, recordShare } from './report.js';
import { BENCH_NAMESPACE, measureOurPaths, measureReferences, TIERED_NAMESPACE } from './server.js';

/** The namespaces every pod path is driven in: one plain, one in a GPU tier. */
function benchNamespaces(): NamespaceView[] {
  return [
    { name: BENCH_NAMESPACE, labels: { [NAMESPACE_NAME_LABEL]: BENCH_NAMESPACE } },
    {
      name: TIERED_NAMESPACE,
      labels: { [NAMESPACE_NAME_LABEL]: TIERED_NAMESPACE, [DEFAULT_TIER_LABEL_KEY]: 'gold' },
    },
  ];
}

export const emptyState = (): StateSnapshot => stateSnapshot({ namespaces: benchNamespaces() });

export interface StateSize {
  namespaces: number;
  quotas: number;
  profiles: number;
  models: number;
  pods: number;
}

/** The large state (docs/performance/README.md) at scale 1: 1,000 namespaces, 1,020 quotas, 300 profiles, 1,000 Models, 3,000 pods. */
export function stateSize(scale: number): StateSize {
  const n = (count: number): number => Math.max(1, Math.round(count * scale));
  return { namespaces: n(1000), quotas: n(1020), profiles: n(300), models: n(1000), pods: n(3000) };
}

/**
 * ClusterColocationProfiles as teams write them, none matching the bench pods: most select pods
 * by an app label, some only by namespace, some by expressions alone (no equality to index on).
 */
export function benchProfiles(count: number): ColocationProfileView[] {
  return Array.from({ length: count }, (_, i) => {
    const kind = i % 10;
    const spec: JsonObject =
      kind < 6
        ? { selector: { matchLabels: { app: `batch-${i}` } } }
        : kind < 9
          ? {
              namespaceSelector: { matchLabels: { [NAMESPACE_NAME_LABEL]: `team-${i}` } },
              selector: { matchExpressions: [{ key: 'tier', operator: 'Exists' }] },
            }
          : {
              selector: { matchExpressions: [{ key: 'colocate', operator: 'In', values: ['yes', 'true'] }] },
            };
    return {
      name: `profile-${String(i).padStart(5, '0')}`,
      annotations: {},
      spec: { ...spec, qosClass: 'BE', priorityClassName: 'koord-batch', labels: { colocated: 'true' } },
    };
  });
}

export function largeState(size: StateSize, profiles = size.profiles): StateSnapshot {
  const namespaces = [
    ...benchNamespaces(),
    ...Array.from({ length: size.namespaces }, (_, i) => ({
      name: `team-${i}`,
      labels: {
        [NAMESPACE_NAME_LABEL]: `team-${i}`,
        ...(i % 3 === 0 ? { [DEFAULT_TIER_LABEL_KEY]: 'silver' } : {}),
      },
    })),
  ];
  const quotas: QuotaView[] = Array.from({ length: size.quotas }, (_, i) => ({
    namespace: `team-${i % size.namespaces}`,
    name: `quota-${i}`,
    parent: i < 20 ? 'koordinator-root-quota' : `quota-${i % 20}`,
    isParent: i < 20,
    treeId: '',
    isRoot: false,
    allowForceUpdate: false,
    min: { cpu: '1', memory: '1Gi' },
    max: { cpu: '100', memory: '100Gi' },
    namespaces: i >= 20 ? [`team-${i % size.namespaces}`] : [],
  }));
  const quotaPods: Record<string, string[]> = {};
  const quotaUsed: Record<string, Record<string, bigint>> = {};
  for (let i = 0; i < size.pods; i++) {
    const quota = `quota-${20 + (i % Math.max(1, size.quotas - 20))}`;
    (quotaPods[quota] ??= []).push(`team-${i % size.namespaces}/pod-${i}`);
    const used = (quotaUsed[quota] ??= { cpu: 0n, memory: 0n });
    used.cpu = (used.cpu ?? 0n) + 500_000_000n;
    used.memory = (used.memory ?? 0n) + 512n * 2n ** 20n * 1_000_000_000n;
  }
  return stateSnapshot({
    namespaces,
    elasticQuotas: quotas,
    quotaPods,
    quotaUsed,
    colocationProfiles: benchProfiles(profiles),
    priorityClasses: [{ name: 'koord-batch', value: 5500 }],
  });
}

export async function benchState(settings: DriveSettings, scale: number): Promise<void> {
  const size = stateSize(scale);
  inform('state: namespaces', size.namespaces, 'count');
  inform('state: ElasticQuotas', size.quotas, 'count');
  inform('state: ClusterColocationProfiles', size.profiles, 'count');
  inform('state: pods counted against quotas', size.pods, 'count');
  const certs = await benchCertificates();
  const references = await measureReferences(certs, settings);
  const empty = await measureOurPaths(certs, emptyState(), references, settings, 'state empty');
  const large = await measureOurPaths(certs, largeState(size), references, settings, 'state large');
  for (const [path, figures] of large) {
    const base = empty.get(path)!;
    recordShare(
      `state: ${path} at the large state, share of its empty-state rate (per CPU-s)`,
      figures.capacity,
      base.capacity,
      90,
    );
    inform(
      `state: ${path} at the large state, share of its empty-state rate (wall clock)`,
      (100 * figures.rate) / base.rate,
      '%',
    );
  }
  const thousand = await measureOurPaths(
    certs,
    largeState(size, 1000),
    references,
    settings,
    'state 1000 profiles',
    ['/mutate-pod'],
  );
  const mutate = thousand.get('/mutate-pod')!;
  const base = empty.get('/mutate-pod')!;
  recordShare(
    'state: /mutate-pod with 1,000 profiles, share of its empty-state rate (per CPU-s)',
    mutate.capacity,
    base.capacity,
    90,
  );
  inform(
    'state: /mutate-pod with 1,000 profiles, share of its empty-state rate (wall clock)',
    (100 * mutate.rate) / base.rate,
    '%',
  );
}
