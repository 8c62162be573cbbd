/**
 * The JSON shapes of the five slo-controller-config keys Koordinator's webhook checks, with the
 * go-playground tags of their Go types (slo_controller_config.go,
 * `apis/slo/v1alpha1/nodeslo_types.go`). Enum-like strings (policies) carry no tags there, so none here.
 *
 * Upstream sources and every message: docs/rules/validate-configmap.md.
 */
import { list, map, struct } from '../../../util/go-decode/composites.js';
import {
  goAnyObject,
  goBool,
  goDuration,
  goFloat64,
  goInt32,
  goInt64,
  goIntOrString,
  goQuantityNanos,
  goString,
} from '../../../util/go-decode/scalars.js';
import { tagged } from '../../../util/go-decode/tags.js';
import { NODE_PROFILE } from './node-selectors.js';

const percent = tagged(goInt64, 'min=0,max=100');

// ColocationStrategy, inlined at the top of colocation-config and in each nodeConfig.
const COLOCATION_STRATEGY = {
  enable: goBool,
  metricAggregateDurationSeconds: tagged(goInt64, 'min=1'),
  metricReportIntervalSeconds: tagged(goInt64, 'min=1'),
  metricAggregatePolicy: struct({ durations: list(goDuration) }),
  metricMemoryCollectPolicy: goString,
  cpuReclaimThresholdPercent: tagged(goInt64, 'min=0'),
  cpuCalculatePolicy: goString,
  memoryReclaimThresholdPercent: tagged(goInt64, 'min=0'),
  memoryCalculatePolicy: goString,
  degradeTimeMinutes: tagged(goInt64, 'min=1'),
  updateTimeThresholdSeconds: tagged(goInt64, 'min=1'),
  resourceDiffThreshold: tagged(goFloat64, 'gt=0,max=1'),
  midReclaimMode: goString,
  midCPUThresholdPercent: percent,
  midMemoryThresholdPercent: percent,
  midUnallocatedPercent: percent,
  midStaticCPUReservedPercent: percent,
  midStaticMemoryReservedPercent: percent,
  batchCPUThresholdPercent: tagged(goInt64, 'min=0'),
  batchMemoryThresholdPercent: tagged(goInt64, 'min=0'),
  extensions: goAnyObject,
};

export const COLOCATION_CONFIG = struct({
  ...COLOCATION_STRATEGY,
  nodeConfigs: list(struct({ ...NODE_PROFILE, ...COLOCATION_STRATEGY })),
});

const RESOURCE_THRESHOLD_STRATEGY = {
  enable: goBool,
  cpuSuppressThresholdPercent: percent,
  cpuSuppressMinPercent: percent,
  cpuSuppressPolicy: goString,
  memoryEvictThresholdPercent: tagged(goInt64, 'min=0,max=100,gtfield=memoryEvictLowerPercent'),
  memoryEvictLowerPercent: tagged(goInt64, 'min=0,max=100,ltfield=memoryEvictThresholdPercent'),
  memoryAllocatableEvictThresholdPercent: tagged(goInt64, 'min=0,gtfield=memoryAllocatableEvictLowerPercent'),
  memoryAllocatableEvictLowerPercent: tagged(goInt64, 'min=0,ltfield=memoryAllocatableEvictThresholdPercent'),
  cpuEvictBESatisfactionUpperPercent: tagged(
    goInt64,
    'min=0,max=100,gtfield=cpuEvictBESatisfactionLowerPercent',
  ),
  cpuEvictBESatisfactionLowerPercent: tagged(
    goInt64,
    'min=0,max=100,ltfield=cpuEvictBESatisfactionUpperPercent',
  ),
  cpuEvictBEUsageThresholdPercent: percent,
  cpuEvictTimeWindowSeconds: tagged(goInt64, 'gt=0'),
  cpuEvictThresholdPercent: tagged(goInt64, 'min=0,max=100,gtfield=cpuEvictLowerPercent'),
  cpuEvictLowerPercent: tagged(goInt64, 'min=0,max=100,ltfield=cpuEvictThresholdPercent'),
  cpuAllocatableEvictThresholdPercent: tagged(goInt64, 'min=0,gtfield=cpuAllocatableEvictLowerPercent'),
  cpuAllocatableEvictLowerPercent: tagged(goInt64, 'min=0,ltfield=cpuAllocatableEvictThresholdPercent'),
  cpuEvictPolicy: goString,
  evictEnabledPriorityThreshold: goInt32,
  allocatableEvictPriorityThreshold: tagged(goInt32, 'min=0,max=7999'),
};

export const RESOURCE_THRESHOLD_CONFIG = struct({
  clusterStrategy: struct(RESOURCE_THRESHOLD_STRATEGY),
  nodeStrategies: list(struct({ ...NODE_PROFILE, ...RESOURCE_THRESHOLD_STRATEGY })),
});

