/**
 * The validator tags of Koordinator's slo-controller-config types, each bound at its edges, through /validate-configmap (a CREATE, so
 * every key is checked).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sloConfigProblemTexts } from '../../../../../harness/slo-config.js';

type Wrap = (fields: Record<string, unknown>) => unknown;

interface Bound {
  key: string;
  /** The JSON path the fields sit at, as messages print it. */
  at: string;
  wrap: Wrap;
  fields: string[];
  valid: number[];
  invalid: [number, string][];
}

function problems(key: string, config: unknown): string[] {
  return sloConfigProblemTexts({ [key]: JSON.stringify(config) }, null, []);
}

const top: Wrap = (fields) => fields;
const cluster: Wrap = (fields) => ({ clusterStrategy: fields });
const qosClass =
  (className: string, part: string): Wrap =>
  (fields) => ({ clusterStrategy: { [className]: { [part]: fields } } });

const percent = {
  valid: [0, 100],
  invalid: [
    [-1, 'must be at least 0'],
    [101, 'must be at most 100'],
  ],
} satisfies Pick<Bound, 'valid' | 'invalid'>;
const atLeastOne = {
  valid: [1, 1000000],
  invalid: [
    [0, 'must be at least 1'],
    [-1, 'must be at least 1'],
  ],
} satisfies Pick<Bound, 'valid' | 'invalid'>;
const zeroOrOne = {
  valid: [0, 1],
  invalid: [
    [-1, 'must be at least 0'],
    [2, 'must be at most 1'],
  ],
} satisfies Pick<Bound, 'valid' | 'invalid'>;

