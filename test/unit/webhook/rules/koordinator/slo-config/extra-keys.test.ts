/**
 * The three keys Koordinator's webhook leaves unchecked: host-application-config,
 * cpu-normalization-config and resource-amplification-config.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sloConfigProblemTexts } from '../../../../../harness/slo-config.js';

function problems(key: string, config: unknown, maxAmplificationRatio?: number): string[] {
  return sloConfigProblemTexts(
    { [key]: JSON.stringify(config) },
    null,
    [],
    maxAmplificationRatio === undefined ? {} : { maxAmplificationRatio },
  );
}

const selector = (pool: string): unknown => ({ matchLabels: { pool } });

describe('host-application-config', () => {
  const KEY = 'host-application-config';

  it('accepts the user manual example', () => {
    const example = {
      applications: [
        {
          name: 'nginx',
          qos: 'LS',
          cgroupPath: { base: 'CgroupRoot', parentDir: 'host-latency-sensitive/', relativePath: 'nginx/' },
        },
      ],
    };
    assert.deepEqual(problems(KEY, example), []);
  });

  it('accepts every known QoS class, priority class and cgroup base', () => {
    const applications = ['LSE', 'LSR', 'LS', 'BE', 'SYSTEM'].map((qos, index) => ({
      name: `app${index}`,
      qos,
      priority: ['koord-prod', 'koord-mid', 'koord-batch', 'koord-free', 'koord-prod'][index],
      cgroupPath: {
        base: ['CgroupRoot', 'Kubepods', 'KubepodsBurstable', 'KubepodsBesteffort', 'CgroupRoot'][index],
      },
    }));
    assert.deepEqual(problems(KEY, { applications }), []);
  });

  it('refuses unknown values, which koordlet would silently treat as none', () => {
    assert.deepEqual(
      problems(KEY, {
        applications: [{ name: 'a', qos: 'ls', priority: 'prod', cgroupPath: { base: 'Root' } }],
      }),
      [
        'data[host-application-config]: applications[0].priority: Invalid value: "prod": must be one of koord-prod, koord-mid, koord-batch, koord-free',
        'data[host-application-config]: applications[0].qos: Invalid value: "ls": must be one of LSE, LSR, LS, BE, SYSTEM',
        'data[host-application-config]: applications[0].cgroupPath.base: Invalid value: "Root": must be one of CgroupRoot, Kubepods, KubepodsBurstable, KubepodsBesteffort',
      ],
    );
  });

  it('needs a name, unique within each list', () => {
    assert.deepEqual(
      problems(KEY, {
        applications: [{ name: 'a' }, { name: 'a' }, { qos: 'BE' }, null],
        nodeConfigs: [
          { name: 'n', nodeSelector: selector('x'), applications: [{ name: 'a' }, { name: 'a' }] },
        ],
      }),
      [
        'data[host-application-config]: applications[1].name: Invalid value: "a": must be unique within applications',
        "data[host-application-config]: applications[2].name: Required value: koordlet names the application's cgroup and metrics after it",
        "data[host-application-config]: applications[3].name: Required value: koordlet names the application's cgroup and metrics after it",
        'data[host-application-config]: nodeConfigs[0].applications[1].name: Invalid value: "a": must be unique within applications',
      ],
    );
  });

  it("refuses a '..' path segment, which would leave the cgroup base", () => {
    assert.deepEqual(
      problems(KEY, {
        applications: [
          { name: '../etc', cgroupPath: { parentDir: 'a/../../b', relativePath: '..' } },
          { name: 'ok..name', cgroupPath: { parentDir: '/abs/dir/', relativePath: 'x..y' } },
        ],
      }),
      [
        'data[host-application-config]: applications[0].name: Invalid value: "../etc": must not contain a \'..\' segment (it would leave the cgroup base)',
        'data[host-application-config]: applications[0].cgroupPath.parentDir: Invalid value: "a/../../b": must not contain a \'..\' segment (it would leave the cgroup base)',
        'data[host-application-config]: applications[0].cgroupPath.relativePath: Invalid value: "..": must not contain a \'..\' segment (it would leave the cgroup base)',
      ],
    );
  });

  it('checks types as the slo-controller decodes them', () => {
    assert.deepEqual(problems(KEY, { applications: [{ name: 1, strategy: [] }] }), [
      'data[host-application-config]: applications[0].name: Invalid value: 1: must be a string',
      'data[host-application-config]: applications[0].strategy: Invalid value: []: must be an object',
    ]);
    assert.deepEqual(problems(KEY, { applications: {} }), [
      'data[host-application-config]: applications: Invalid value: {}: must be a list',
    ]);
  });
});

describe('cpu-normalization-config', () => {
  const KEY = 'cpu-normalization-config';
  const RATIOS = [
    'baseRatio',
    'hyperThreadEnabledRatio',
    'turboEnabledRatio',
    'hyperThreadTurboEnabledRatio',
  ];

  it('accepts ratios from 1 to 5 (the cpunormalization plugin’s defaultMinRatio and defaultMaxRatio)', () => {
    const model = Object.fromEntries(RATIOS.map((ratio, index) => [ratio, [1, 1.5, 4.99, 5][index]]));
    assert.deepEqual(
      problems(KEY, {
        enable: true,
        defaultRatio: 1,
        ratioModel: { 'Intel(R) Xeon(R) Platinum 8269CY': model },
      }),
      [],
    );
  });

  it('refuses each ratio below 1 or above 5, naming the CPU model', () => {
    for (const ratio of RATIOS) {
      assert.deepEqual(problems(KEY, { ratioModel: { m1: { [ratio]: 0.99 }, m2: { [ratio]: 5.01 } } }), [
        `data[cpu-normalization-config]: ratioModel[m1].${ratio}: Invalid value: 0.99: must be at least 1`,
        `data[cpu-normalization-config]: ratioModel[m2].${ratio}: Invalid value: 5.01: must be at most 5`,
      ]);
    }
  });

  it('bounds defaultRatio the same way, in node configs too', () => {
    assert.deepEqual(
      problems(KEY, {
        defaultRatio: 0,
        nodeConfigs: [
          { name: 'n', nodeSelector: selector('x'), defaultRatio: 6, ratioModel: { m: { baseRatio: 0.5 } } },
        ],
      }),
      [
        'data[cpu-normalization-config]: defaultRatio: Invalid value: 0: must be at least 1',
        'data[cpu-normalization-config]: nodeConfigs[0].defaultRatio: Invalid value: 6: must be at most 5',
        'data[cpu-normalization-config]: nodeConfigs[0].ratioModel[m].baseRatio: Invalid value: 0.5: must be at least 1',
      ],
    );
  });

  it('checks types', () => {
    assert.deepEqual(problems(KEY, { enable: 'true', ratioModel: { m: { baseRatio: '1.2' } } }), [
      'data[cpu-normalization-config]: enable: Invalid value: "true": must be a boolean',
      'data[cpu-normalization-config]: ratioModel[m].baseRatio: Invalid value: "1.2": must be a number',
    ]);
  });
});

describe('resource-amplification-config', () => {
  const KEY = 'resource-amplification-config';

  it('accepts ratios of at least 1 for resource names', () => {
    assert.deepEqual(
      problems(KEY, {
        enable: true,
        resourceAmplificationRatio: { cpu: 1, memory: 1.5, 'example.com/gpu': 2 },
      }),
      [],
    );
  });

  it('refuses a ratio below 1, which the resourceamplification plugin refuses', () => {
    assert.deepEqual(problems(KEY, { resourceAmplificationRatio: { cpu: 0.99, memory: 0 } }), [
      'data[resource-amplification-config]: resourceAmplificationRatio[cpu]: Invalid value: 0.99: must be at least 1',
      'data[resource-amplification-config]: resourceAmplificationRatio[memory]: Invalid value: 0: must be at least 1',
    ]);
  });

  it('reads a null ratio as Go does, as 0', () => {
    assert.deepEqual(problems(KEY, { resourceAmplificationRatio: { cpu: null } }), [
      'data[resource-amplification-config]: resourceAmplificationRatio[cpu]: Invalid value: 0: must be at least 1',
    ]);
  });

  it('applies --max-amplification-ratio when given, inclusively', () => {
    assert.deepEqual(problems(KEY, { resourceAmplificationRatio: { cpu: 10 } }, 10), []);
    assert.deepEqual(problems(KEY, { resourceAmplificationRatio: { cpu: 10.5 } }, 10), [
      'data[resource-amplification-config]: resourceAmplificationRatio[cpu]: Invalid value: 10.5: must be at most 10',
    ]);
    assert.deepEqual(problems(KEY, { resourceAmplificationRatio: { cpu: 1000 } }), []);
  });

  it('refuses a key that is not a resource name, in node configs too', () => {
    assert.deepEqual(
      problems(KEY, {
        nodeConfigs: [
          { name: 'n', nodeSelector: selector('x'), resourceAmplificationRatio: { 'CPU cores': 2 } },
        ],
      }),
      [
        "data[resource-amplification-config]: nodeConfigs[0].resourceAmplificationRatio[CPU cores]: Invalid value: \"CPU cores\": not a resource name: the name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
      ],
    );
  });

  it('checks types', () => {
    assert.deepEqual(problems(KEY, { resourceAmplificationRatio: { cpu: '2' } }), [
      'data[resource-amplification-config]: resourceAmplificationRatio[cpu]: Invalid value: "2": must be a number',
    ]);
  });
});

describe('node configs of the three keys', () => {
  for (const key of [
    'host-application-config',
    'cpu-normalization-config',
    'resource-amplification-config',
  ]) {
    it(`${key}: needs a non-empty nodeSelector in every nodeConfig`, () => {
      assert.deepEqual(problems(key, { nodeConfigs: [{ name: 'a' }, { name: 'b', nodeSelector: {} }] }), [
        `data[${key}]: nodeConfigs[0].nodeSelector: Required value: a node strategy needs a nodeSelector with matchLabels or matchExpressions`,
        `data[${key}]: nodeConfigs[1].nodeSelector: Required value: a node strategy needs a nodeSelector with matchLabels or matchExpressions`,
      ]);
    });

    it(`${key}: refuses overlapping nodeConfigs`, () => {
      assert.deepEqual(
        problems(key, {
          nodeConfigs: [
            { name: 'a', nodeSelector: selector('x') },
            {
              name: 'b',
              nodeSelector: { matchExpressions: [{ key: 'pool', operator: 'In', values: ['y', 'x'] }] },
            },
          ],
        }),
        [
          `data[${key}]: nodeConfigs [a b] overlap: a node labelled {pool=x} would match each of them; a node may match at most one (NodeStrategiesOverlap)`,
        ],
      );
    });
  }
});