const IO_CFG = struct({
  readIOPS: goInt64,
  writeIOPS: goInt64,
  readBPS: goInt64,
  writeBPS: goInt64,
  ioWeightPercent: goInt64,
  readLatency: goInt64,
  writeLatency: goInt64,
  readLatencyPercent: goInt64,
  writeLatencyPercent: goInt64,
  enableUserModel: goBool,
  modelReadBPS: goInt64,
  modelWriteBPS: goInt64,
  modelReadSeqIOPS: goInt64,
  modelWriteSeqIOPS: goInt64,
  modelReadRandIOPS: goInt64,
  modelWriteRandIOPS: goInt64,
});

const RESOURCE_QOS = struct({
  cpuQOS: struct({
    enable: goBool,
    groupIdentity: tagged(goInt64, 'min=-1,max=2'),
    schedIdle: tagged(goInt64, 'min=0,max=1'),
    coreExpeller: goBool,
  }),
  // The page-cache switches (pageCacheEnable, pageCacheLimitSize, pageCacheReclaimSync) have no tags
  // and nothing we port from pins their Go types, so they are left undecoded rather than guessed at.
  memoryQOS: struct({
    enable: goBool,
    minLimitPercent: percent,
    lowLimitPercent: percent,
    throttlingPercent: percent,
    wmarkRatio: percent,
    wmarkScalePermill: tagged(goInt64, 'min=1,max=1000'),
    wmarkMinAdj: tagged(goInt64, 'min=-25,max=50'),
    priorityEnable: tagged(goInt64, 'min=0,max=1'),
    priority: tagged(goInt64, 'min=0,max=12'),
    oomKillGroup: tagged(goInt64, 'min=0,max=1'),
    pageCacheLimitPercent: percent,
  }),
  // ioCfg has kubebuilder markers only, which a ConfigMap never meets: types are checked, bounds are not.
  blkioQOS: struct({
    enable: goBool,
    blocks: list(struct({ name: goString, type: goString, ioCfg: IO_CFG })),
  }),
  resctrlQOS: struct({
    enable: goBool,
    catRangeStartPercent: tagged(goInt64, 'min=0,max=100,ltfield=catRangeEndPercent'),
    catRangeEndPercent: tagged(goInt64, 'min=0,max=100,gtfield=catRangeStartPercent'),
    mbaPercent: percent,
  }),
  networkQOS: struct({
    enable: goBool,
    ingressRequest: goIntOrString,
    ingressLimit: goIntOrString,
    egressRequest: goIntOrString,
    egressLimit: goIntOrString,
  }),
});

const RESOURCE_QOS_STRATEGY = {
  policies: struct({ cpuPolicy: goString, netQOSPolicy: goString }),
  lsrClass: RESOURCE_QOS,
  lsClass: RESOURCE_QOS,
  beClass: RESOURCE_QOS,
  systemClass: RESOURCE_QOS,
  cgroupRoot: RESOURCE_QOS,
};

export const RESOURCE_QOS_CONFIG = struct({
  clusterStrategy: struct(RESOURCE_QOS_STRATEGY),
  nodeStrategies: list(struct({ ...NODE_PROFILE, ...RESOURCE_QOS_STRATEGY })),
});

const SYSTEM_STRATEGY = {
  minFreeKbytesFactor: tagged(goInt64, 'gt=0'),
  watermarkScaleFactor: tagged(goInt64, 'gt=0,max=400'),
  memcgReapBackGround: tagged(goInt64, 'min=0,max=1'),
  schedGroupIdentityEnabled: goInt64,
  schedIdleSaverWmark: goInt64,
  schedFeatures: map(goBool),
  pageCacheLimitEnabled: tagged(goInt64, 'min=0,max=1'),
  totalNetworkBandwidth: goQuantityNanos,
};

export const SYSTEM_CONFIG = struct({
  clusterStrategy: struct(SYSTEM_STRATEGY),
  nodeStrategies: list(struct({ ...NODE_PROFILE, ...SYSTEM_STRATEGY })),
});

const CPU_BURST_STRATEGY = {
  policy: goString,
  cpuBurstPercent: tagged(goInt64, 'min=1,max=10000'),
  cfsQuotaBurstPercent: tagged(goInt64, 'min=100'),
  cfsQuotaBurstPeriodSeconds: tagged(goInt64, 'min=-1'),
  sharePoolThresholdPercent: percent,
};

export const CPU_BURST_CONFIG = struct({
  clusterStrategy: struct(CPU_BURST_STRATEGY),
  nodeStrategies: list(struct({ ...NODE_PROFILE, ...CPU_BURST_STRATEGY })),
});