const BOUNDS: Bound[] = [
  {
    key: 'colocation-config',
    at: '',
    wrap: top,
    fields: [
      'metricAggregateDurationSeconds',
      'metricReportIntervalSeconds',
      'degradeTimeMinutes',
      'updateTimeThresholdSeconds',
    ],
    ...atLeastOne,
  },
  {
    key: 'colocation-config',
    at: '',
    wrap: top,
    fields: [
      'cpuReclaimThresholdPercent',
      'memoryReclaimThresholdPercent',
      'batchCPUThresholdPercent',
      'batchMemoryThresholdPercent',
    ],
    // No upper bound: 101 is valid.
    valid: [0, 101, 1000],
    invalid: [[-1, 'must be at least 0']],
  },
  {
    key: 'colocation-config',
    at: '',
    wrap: top,
    fields: ['resourceDiffThreshold'],
    valid: [0.001, 0.5, 1],
    invalid: [
      [0, 'must be greater than 0'],
      [-0.1, 'must be greater than 0'],
      [1.01, 'must be at most 1'],
    ],
  },
  {
    key: 'colocation-config',
    at: '',
    wrap: top,
    fields: [
      'midCPUThresholdPercent',
      'midMemoryThresholdPercent',
      'midUnallocatedPercent',
      'midStaticCPUReservedPercent',
      'midStaticMemoryReservedPercent',
    ],
    ...percent,
  },
  {
    key: 'colocation-config',
    at: 'nodeConfigs[0].',
    wrap: (fields) => ({
      nodeConfigs: [{ name: 'n', nodeSelector: { matchLabels: { a: 'b' } }, ...fields }],
    }),
    fields: ['degradeTimeMinutes'],
    ...atLeastOne,
  },
  {
    key: 'resource-threshold-config',
    at: 'clusterStrategy.',
    wrap: cluster,
    fields: ['cpuSuppressThresholdPercent', 'cpuSuppressMinPercent', 'cpuEvictBEUsageThresholdPercent'],
    ...percent,
  },
  {
    key: 'resource-threshold-config',
    at: 'clusterStrategy.',
    wrap: cluster,
    fields: ['cpuEvictTimeWindowSeconds'],
    valid: [1, 3600],
    invalid: [
      [0, 'must be greater than 0'],
      [-1, 'must be greater than 0'],
    ],
  },
  {
    key: 'resource-threshold-config',
    at: 'clusterStrategy.',
    wrap: cluster,
    fields: ['allocatableEvictPriorityThreshold'],
    valid: [0, 5999, 7999],
    invalid: [
      [-1, 'must be at least 0'],
      [8000, 'must be at most 7999'],
    ],
  },
  {
    key: 'resource-qos-config',
    at: 'clusterStrategy.lsClass.cpuQOS.',
    wrap: qosClass('lsClass', 'cpuQOS'),
    fields: ['groupIdentity'],
    valid: [-1, 0, 2],
    invalid: [
      [-2, 'must be at least -1'],
      [3, 'must be at most 2'],
    ],
  },
  {
    key: 'resource-qos-config',
    at: 'clusterStrategy.beClass.cpuQOS.',
    wrap: qosClass('beClass', 'cpuQOS'),
    fields: ['schedIdle'],
    ...zeroOrOne,
  },
  {
    key: 'resource-qos-config',
    at: 'clusterStrategy.lsrClass.memoryQOS.',
    wrap: qosClass('lsrClass', 'memoryQOS'),
    fields: [
      'minLimitPercent',
      'lowLimitPercent',
      'throttlingPercent',
      'wmarkRatio',
      'pageCacheLimitPercent',
    ],
    ...percent,
  },
  {
    key: 'resource-qos-config',
    at: 'clusterStrategy.lsrClass.memoryQOS.',
    wrap: qosClass('lsrClass', 'memoryQOS'),
    fields: ['wmarkScalePermill'],
    valid: [1, 1000],
    invalid: [
      [0, 'must be at least 1'],
      [1001, 'must be at most 1000'],
    ],
  },
  {
    key: 'resource-qos-config',
    at: 'clusterStrategy.lsrClass.memoryQOS.',
    wrap: qosClass('lsrClass', 'memoryQOS'),
    fields: ['wmarkMinAdj'],
    valid: [-25, 0, 50],
    invalid: [
      [-26, 'must be at least -25'],
      [51, 'must be at most 50'],
    ],
  },
  {
    key: 'resource-qos-config',
    at: 'clusterStrategy.lsrClass.memoryQOS.',
    wrap: qosClass('lsrClass', 'memoryQOS'),
    fields: ['priorityEnable', 'oomKillGroup'],
    ...zeroOrOne,
  },
  {
    key: 'resource-qos-config',
    at: 'clusterStrategy.lsrClass.memoryQOS.',
    wrap: qosClass('lsrClass', 'memoryQOS'),
    fields: ['priority'],
    valid: [0, 12],
    invalid: [
      [-1, 'must be at least 0'],
      [13, 'must be at most 12'],
    ],
  },
  {
    key: 'resource-qos-config',
    at: 'clusterStrategy.beClass.resctrlQOS.',
    wrap: qosClass('beClass', 'resctrlQOS'),
    fields: ['mbaPercent'],
    ...percent,
  },
  {
    key: 'cpu-burst-config',
    at: 'clusterStrategy.',
    wrap: cluster,
    fields: ['cpuBurstPercent'],
    valid: [1, 10000],
    invalid: [
      [0, 'must be at least 1'],
      [10001, 'must be at most 10000'],
    ],
  },
  {
    key: 'cpu-burst-config',
    at: 'clusterStrategy.',
    wrap: cluster,
    fields: ['cfsQuotaBurstPercent'],
    valid: [100, 300],
    invalid: [[99, 'must be at least 100']],
  },
  {
    key: 'cpu-burst-config',
    at: 'clusterStrategy.',
    wrap: cluster,
    fields: ['cfsQuotaBurstPeriodSeconds'],
    valid: [-1, 0, 60],
    invalid: [[-2, 'must be at least -1']],
  },
  {
    key: 'cpu-burst-config',
    at: 'clusterStrategy.',
    wrap: cluster,
    fields: ['sharePoolThresholdPercent'],
    ...percent,
  },
  {
    key: 'system-config',
    at: 'clusterStrategy.',
    wrap: cluster,
    fields: ['minFreeKbytesFactor'],
    valid: [1, 100],
    invalid: [
      [0, 'must be greater than 0'],
      [-1, 'must be greater than 0'],
    ],
  },
  {
    key: 'system-config',
    at: 'clusterStrategy.',
    wrap: cluster,
    fields: ['watermarkScaleFactor'],
    valid: [1, 400],
    invalid: [
      [0, 'must be greater than 0'],
      [401, 'must be at most 400'],
    ],
  },
  {
    key: 'system-config',
    at: 'clusterStrategy.',
    wrap: cluster,
    fields: ['memcgReapBackGround', 'pageCacheLimitEnabled'],
    ...zeroOrOne,
  },
];

