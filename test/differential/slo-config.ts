/**
 * The data of a generated slo-controller-config: Koordinator's five checked keys (and now and then
 * one it leaves unchecked), each mostly valid, some with a value past a bound, a node strategy
 * without a selector, overlapping strategies, an unknown field, or text that is not JSON.
 */
import type { JsonObject, JsonValue } from '../../webhook/admission/types.js';
import type { Rng } from '../fuzz/prng.js';
import { selector } from './world.js';

/** One of `good`, or now and then one of `bad`. */
function value(rng: Rng, good: readonly JsonValue[], bad: readonly JsonValue[]): JsonValue {
  return bad.length > 0 && rng.chance(0.15) ? rng.pick(bad) : rng.pick(good);
}

function fields(rng: Rng, table: Record<string, [readonly JsonValue[], readonly JsonValue[]]>): JsonObject {
  const out: JsonObject = {};
  for (const [key, [good, bad]] of Object.entries(table))
    if (rng.chance(0.5)) out[key] = value(rng, good, bad);
  if (rng.chance(0.05)) out.unknownField = 1;
  return out;
}

const percent: [readonly JsonValue[], readonly JsonValue[]] = [
  [0, 50, 65, 70, 100],
  [-1, 101, 1000],
];

function colocation(rng: Rng): JsonObject {
  return fields(rng, {
    enable: [[true, false], []],
    metricAggregateDurationSeconds: [
      [60, 300],
      [0, -5],
    ],
    cpuReclaimThresholdPercent: [[60, 65, 101], [-1]],
    memoryReclaimThresholdPercent: [[65, 70], [-10]],
    resourceDiffThreshold: [
      [0.1, 0.5, 1],
      [0, 1.5],
    ],
    degradeTimeMinutes: [[15], [0]],
    midCPUThresholdPercent: percent,
    midMemoryThresholdPercent: percent,
    // Koordinator v1.8.0's mid reclaim mode and its reserved percents.
    midReclaimMode: [['static', 'dynamic'], [7]],
    midStaticCPUReservedPercent: percent,
    midStaticMemoryReservedPercent: percent,
  });
}

function threshold(rng: Rng): JsonObject {
  const out = fields(rng, {
    enable: [[true, false], []],
    cpuSuppressThresholdPercent: percent,
    cpuSuppressPolicy: [['cpuset', 'cfsQuota'], ['bogus']],
    memoryEvictThresholdPercent: [[70, 80], [101]],
    cpuEvictBESatisfactionUpperPercent: [[60], [101]],
    cpuEvictBESatisfactionLowerPercent: [[40], [70]],
  });
  if (rng.chance(0.3)) {
    out.memoryEvictLowerPercent = rng.pick([60, 65, 90]);
    out.memoryEvictThresholdPercent ??= 70;
  }
  // Koordinator v1.8.0's allocatable-evict thresholds (each pair ordered, or not) and priority.
  for (const kind of ['cpu', 'memory']) {
    if (!rng.chance(0.2)) continue;
    out[`${kind}AllocatableEvictThresholdPercent`] = rng.pick([80, 95, 120]);
    if (rng.chance(0.7)) out[`${kind}AllocatableEvictLowerPercent`] = rng.pick([70, 90, 130, -1]);
  }
  if (rng.chance(0.15)) out.allocatableEvictPriorityThreshold = rng.pick([0, 5999, 7999, 8000, -1]);
  return out;
}

function resourceQos(rng: Rng): JsonObject {
  const klass = (): JsonObject => {
    const out: JsonObject = {};
    if (rng.chance(0.6)) out.cpuQOS = fields(rng, { enable: [[true], []], groupIdentity: [[-1, 0, 2], [3]] });
    if (rng.chance(0.4)) {
      out.memoryQOS = fields(rng, {
        enable: [[true], []],
        minLimitPercent: percent,
        wmarkRatio: percent,
        priority: [[0, 12], [13]],
      });
    }
    if (rng.chance(0.3)) {
      out.networkQOS = fields(rng, {
        enable: [[true], []],
        ingressRequest: [
          [10, 50, '50M', '100M'],
          [101, '', '50a'],
        ],
        ingressLimit: [[100, '500M'], [-1]],
        egressRequest: [[20, '10M'], [150]],
      });
    }
    if (rng.chance(0.2))
      out.resctrlQOS = fields(rng, {
        catRangeStartPercent: [[0, 10], [120]],
        catRangeEndPercent: [[100, 50], [5]],
      });
    return out;
  };
  const strategy: JsonObject = {};
  for (const name of ['lsrClass', 'lsClass', 'beClass']) if (rng.chance(0.5)) strategy[name] = klass();
  return strategy;
}

