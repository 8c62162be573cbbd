/** resource-qos-config's network QoS checks, against system-config's bandwidth, through /validate-configmap. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sloConfigProblemTexts } from '../../../../../harness/slo-config.js';

const QOS = 'resource-qos-config';
const SYSTEM = 'system-config';

type Net = Partial<
  Record<'ingressRequest' | 'ingressLimit' | 'egressRequest' | 'egressLimit', number | string>
>;

function strategy(classes: Partial<Record<string, Net>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(classes).map(([name, networkQOS]) => [name, { networkQOS }]));
}

function problems(qos: unknown, system?: unknown, oldData: Record<string, string> | null = null): string[] {
  const data: Record<string, string> = { [QOS]: JSON.stringify(qos) };
  if (system !== undefined) data[SYSTEM] = typeof system === 'string' ? system : JSON.stringify(system);
  return sloConfigProblemTexts(data, oldData, []);
}

const totalOf = (total: string): unknown => ({ clusterStrategy: { totalNetworkBandwidth: total } });

describe('network QoS values', () => {
  it('accepts percentages from 0 to 100 and quantity strings in every field', () => {
    const net: Net = { ingressRequest: 0, ingressLimit: 100, egressRequest: 10, egressLimit: 100 };
    assert.deepEqual(problems({ clusterStrategy: strategy({ lsClass: net }) }, {}), []);
    const quantities: Net = {
      ingressRequest: '50m',
      ingressLimit: '500M',
      egressRequest: '1Gi',
      egressLimit: '1e3',
    };
    assert.deepEqual(problems({ clusterStrategy: strategy({ beClass: quantities }) }, {}), []);
  });

  it('refuses a percentage out of range and a string that is not a quantity, naming each', () => {
    assert.deepEqual(
      problems({
        clusterStrategy: strategy({
          lsrClass: { ingressRequest: 101, egressLimit: -1 },
          lsClass: { ingressLimit: '' },
          beClass: { ingressLimit: '50a', egressLimit: ' 50M' },
        }),
      }),
      [
        'data[resource-qos-config]: clusterStrategy.lsrClass.networkQOS.ingressRequest: Invalid value: 101: must be a percentage from 0 to 100, or a quantity string such as "50M"',
        'data[resource-qos-config]: clusterStrategy.lsrClass.networkQOS.egressLimit: Invalid value: -1: must be a percentage from 0 to 100, or a quantity string such as "50M"',
        'data[resource-qos-config]: clusterStrategy.lsClass.networkQOS.ingressLimit: Invalid value: "": must be a quantity such as "50M", or an integer percentage from 0 to 100',
        'data[resource-qos-config]: clusterStrategy.beClass.networkQOS.ingressLimit: Invalid value: "50a": must be a quantity such as "50M", or an integer percentage from 0 to 100',
        'data[resource-qos-config]: clusterStrategy.beClass.networkQOS.egressLimit: Invalid value: " 50M": must be a quantity such as "50M", or an integer percentage from 0 to 100',
      ],
    );
  });

  it('refuses a fractional percentage as Go does (IntOrString holds an int32)', () => {
    assert.deepEqual(problems({ clusterStrategy: strategy({ lsClass: { ingressRequest: 10.5 } }) }), [
      'data[resource-qos-config]: clusterStrategy.lsClass.networkQOS.ingressRequest: Invalid value: 10.5: must be an integer (int32)',
    ]);
  });

  it('does not examine systemClass or cgroupRoot, as Koordinator does not', () => {
    assert.deepEqual(
      problems({
        clusterStrategy: strategy({
          systemClass: { ingressRequest: 500 },
          cgroupRoot: { egressRequest: 'x' },
        }),
      }),
      [],
    );
  });

  it('checks node strategies too, by index', () => {
    assert.deepEqual(
      problems({
        nodeStrategies: [
          {
            name: 'a',
            nodeSelector: { matchLabels: { a: 'b' } },
            ...strategy({ lsClass: { ingressRequest: 200 } }),
          },
        ],
      }),
      [
        'data[resource-qos-config]: nodeStrategies[0].lsClass.networkQOS.ingressRequest: Invalid value: 200: must be a percentage from 0 to 100, or a quantity string such as "50M"',
      ],
    );
  });
});

describe('one format per strategy', () => {
  it('refuses requests mixing percentages and quantities', () => {
    const mixed =
      'Forbidden: the network QoS requests of lsrClass, lsClass and beClass mix integer percentages and quantity strings; use one format per strategy';
    assert.deepEqual(
      problems({
        clusterStrategy: strategy({ lsClass: { ingressRequest: 10 }, beClass: { egressRequest: '10M' } }),
      }),
      [`data[resource-qos-config]: clusterStrategy: ${mixed}`],
    );
    assert.deepEqual(
      problems({
        nodeStrategies: [
          {
            name: 'a',
            nodeSelector: { matchLabels: { a: 'b' } },
            ...strategy({ lsClass: { ingressRequest: 10, egressRequest: '1M' } }),
          },
        ],
      }),
      [`data[resource-qos-config]: nodeStrategies[0]: ${mixed}`],
    );
  });

  it('lets limits differ in format from requests, as Koordinator examines requests only', () => {
    assert.deepEqual(
      problems({ clusterStrategy: strategy({ lsClass: { ingressRequest: 10, ingressLimit: '100M' } }) }),
      [],
    );
  });

  it('judges each strategy on its own', () => {
    assert.deepEqual(
      problems({
        clusterStrategy: strategy({ lsClass: { ingressRequest: 10 } }),
        nodeStrategies: [
          {
            name: 'a',
            nodeSelector: { matchLabels: { a: 'b' } },
            ...strategy({ lsClass: { ingressRequest: '10M' } }),
          },
        ],
      }),
      [],
    );
  });
});

describe('percentage totals', () => {
  it('allows requests adding up to exactly 100, per direction', () => {
    const classes = strategy({
      lsrClass: { ingressRequest: 50, egressRequest: 100 },
      lsClass: { ingressRequest: 30 },
      beClass: { ingressRequest: 20 },
    });
    assert.deepEqual(problems({ clusterStrategy: classes }), []);
  });

  it('refuses more than 100, naming the direction and the sum', () => {
    assert.deepEqual(
      problems({
        clusterStrategy: strategy({
          lsrClass: { ingressRequest: 50, egressRequest: 60 },
          lsClass: { ingressRequest: 51, egressRequest: 60 },
          beClass: { ingressLimit: 100 },
        }),
      }),
      [
        'data[resource-qos-config]: clusterStrategy: Invalid value: 101: the ingressRequest percentages of lsrClass, lsClass and beClass must add up to at most 100',
        'data[resource-qos-config]: clusterStrategy: Invalid value: 120: the egressRequest percentages of lsrClass, lsClass and beClass must add up to at most 100',
      ],
    );
  });

  it('does not count quantities as percentages (Koordinator refuses "500M" here; that quirk is not kept)', () => {
    assert.deepEqual(
      problems({ clusterStrategy: strategy({ lsClass: { ingressRequest: '500M' } }) }, {}),
      [],
    );
  });
});

describe('quantity totals against system-config', () => {
  it('allows quantity requests up to the cluster totalNetworkBandwidth', () => {
    const classes = strategy({ lsClass: { ingressRequest: '60M' }, beClass: { ingressRequest: '40M' } });
    assert.deepEqual(problems({ clusterStrategy: classes }, totalOf('100M')), []);
  });

  it('refuses quantity requests over it, naming the sum and the total', () => {
    const classes = strategy({ lsClass: { ingressRequest: '60M' }, beClass: { ingressRequest: '50M' } });
    assert.deepEqual(problems({ clusterStrategy: classes }, totalOf('100M')), [
      'data[resource-qos-config]: clusterStrategy: Invalid value: 110M: the ingressRequest quantities of lsrClass, lsClass and beClass must add up to at most the totalNetworkBandwidth 100M of data[system-config] clusterStrategy',
    ]);
  });

  it('does not subtract percentages from the byte total (a Koordinator quirk not kept)', () => {
    const classes = strategy({ lsClass: { ingressRequest: 60 }, beClass: { ingressRequest: 40 } });
    assert.deepEqual(problems({ clusterStrategy: classes }, totalOf('50')), []);
  });

  it('skips the check when no total is known (koordlet then reads the NIC speed)', () => {
    const classes = strategy({ lsClass: { ingressRequest: '10G' } });
    assert.deepEqual(problems({ clusterStrategy: classes }, {}), []);
    assert.deepEqual(problems({ clusterStrategy: classes }, totalOf('0')), []);
    assert.deepEqual(problems({ clusterStrategy: classes }), []);
  });

  it('uses the system node strategy with the same selector, whatever the label order', () => {
    const nodeSelector = { matchLabels: { pool: 'a', zone: 'z' } };
    const qos = {
      nodeStrategies: [{ name: 'a', nodeSelector, ...strategy({ lsClass: { egressRequest: '200M' } }) }],
    };
    const system = (total: string): unknown => ({
      clusterStrategy: { totalNetworkBandwidth: '1G' },
      nodeStrategies: [
        { name: 'other', nodeSelector: { matchLabels: { pool: 'b' } }, totalNetworkBandwidth: '10M' },
        {
          name: 'same',
          nodeSelector: { matchLabels: { zone: 'z', pool: 'a' } },
          totalNetworkBandwidth: total,
        },
      ],
    });
    assert.deepEqual(problems(qos, system('200M')), []);
    assert.deepEqual(problems(qos, system('100M')), [
      'data[resource-qos-config]: nodeStrategies[0]: Invalid value: 200M: the egressRequest quantities of lsrClass, lsClass and beClass must add up to at most the totalNetworkBandwidth 100M of data[system-config] nodeStrategies[1]',
    ]);
  });

  it('falls back to the cluster total for a node strategy no system node strategy matches', () => {
    const qos = {
      nodeStrategies: [
        {
          name: 'a',
          nodeSelector: { matchLabels: { pool: 'a' } },
          ...strategy({ lsClass: { ingressRequest: '2G' } }),
        },
      ],
    };
    const system = {
      clusterStrategy: { totalNetworkBandwidth: '1G' },
      nodeStrategies: [
        { name: 'b', nodeSelector: { matchLabels: { pool: 'b' } }, totalNetworkBandwidth: '10G' },
      ],
    };
    assert.deepEqual(problems(qos, system), [
      'data[resource-qos-config]: nodeStrategies[0]: Invalid value: 2G: the ingressRequest quantities of lsrClass, lsClass and beClass must add up to at most the totalNetworkBandwidth 1G of data[system-config] clusterStrategy',
    ]);
  });

  it('adds no totals once a value is invalid', () => {
    const classes = strategy({ lsClass: { ingressRequest: '2G' }, beClass: { ingressRequest: 'bad' } });
    assert.deepEqual(problems({ clusterStrategy: classes }, totalOf('1G')).length, 1);
  });
});

describe('system-config alongside resource-qos-config', () => {
  const valid = { clusterStrategy: strategy({ lsClass: { ingressRequest: 10 } }) };

  it('does not require a system-config (Koordinator does, only because "" is not JSON)', () => {
    assert.deepEqual(problems(valid), []);
    assert.deepEqual(problems(valid, ''), []);
  });

  it('refuses a resource-qos change while an unchanged system-config is invalid, naming it', () => {
    const oldData = { [QOS]: '{}', [SYSTEM]: '{"clusterStrategy": 1}' };
    assert.deepEqual(problems(valid, '{"clusterStrategy": 1}', oldData), [
      'data[resource-qos-config]: the network QoS settings are checked against data[system-config], which must be valid: data[system-config]: clusterStrategy: Invalid value: 1: must be an object',
    ]);
    assert.deepEqual(problems(valid, '{', { [QOS]: '{}', [SYSTEM]: '{' }), [
      'data[resource-qos-config]: the network QoS settings are checked against data[system-config], which must be valid: data[system-config]: not valid JSON: unexpected end of JSON input',
    ]);
  });

  it('lets a system-config changed in the same request report its own problems once', () => {
    assert.deepEqual(problems(valid, '{"clusterStrategy": 1}'), [
      'data[system-config]: clusterStrategy: Invalid value: 1: must be an object',
    ]);
  });

  it('does not hold resource-qos to system-config bounds, only to its parse', () => {
    const system = JSON.stringify({ clusterStrategy: { watermarkScaleFactor: 999 } });
    assert.deepEqual(problems(valid, system, { [QOS]: '{}', [SYSTEM]: system }), []);
  });
});