describe('validator bounds', () => {
  for (const bound of BOUNDS) {
    for (const field of bound.fields) {
      it(`data[${bound.key}] ${bound.at}${field}: accepts ${bound.valid.join(', ')}; refuses ${bound.invalid.map(([value]) => value).join(', ')}`, () => {
        for (const value of bound.valid) {
          assert.deepEqual(problems(bound.key, bound.wrap({ [field]: value })), [], `${field}=${value}`);
        }
        for (const [value, message] of bound.invalid) {
          assert.deepEqual(problems(bound.key, bound.wrap({ [field]: value })), [
            `data[${bound.key}]: ${bound.at}${field}: Invalid value: ${value}: ${message}`,
          ]);
        }
      });
    }
  }

  it('skips absent and null fields (omitempty) but checks an explicit 0', () => {
    assert.deepEqual(problems('cpu-burst-config', cluster({ cpuBurstPercent: null })), []);
    assert.deepEqual(problems('cpu-burst-config', cluster({})), []);
    assert.deepEqual(problems('cpu-burst-config', cluster({ cpuBurstPercent: 0 })), [
      'data[cpu-burst-config]: clusterStrategy.cpuBurstPercent: Invalid value: 0: must be at least 1',
    ]);
  });

  it('checks every QoS class, the system class and the root cgroup included', () => {
    for (const className of ['lsrClass', 'lsClass', 'beClass', 'systemClass', 'cgroupRoot']) {
      assert.deepEqual(problems('resource-qos-config', qosClass(className, 'memoryQOS')({ priority: 13 })), [
        `data[resource-qos-config]: clusterStrategy.${className}.memoryQOS.priority: Invalid value: 13: must be at most 12`,
      ]);
    }
  });

  it('checks node strategies as well as the cluster strategy', () => {
    assert.deepEqual(
      problems('resource-threshold-config', {
        nodeStrategies: [
          { name: 'n', nodeSelector: { matchLabels: { a: 'b' } }, memoryEvictThresholdPercent: 120 },
        ],
      }),
      [
        'data[resource-threshold-config]: nodeStrategies[0].memoryEvictThresholdPercent: Invalid value: 120: must be at most 100',
      ],
    );
    assert.deepEqual(
      problems('resource-qos-config', {
        nodeStrategies: [
          { name: 'n', nodeSelector: { matchLabels: { a: 'b' } }, beClass: { cpuQOS: { groupIdentity: 5 } } },
        ],
      }),
      [
        'data[resource-qos-config]: nodeStrategies[0].beClass.cpuQOS.groupIdentity: Invalid value: 5: must be at most 2',
      ],
    );
  });

  it('does not bound what Koordinator does not: enum strings and blkio settings', () => {
    assert.deepEqual(
      problems('resource-threshold-config', cluster({ cpuSuppressPolicy: 'nonsense', cpuEvictPolicy: 'x' })),
      [],
    );
    assert.deepEqual(
      problems('resource-qos-config', {
        clusterStrategy: {
          policies: { cpuPolicy: 'x', netQOSPolicy: 'y' },
          beClass: {
            blkioQOS: { blocks: [{ name: 'sda', type: 'device', ioCfg: { ioWeightPercent: 500 } }] },
          },
        },
      }),
      [],
    );
  });

  it('still checks the types of fields without bounds', () => {
    assert.deepEqual(
      problems('resource-qos-config', {
        clusterStrategy: { beClass: { blkioQOS: { blocks: [{ ioCfg: { readIOPS: '100' } }] } } },
      }),
      [
        'data[resource-qos-config]: clusterStrategy.beClass.blkioQOS.blocks[0].ioCfg.readIOPS: Invalid value: "100": must be an integer (int64)',
      ],
    );
  });
});

interface Pair {
  key: string;
  at: string;
  wrap: Wrap;
  upper: string;
  lower: string;
  max?: number;
}

