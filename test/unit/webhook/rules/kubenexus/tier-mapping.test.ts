import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  DEFAULT_TIER_MAPPING,
  readTierMapping,
} from '../../../../../webhook/rules/kubenexus/tier-mapping.js';

const parse = (yaml: string, extra: Record<string, string> = {}): ReturnType<typeof readTierMapping> =>
  readTierMapping({ 'mapping.yaml': yaml, ...extra });

function errorsOf(yaml: string, extra: Record<string, string> = {}): string[] {
  const result = parse(yaml, extra);
  assert.equal(result.ok, false, 'expected the mapping to be refused');
  return result.ok ? [] : result.error.map(String);
}

describe('tier mapping', () => {
  it('ships KubeNexus’s table as the default', () => {
    assert.deepEqual(Object.fromEntries(DEFAULT_TIER_MAPPING.tiers), {
      gold: ['h100'],
      silver: ['a100'],
      bronze: ['l4'],
    });
    assert.equal(DEFAULT_TIER_MAPPING.namespaceLabelKey, 'tenant.kubenexus.io/tier');
    assert.equal(DEFAULT_TIER_MAPPING.nodeLabelKey, 'gpu.nvidia.com/class');
    assert.deepEqual(DEFAULT_TIER_MAPPING.gpuResources, ['nvidia.com/gpu', 'amd.com/gpu', 'intel.com/gpu']);
  });

  it('reads a full mapping, folding tier names to lower case', () => {
    const result = parse(
      [
        'namespaceLabelKey: example.com/tier',
        'nodeLabelKey: example.com/gpu',
        'gpuResources: [nvidia.com/gpu]',
        'tiers:',
        '  Gold: [h100, a100]',
        '  bronze: l4',
        'workloadTypeLabel: example.com/workload',
        'workloadOverrides:',
        '  GOLD:',
        '    inference: [a100]',
      ].join('\n'),
    );
    assert.ok(result.ok);
    assert.equal(result.value.namespaceLabelKey, 'example.com/tier');
    assert.equal(result.value.nodeLabelKey, 'example.com/gpu');
    assert.deepEqual(result.value.gpuResources, ['nvidia.com/gpu']);
    assert.deepEqual(Object.fromEntries(result.value.tiers), { gold: ['h100', 'a100'], bronze: ['l4'] });
    assert.deepEqual(result.value.workloadOverrides.get('gold')?.get('inference'), ['a100']);
  });

  it('defaults every key but tiers', () => {
    const result = parse('tiers:\n  gold: h100\n');
    assert.ok(result.ok);
    assert.equal(result.value.nodeLabelKey, 'gpu.nvidia.com/class');
    assert.deepEqual(result.value.gpuResources, DEFAULT_TIER_MAPPING.gpuResources);
  });

  const invalid: [string, string, Record<string, string>, RegExp][] = [
    ['an unknown key', 'tiers: {gold: h100}\ncolour: red', {}, /^data\[mapping\.yaml\]\.colour: unknown key/],
    [
      'an unknown data key',
      'tiers: {gold: h100}',
      { 'other.yaml': 'x' },
      /^data\[other\.yaml\]: unknown key/,
    ],
    [
      'a tier with no class',
      'tiers:\n  gold: []',
      {},
      /^data\[mapping\.yaml\]\.tiers\.gold: needs at least one GPU class/,
    ],
    [
      'a tier with a null class',
      'tiers:\n  gold:',
      {},
      /^data\[mapping\.yaml\]\.tiers\.gold: needs at least one GPU class/,
    ],
    [
      'a class that is not a label value',
      'tiers:\n  gold: [h100, "not ok!"]',
      {},
      /^data\[mapping\.yaml\]\.tiers\.gold\[1\]: "not ok!" is not a valid label value/,
    ],
    [
      'an invalid label key',
      'namespaceLabelKey: "Bad_Prefix/tier"\ntiers: {gold: h100}',
      {},
      /^data\[mapping\.yaml\]\.namespaceLabelKey: "Bad_Prefix\/tier" is not a valid label key/,
    ],
    [
      'tiers that collide case-insensitively',
      'tiers:\n  gold: h100\n  GOLD: a100',
      {},
      /^data\[mapping\.yaml\]\.tiers\.GOLD: collides with tier "gold"/,
    ],
    [
      'an override for an unknown tier',
      'tiers: {gold: h100}\nworkloadOverrides:\n  platinum:\n    inference: h100',
      {},
      /^data\[mapping\.yaml\]\.workloadOverrides\.platinum: no such tier; known tiers: gold/,
    ],
    ['no tiers', 'nodeLabelKey: a/b', {}, /^data\[mapping\.yaml\]\.tiers: Required value/],
    ['YAML that does not parse', 'tiers: [unclosed', {}, /^data\[mapping\.yaml\]: not valid YAML/],
    ['a YAML scalar', 'just text', {}, /^data\[mapping\.yaml\]: must be a YAML mapping/],
    [
      'an empty GPU resource list',
      'gpuResources: []\ntiers: {gold: h100}',
      {},
      /gpuResources: must be a non-empty list/,
    ],
    [
      'an invalid GPU resource name',
      'gpuResources: ["nvidia.com/gpu/x"]\ntiers: {gold: h100}',
      {},
      /gpuResources\[0\]: "nvidia\.com\/gpu\/x" is not a valid resource name/,
    ],
  ];
  for (const [label, yaml, extra, message] of invalid) {
    it(`refuses ${label}, naming the path`, () => {
      const errors = errorsOf(yaml, extra);
      assert.ok(
        errors.some((error) => message.test(error)),
        `no error matched ${String(message)}: ${JSON.stringify(errors)}`,
      );
    });
  }

  it('refuses a ConfigMap without the mapping key', () => {
    const read = readTierMapping({});
    assert.deepEqual(read.ok ? read : { ok: false, error: read.error.map(String) }, {
      ok: false,
      error: ['data[mapping.yaml]: Required value: the mapping is missing'],
    });
  });

  // At 60 KiB each of these overflowed the YAML parser's stack, or (`- - - …`) exhausted the heap and killed
  // the process; within the length bound they are still refused before the parser sees them.
  for (const [label, yaml] of [
    ['[[[[…', '['.repeat(5_000)],
    ['{a: {a: …', '{a: '.repeat(1_500)],
    ['- - - - …', `${'- '.repeat(3_000)}x`],
    ['ever deeper indentation', Array.from({ length: 100 }, (_, i) => `${' '.repeat(i)}a:`).join('\n')],
  ] as const) {
    it(`refuses YAML nested as ${label} before parsing it`, () => {
      assert.deepEqual(errorsOf(yaml), ['data[mapping.yaml]: nested deeper than 64 levels']);
    });
  }

  it('refuses a mapping longer than 8 KiB before parsing it', () => {
    assert.deepEqual(errorsOf(`tiers:\n  gold: h100\n#${'x'.repeat(9_000)}`), [
      'data[mapping.yaml]: longer than 8192 characters (9021)',
    ]);
  });

  it('refuses an alias bomb instead of expanding it', () => {
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x]',
      'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]',
      'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]',
      'tiers: [*c, *c, *c, *c, *c, *c, *c, *c, *c]',
    ].join('\n');
    assert.deepEqual(errorsOf(bomb), ['data[mapping.yaml]: expands more than 100 YAML aliases']);
  });

  it('refuses a list or map used as a key, naming where, without a warning from the YAML library', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning);
    };
    process.on('warning', onWarning);
    try {
      assert.deepEqual(errorsOf('? [gold, silver]\n: h100\ntiers:\n  gold: h100\n'), [
        'data[mapping.yaml]: line 1: a key must be a plain value, not a list or map: "[gold, silver]"',
      ]);
      assert.deepEqual(errorsOf('tiers:\n  gold: h100\n  ? {x: 1}\n  : a100\n'), [
        'data[mapping.yaml].tiers: line 3: a key must be a plain value, not a list or map: "{x: 1}"',
      ]);
      assert.deepEqual(
        errorsOf('tiers:\n  gold: &list [h100]\nworkloadOverrides:\n  gold:\n    *list : a100\n'),
        [
          'data[mapping.yaml].workloadOverrides.gold: line 5: a key must be a plain value, not a list or map: "*list"',
        ],
      );
      // Node emits process warnings on the next tick.
      await new Promise((resolveTick) => setImmediate(resolveTick));
    } finally {
      process.off('warning', onWarning);
    }
    assert.deepEqual(warnings, []);
  });

  it('still reads flow style and comments that mention brackets', () => {
    const result = parse('tiers: {gold: [a100, h100], silver: "l4"}  # [[[[ not nesting\n');
    assert.ok(result.ok, JSON.stringify(result));
  });
});