function system(rng: Rng): JsonObject {
  return fields(rng, {
    minFreeKbytesFactor: [
      [100, 200],
      [0, -1],
    ],
    watermarkScaleFactor: [
      [150, 400],
      [401, 0],
    ],
    memcgReapBackGround: [[0, 1], [2]],
    totalNetworkBandwidth: [['1G', '10G', '100M'], ['x']],
  });
}

function cpuBurst(rng: Rng): JsonObject {
  return fields(rng, {
    policy: [['none', 'auto', 'cpuBurstOnly'], ['bogus']],
    cpuBurstPercent: [
      [1000, 1],
      [0, 10001],
    ],
    cfsQuotaBurstPercent: [[300, 100], [99]],
    sharePoolThresholdPercent: percent,
  });
}

/** Node strategies (or nodeConfigs) over the node vocabulary; some overlap, some lack a selector. */
function nodeStrategies(rng: Rng, make: (rng: Rng) => JsonObject): JsonObject[] {
  const count = rng.pick([0, 0, 1, 2, 2, 3]);
  return Array.from({ length: count }, (_, i) => {
    const nodeSelector = rng.chance(0.1)
      ? undefined
      : (selector(rng, 'node') ?? { matchLabels: { pool: 'a' } });
    return {
      ...(rng.chance(0.9) ? { name: `s${i}` } : {}),
      ...(nodeSelector ? { nodeSelector } : {}),
      ...make(rng),
    };
  });
}

const NOT_JSON = ['{', 'not json', '{"clusterStrategy":', '[]', 'null', '""'];

/** A key's value: mostly its JSON, sometimes text that is not. */
function text(rng: Rng, build: () => JsonObject): string {
  return rng.chance(0.07) ? rng.pick(NOT_JSON) : JSON.stringify(build());
}

export const SLO_KEYS = [
  'colocation-config',
  'resource-threshold-config',
  'resource-qos-config',
  'system-config',
  'cpu-burst-config',
] as const;

/** The value of one key of the ConfigMap. */
export function sloKey(rng: Rng, key: (typeof SLO_KEYS)[number] | 'resource-amplification-config'): string {
  switch (key) {
    case 'colocation-config':
      return text(rng, () => ({
        ...colocation(rng),
        ...(rng.chance(0.5) ? { nodeConfigs: nodeStrategies(rng, colocation) } : {}),
      }));
    case 'resource-threshold-config':
      return text(rng, () => ({
        clusterStrategy: threshold(rng),
        nodeStrategies: nodeStrategies(rng, threshold),
      }));
    case 'resource-qos-config':
      return text(rng, () => ({
        clusterStrategy: resourceQos(rng),
        nodeStrategies: nodeStrategies(rng, resourceQos),
      }));
    case 'system-config':
      return text(rng, () => ({ clusterStrategy: system(rng), nodeStrategies: nodeStrategies(rng, system) }));
    case 'cpu-burst-config':
      return text(rng, () => ({
        clusterStrategy: cpuBurst(rng),
        nodeStrategies: nodeStrategies(rng, cpuBurst),
      }));
    case 'resource-amplification-config':
      return text(rng, () => ({ enable: true, resourceAmplificationRatio: { cpu: rng.pick([1.5, 2, -1]) } }));
  }
}

/** The ConfigMap's data: some of the keys. */
export function sloConfigData(rng: Rng): Record<string, string> {
  const data: Record<string, string> = {};
  for (const key of SLO_KEYS) if (rng.chance(0.5)) data[key] = sloKey(rng, key);
  if (rng.chance(0.05)) data['resource-amplification-config'] = sloKey(rng, 'resource-amplification-config');
  return data;
}