const PAIRS: Pair[] = [
  {
    key: 'resource-threshold-config',
    at: 'clusterStrategy.',
    wrap: cluster,
    upper: 'memoryEvictThresholdPercent',
    lower: 'memoryEvictLowerPercent',
    max: 100,
  },
  {
    key: 'resource-threshold-config',
    at: 'clusterStrategy.',
    wrap: cluster,
    upper: 'memoryAllocatableEvictThresholdPercent',
    lower: 'memoryAllocatableEvictLowerPercent',
  },
  {
    key: 'resource-threshold-config',
    at: 'clusterStrategy.',
    wrap: cluster,
    upper: 'cpuEvictBESatisfactionUpperPercent',
    lower: 'cpuEvictBESatisfactionLowerPercent',
    max: 100,
  },
  {
    key: 'resource-threshold-config',
    at: 'clusterStrategy.',
    wrap: cluster,
    upper: 'cpuEvictThresholdPercent',
    lower: 'cpuEvictLowerPercent',
    max: 100,
  },
  {
    key: 'resource-threshold-config',
    at: 'clusterStrategy.',
    wrap: cluster,
    upper: 'cpuAllocatableEvictThresholdPercent',
    lower: 'cpuAllocatableEvictLowerPercent',
  },
  {
    key: 'resource-qos-config',
    at: 'clusterStrategy.lsClass.resctrlQOS.',
    wrap: qosClass('lsClass', 'resctrlQOS'),
    upper: 'catRangeEndPercent',
    lower: 'catRangeStartPercent',
    max: 100,
  },
];

describe('gtfield / ltfield pairs', () => {
  for (const { key, at, wrap, upper, lower, max } of PAIRS) {
    const check = (fields: Record<string, unknown>): string[] => problems(key, wrap(fields));
    const prefix = `data[${key}]: ${at}`;

    it(`${upper} > ${lower}: accepts neither set, or a strict order`, () => {
      assert.deepEqual(check({}), []);
      assert.deepEqual(check({ [upper]: 1, [lower]: 0 }), []);
      assert.deepEqual(check({ [upper]: max ?? 150, [lower]: (max ?? 150) - 1 }), []);
    });

    it(`${upper} > ${lower}: refuses either one without the other`, () => {
      assert.deepEqual(check({ [upper]: 70 }), [
        `${prefix}${upper}: Invalid value: 70: must be greater than ${lower}, which must then be set too`,
      ]);
      assert.deepEqual(check({ [lower]: 60 }), [
        `${prefix}${lower}: Invalid value: 60: must be less than ${upper}, which must then be set too`,
      ]);
    });

    it(`${upper} > ${lower}: refuses equal or inverted values, naming the other value`, () => {
      // Both fields fail, each in the order its struct declares it.
      const sorted = (fields: Record<string, unknown>): string[] => check(fields).sort();
      assert.deepEqual(
        sorted({ [upper]: 70, [lower]: 70 }),
        [
          `${prefix}${lower}: Invalid value: 70: must be less than ${upper} (70)`,
          `${prefix}${upper}: Invalid value: 70: must be greater than ${lower} (70)`,
        ].sort(),
      );
      assert.deepEqual(
        sorted({ [upper]: 70, [lower]: 80 }),
        [
          `${prefix}${lower}: Invalid value: 80: must be less than ${upper} (70)`,
          `${prefix}${upper}: Invalid value: 70: must be greater than ${lower} (80)`,
        ].sort(),
      );
    });

    it(`${upper} > ${lower}: ${max === undefined ? 'have no upper bound, and ' : ''}refuse negatives`, () => {
      if (max === undefined) assert.deepEqual(check({ [upper]: 500, [lower]: 400 }), []);
      else {
        assert.deepEqual(check({ [upper]: max + 1, [lower]: 50 }), [
          `${prefix}${upper}: Invalid value: ${max + 1}: must be at most ${max}`,
        ]);
      }
      assert.deepEqual(check({ [upper]: 10, [lower]: -1 }), [
        `${prefix}${lower}: Invalid value: -1: must be at least 0`,
      ]);
    });
  }
});
