/**
 * The names and values the differential suite's worlds and reviews are drawn from. Small on
 * purpose: the same few namespaces, quota names, labels and quantities recur across a world and
 * its reviews, so reviews meet the state (a pod names a quota that exists, a profile selects the
 * pod, a node strategy selects the node) instead of missing it.
 */
import type { Rng } from '../fuzz/prng.js';

export {
  POD_ENHANCED_VALIDATOR_CONFIG_NAME as ENHANCED_VALIDATOR_CONFIG_NAME,
  SLO_CONFIG_NAME,
} from '../../webhook/names.js';
export { PRIORITY_LABEL, QOS_LABEL } from '../../webhook/rules/koordinator/colocation/priority-qos.js';
export {
  AMPLIFICATION_RATIO_ANNOTATION as RATIO_ANNOTATION,
  RAW_ALLOCATABLE_ANNOTATION,
} from '../../webhook/rules/koordinator/node/keys.js';

export const KOORDINATOR_NAMESPACE = 'koordinator-system';
export const Q = (key: string): string => `quota.scheduling.koordinator.sh/${key}`;
export const PRIORITY_CLASS_LABEL = 'koordinator.sh/priority-class';
export const EXTENDED_SPEC_ANNOTATION = 'node.koordinator.sh/extended-resource-spec';
export const RESERVE_POD_ANNOTATION = 'scheduling.koordinator.sh/reserve-pod';
export const SKIP_UPDATE_RESOURCES_ANNOTATION = 'config.koordinator.sh/skip-update-resources';

/** Namespaces every world has (pods and quotas live in these). */
export const NAMESPACES = ['team', 'ml', 'default', 'plain', 'batch'] as const;
/** Quota names: a tree (org > team-a, team-b > squad), stand-alone quotas, one named after a namespace. */
export const QUOTA_NAMES = ['org', 'team-a', 'team-b', 'squad', 'solo', 'tight', 'ml', 'gpu-pool'] as const;
export const SPECIAL_QUOTAS = [
  'koordinator-root-quota',
  'koordinator-default-quota',
  'koordinator-system-quota',
] as const;
export const TREE_IDS = ['', 't1', 't2'] as const;

export const QOS_VALUES = ['LSE', 'LSR', 'LS', 'BE', 'SYSTEM', 'bogus', ''] as const;
export const PRIORITY_CLASS_VALUES = [
  'koord-prod',
  'koord-mid',
  'koord-batch',
  'koord-free',
  'bogus',
] as const;
/** spec.priority values across Koordinator's ranges and outside them. */
export const PRIORITY_VALUES = [9500, 9000, 9999, 7500, 5500, 5999, 3500, 0, 100, 10000, 2000000000] as const;
export const PRIORITY_CLASSES: readonly { name: string; value: number; preemptionPolicy?: string }[] = [
  { name: 'koord-prod', value: 9500 },
  { name: 'koord-mid', value: 7500 },
  { name: 'koord-batch', value: 5500, preemptionPolicy: 'Never' },
  { name: 'koord-free', value: 3500 },
  { name: 'koordinator-batch', value: 5999 },
  { name: 'high', value: 100000, preemptionPolicy: 'PreemptLowerPriority' },
];

export const APP_VALUES = ['web', 'db', 'job'] as const;
export const NODE_LABELS: readonly [string, readonly string[]][] = [
  ['pool', ['a', 'b']],
  ['gpu', ['true']],
  ['zone', ['z1', 'z2']],
];

/** Quantities as users spell them, across formats (DecimalSI, BinarySI, DecimalExponent) and sizes. */
export const CPU_QUANTITIES = [
  '1',
  '2',
  '500m',
  '1500m',
  '100m',
  '0',
  '4',
  '1.5',
  '1e3',
  '1000m',
  '8',
  '250m',
];
export const MEMORY_QUANTITIES = ['1Gi', '2Gi', '512Mi', '4Gi', '1G', '100M', '0', '8Gi', '1e9', '1.5Gi'];
export const GPU_PERCENTS = ['100', '50', '200', '150', '0', '300', '1e2'];
export const SHARED_COUNTS = ['1', '2', '0', '3'];
export const COUNTS = ['1', '2', '4', '8', '0'];

/** The resource names quota max/min and pod requests draw from, with the quantities each takes. */
export const RESOURCES: readonly [string, readonly string[]][] = [
  ['cpu', CPU_QUANTITIES],
  ['memory', MEMORY_QUANTITIES],
  ['nvidia.com/gpu', COUNTS],
  ['koordinator.sh/gpu', GPU_PERCENTS],
  ['ephemeral-storage', MEMORY_QUANTITIES],
  ['kubernetes.io/batch-cpu', ['1000', '500', '2k', '0']],
  ['kubernetes.io/batch-memory', MEMORY_QUANTITIES],
  ['pods', COUNTS],
];

export function quantityFor(rng: Rng, resource: string): string {
  const found = RESOURCES.find(([name]) => name === resource);
  return rng.pick(found ? found[1] : COUNTS);
}

/** A few of `items`, without repeats, in their order. */
export function some<T>(rng: Rng, items: readonly T[], p = 0.5): T[] {
  return items.filter(() => rng.chance(p));
}

/** A JSON value's string, '' when it is none (names and kinds of generated objects). */
export const text = (value: unknown): string => (typeof value === 'string' ? value : '');
