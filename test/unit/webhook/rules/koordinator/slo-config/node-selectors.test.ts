import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type FieldError, FieldPath } from '../../../../../../webhook/rules/shared/field-errors.js';
import { decodeJsonText } from '../../../../../../webhook/util/go-decode/entry-points.js';
import {
  LABEL_SELECTOR,
  type LabelSelectorJson,
  type NodeStrategy,
  type Overlap,
  labelsText,
  nodeStrategiesOf,
  searchOverlaps,
  strategiesMatching,
  strategyList,
  virtualNodes,
} from '../../../../../../webhook/rules/koordinator/slo-config/node-selectors.js';
import { mulberry32 } from '../../../../../fuzz/prng.js';

function selector(json: unknown): LabelSelectorJson {
  const decoded = decodeJsonText(JSON.stringify(json), LABEL_SELECTOR, FieldPath.root());
  assert.deepEqual(decoded.ok ? [] : decoded.error, []);
  assert.ok(decoded.ok && decoded.value);
  return decoded.value;
}

function strategies(entries: { name?: string; nodeSelector?: unknown }[]): {
  strategies: NodeStrategy[] | undefined;
  errors: string[];
} {
  const errors: FieldError[] = [];
  const result = nodeStrategiesOf(
    entries.map((entry) => ({
      ...(entry.name === undefined ? {} : { name: entry.name }),
      ...(entry.nodeSelector === undefined ? {} : { nodeSelector: selector(entry.nodeSelector) }),
    })),
    FieldPath.of('nodeStrategies'),
    errors,
  );
  return { strategies: result, errors: errors.map(String) };
}

function valid(entries: { name?: string; nodeSelector?: unknown }[]): NodeStrategy[] {
  const result = strategies(entries);
  assert.deepEqual(result.errors, []);
  assert.ok(result.strategies);
  return result.strategies;
}

/** Every virtual node of a selector, as plain label records. */
function virtualNodeLabels(source: LabelSelectorJson): Record<string, string>[] {
  const nodes = virtualNodes(source);
  return Array.from({ length: nodes.count }, (_, index) => Object.fromEntries(nodes.at(index)));
}

const overlapsOf = (all: readonly NodeStrategy[]): Overlap[] => searchOverlaps(all).overlaps;

function matches(nodeSelector: unknown, labels: Record<string, string>): boolean {
  return strategiesMatching(valid([{ name: 's', nodeSelector }]), labels).length === 1;
}

describe('node strategy selectors', () => {
  it('match as Kubernetes label selectors do', () => {
    assert.ok(matches({ matchLabels: { pool: 'a' } }, { pool: 'a', other: 'x' }));
    assert.ok(!matches({ matchLabels: { pool: 'a' } }, { pool: 'b' }));
    const expression = (operator: string, values?: string[]): unknown => ({
      matchExpressions: [{ key: 'pool', operator, ...(values ? { values } : {}) }],
    });
    assert.ok(matches(expression('In', ['a', 'b']), { pool: 'b' }));
    assert.ok(!matches(expression('In', ['a', 'b']), {}));
    assert.ok(matches(expression('NotIn', ['a']), { pool: 'b' }));
    assert.ok(matches(expression('NotIn', ['a']), {}), 'NotIn matches when the key is absent');
    assert.ok(!matches(expression('NotIn', ['a']), { pool: 'a' }));
    assert.ok(matches(expression('Exists'), { pool: '' }));
    assert.ok(!matches(expression('Exists'), {}));
    assert.ok(matches(expression('DoesNotExist'), {}));
    assert.ok(!matches(expression('DoesNotExist'), { pool: 'a' }));
  });

  it('AND matchLabels and every expression', () => {
    const nodeSelector = {
      matchLabels: { zone: 'z1' },
      matchExpressions: [{ key: 'pool', operator: 'In', values: ['a'] }],
    };
    assert.ok(matches(nodeSelector, { zone: 'z1', pool: 'a' }));
    assert.ok(!matches(nodeSelector, { zone: 'z1' }));
  });

  it('never read inherited properties as labels', () => {
    assert.ok(!matches({ matchExpressions: [{ key: 'constructor', operator: 'Exists' }] }, {}));
    assert.ok(matches({ matchExpressions: [{ key: 'toString', operator: 'DoesNotExist' }] }, {}));
  });

  it('are required and must not be empty', () => {
    const result = strategies([
      { name: 'a' },
      { name: 'b', nodeSelector: {} },
      { name: 'c', nodeSelector: { matchLabels: {}, matchExpressions: [] } },
    ]);
    assert.equal(result.strategies, undefined);
    const required =
      'Required value: a node strategy needs a nodeSelector with matchLabels or matchExpressions';
    assert.deepEqual(result.errors, [
      `nodeStrategies[0].nodeSelector: ${required}`,
      `nodeStrategies[1].nodeSelector: ${required}`,
      `nodeStrategies[2].nodeSelector: ${required}`,
    ]);
  });

  it('must convert as apimachinery converts them, every reason reported', () => {
    const result = strategies([
      {
        nodeSelector: {
          matchLabels: { 'bad key': 'v', ok: 'bad value!' },
          matchExpressions: [
            { key: 'a', operator: 'In' },
            { key: 'b', operator: 'NotIn', values: [] },
            { key: 'c', operator: 'Exists', values: ['x'] },
            { key: 'd', operator: 'in', values: ['x'] },
            { key: '', operator: 'DoesNotExist' },
            { key: 'e', operator: 'In', values: ['ok', '-bad'] },
          ],
        },
      },
    ]);
    assert.equal(result.strategies, undefined);
    const at = 'nodeStrategies[0].nodeSelector';
    const valueRule =
      "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
    assert.deepEqual(result.errors, [
      `${at}.matchLabels[bad key]: Invalid value: "bad key": the name ${valueRule}`,
      `${at}.matchLabels[ok]: Invalid value: "bad value!": ${valueRule}`,
      `${at}.matchExpressions[0].values: Required value: operator In needs at least one value`,
      `${at}.matchExpressions[1].values: Required value: operator NotIn needs at least one value`,
      `${at}.matchExpressions[2].values: Forbidden: must be empty for operator Exists`,
      `${at}.matchExpressions[3].operator: Invalid value: "in": must be In, NotIn, Exists or DoesNotExist`,
      `${at}.matchExpressions[4].key: Invalid value: "": the name must not be empty`,
      `${at}.matchExpressions[5].values[1]: Invalid value: "-bad": ${valueRule}`,
    ]);
  });

  it('are named by name, or by path when unnamed', () => {
    const named = valid([
      { name: 'a', nodeSelector: { matchLabels: { x: '1' } } },
      { nodeSelector: { matchLabels: { x: '2' } } },
    ]);
    assert.equal(strategyList(named), '[a nodeStrategies[1]]');
  });
});

describe('virtualNodes', () => {
  it('gives matchLabels to every node and cycles each expression through its values', () => {
    assert.deepEqual(
      virtualNodeLabels(
        selector({
          matchLabels: { zone: 'z1' },
          matchExpressions: [
            { key: 'pool', operator: 'In', values: ['a', 'b'] },
            { key: 'gpu', operator: 'Exists' },
            { key: 'arch', operator: 'NotIn', values: ['x', 'y', 'z'] },
          ],
        }),
      ),
      // Koordinator builds 2 x 3 = 6; node i takes values[i % len], which repeat every lcm(2, 3) = 6.
      [
        { zone: 'z1', pool: 'a', arch: 'x' },
        { zone: 'z1', pool: 'b', arch: 'y' },
        { zone: 'z1', pool: 'a', arch: 'z' },
        { zone: 'z1', pool: 'b', arch: 'x' },
        { zone: 'z1', pool: 'a', arch: 'y' },
        { zone: 'z1', pool: 'b', arch: 'z' },
      ],
    );
  });

  it('builds only the distinct nodes of the product (they repeat every lcm of the value counts)', () => {
    const nodes = virtualNodeLabels(
      selector({
        matchExpressions: [
          { key: 'a', operator: 'In', values: ['1', '2'] },
          { key: 'b', operator: 'In', values: ['1', '2'] },
        ],
      }),
    );
    assert.deepEqual(nodes, [
      { a: '1', b: '1' },
      { a: '2', b: '2' },
    ]);
  });

  it('lets an expression override a matchLabels label of the same key', () => {
    assert.deepEqual(
      virtualNodeLabels(
        selector({
          matchLabels: { pool: 'a' },
          matchExpressions: [{ key: 'pool', operator: 'In', values: ['b'] }],
        }),
      ),
      [{ pool: 'b' }],
    );
  });

  it('gives one empty node for a selector of Exists/DoesNotExist only', () => {
    assert.deepEqual(
      virtualNodeLabels(selector({ matchExpressions: [{ key: 'gpu', operator: 'Exists' }] })),
      [{}],
    );
  });

  it('stops at 1000 distinct nodes however many values a crafted selector has', () => {
    const primes = [7, 11, 13, 17, 19];
    const expressions = primes.map((count, index) => ({
      key: `k${index}`,
      operator: 'In',
      values: Array.from({ length: count }, (_, value) => `v${value}`),
    }));
    assert.equal(virtualNodeLabels(selector({ matchExpressions: expressions })).length, 1000);
  });
});

describe('searchOverlaps', () => {
  it('finds a strategy whose selector another one contains', () => {
    const overlaps = overlapsOf(
      valid([
        { name: 'a', nodeSelector: { matchLabels: { pool: 'x' } } },
        { name: 'b', nodeSelector: { matchLabels: { pool: 'x', zone: 'z1' } } },
      ]),
    );
    assert.equal(overlaps.length, 1);
    assert.equal(strategyList(overlaps[0]?.strategies ?? []), '[a b]');
    assert.equal(labelsText(overlaps[0]?.labels ?? {}), '{pool=x,zone=z1}');
  });

  it('finds an In value shared with another strategy', () => {
    const overlaps = overlapsOf(
      valid([
        {
          name: 'a',
          nodeSelector: { matchExpressions: [{ key: 'pool', operator: 'In', values: ['x', 'y'] }] },
        },
        {
          name: 'b',
          nodeSelector: { matchExpressions: [{ key: 'pool', operator: 'In', values: ['y', 'z'] }] },
        },
      ]),
    );
    assert.deepEqual(
      overlaps.map((overlap) => [strategyList(overlap.strategies), labelsText(overlap.labels)]),
      [['[a b]', '{pool=y}']],
    );
  });

  it('reports each set of overlapping strategies once', () => {
    const overlaps = overlapsOf(
      valid([
        { name: 'a', nodeSelector: { matchLabels: { pool: 'x' } } },
        { name: 'b', nodeSelector: { matchLabels: { pool: 'x' } } },
        { name: 'c', nodeSelector: { matchLabels: { pool: 'x' } } },
        { name: 'd', nodeSelector: { matchLabels: { pool: 'y' } } },
      ]),
    );
    assert.deepEqual(
      overlaps.map((overlap) => strategyList(overlap.strategies)),
      ['[a b c]'],
    );
  });

  it('finds none between disjoint selectors', () => {
    assert.deepEqual(
      overlapsOf(
        valid([
          { name: 'a', nodeSelector: { matchLabels: { pool: 'x' } } },
          { name: 'b', nodeSelector: { matchLabels: { pool: 'y' } } },
          {
            name: 'c',
            nodeSelector: { matchExpressions: [{ key: 'pool', operator: 'NotIn', values: ['x', 'y'] }] },
          },
        ]),
      ),
      [],
    );
  });

  it('like Koordinator, does not see overlaps its virtual nodes cannot show (real nodes are checked later)', () => {
    // A node labelled both pool=x and zone=z1 would match both, but neither selector names the other's label.
    assert.deepEqual(
      overlapsOf(
        valid([
          { name: 'a', nodeSelector: { matchLabels: { pool: 'x' } } },
          { name: 'b', nodeSelector: { matchLabels: { zone: 'z1' } } },
        ]),
      ),
      [],
    );
  });
});

/**
 * The pairwise search as first written (every virtual node against every selector), kept as the
 * oracle the indexed search must agree with.
 */
function pairwiseOverlaps(all: readonly NodeStrategy[]): { strategies: string; labels: string }[] {
  const found = new Map<string, { strategies: string; labels: string }>();
  for (const strategy of all) {
    for (const labels of virtualNodeLabels(strategy.source)) {
      const matching = all.filter((each) => selectorMatchesPairwise(each, labels));
      const id = matching.map((each) => each.index).join(',');
      if (matching.length > 1 && !found.has(id)) {
        found.set(id, { strategies: strategyList(matching), labels: labelsText(labels) });
      }
    }
  }
  return [...found.values()];
}

function selectorMatchesPairwise(strategy: NodeStrategy, labels: Record<string, string>): boolean {
  return strategy.selector.requirements.every(({ key, operator, values }) => {
    const value = Object.hasOwn(labels, key) ? labels[key] : undefined;
    if (operator === 'In') return value !== undefined && values.includes(value);
    if (operator === 'NotIn') return value === undefined || !values.includes(value);
    if (operator === 'Exists') return value !== undefined;
    return value === undefined;
  });
}

/** The project's seeded generator (mulberry32), so a failing case can be replayed from its seed. */
const random = (seed: number): (() => number) => {
  const rng = mulberry32(seed);
  return () => rng.next();
};

/** Random selectors over few keys and values, so that they collide often. */
function randomEntries(seed: number, count: number): { name: string; nodeSelector: unknown }[] {
  const next = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const keys = ['a', 'b', 'c', 'constructor'];
  const values = ['1', '2', '3'];
  const someValues = (): string[] => Array.from({ length: 1 + Math.floor(next() * 3) }, () => pick(values));
  return Array.from({ length: count }, (_, index) => {
    const matchLabels: Record<string, string> = {};
    const matchExpressions: { key: string; operator: string; values?: string[] }[] = [];
    const requirements = 1 + Math.floor(next() * 3);
    for (let r = 0; r < requirements; r++) {
      const key = pick(keys);
      const operator = pick(['label', 'In', 'In', 'NotIn', 'Exists', 'DoesNotExist']);
      if (operator === 'label') matchLabels[key] = pick(values);
      else if (operator === 'In' || operator === 'NotIn') {
        matchExpressions.push({ key, operator, values: someValues() });
      } else matchExpressions.push({ key, operator });
    }
    return { name: `s${index}`, nodeSelector: { matchLabels, matchExpressions } };
  }).filter(({ nodeSelector }) => {
    const { matchLabels, matchExpressions } = nodeSelector;
    return Object.keys(matchLabels).length > 0 || matchExpressions.length > 0;
  });
}

describe('searchOverlaps against the pairwise search', () => {
  it('agrees on 400 random configs: same sets, same order, same example nodes (the first 10)', () => {
    let many = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const all = valid(randomEntries(seed, 2 + (seed % 9)));
      const expected = pairwiseOverlaps(all);
      if (expected.length > 10) many++;
      assert.deepEqual(
        overlapsOf(all).map((overlap) => ({
          strategies: strategyList(overlap.strategies),
          labels: labelsText(overlap.labels),
        })),
        expected.slice(0, 10),
        `seed ${seed}`,
      );
    }
    assert.ok(many > 0, 'some configs have more than 10 overlapping sets');
  });

  it('agrees with strategiesMatching on random label sets', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const all = valid(randomEntries(seed, 2 + (seed % 9)));
      const next = random(seed * 7919);
      for (let probe = 0; probe < 20; probe++) {
        const labels: Record<string, string> = {};
        for (const key of ['a', 'b', 'c', 'constructor', 'other']) {
          if (next() < 0.6) labels[key] = String(1 + Math.floor(next() * 3));
        }
        assert.deepEqual(
          strategiesMatching(all, labels).map((each) => each.index),
          all.filter((each) => selectorMatchesPairwise(each, labels)).map((each) => each.index),
          `seed ${seed}, labels ${labelsText(labels)}`,
        );
      }
    }
  });

  it('sees a virtual node that its own strategy refuses (NotIn sets the key it excludes)', () => {
    const overlaps = overlapsOf(
      valid([
        {
          name: 'not-x',
          nodeSelector: { matchExpressions: [{ key: 'pool', operator: 'NotIn', values: ['x'] }] },
        },
        { name: 'x', nodeSelector: { matchLabels: { pool: 'x' } } },
        { name: 'any', nodeSelector: { matchExpressions: [{ key: 'pool', operator: 'Exists' }] } },
      ]),
    );
    assert.deepEqual(
      overlaps.map((overlap) => [strategyList(overlap.strategies), labelsText(overlap.labels)]),
      [['[x any]', '{pool=x}']],
    );
  });

  it('reports distinct sets in the order their first virtual node is met', () => {
    const overlaps = overlapsOf(
      valid([
        {
          name: 'ab',
          nodeSelector: { matchExpressions: [{ key: 'pool', operator: 'In', values: ['b', 'a'] }] },
        },
        { name: 'a', nodeSelector: { matchLabels: { pool: 'a' } } },
        { name: 'b', nodeSelector: { matchLabels: { pool: 'b' } } },
        { name: 'no-gpu', nodeSelector: { matchExpressions: [{ key: 'gpu', operator: 'DoesNotExist' }] } },
      ]),
    );
    assert.deepEqual(
      overlaps.map((overlap) => [strategyList(overlap.strategies), labelsText(overlap.labels)]),
      [
        ['[ab b no-gpu]', '{pool=b}'],
        ['[ab a no-gpu]', '{pool=a}'],
      ],
    );
  });

  it('finds identical selectors written in different orders', () => {
    const overlaps = overlapsOf(
      valid([
        { name: 'one', nodeSelector: { matchLabels: { pool: 'x', zone: 'z' } } },
        { name: 'two', nodeSelector: { matchLabels: { zone: 'z', pool: 'x' } } },
      ]),
    );
    assert.deepEqual(
      overlaps.map((overlap) => [strategyList(overlap.strategies), labelsText(overlap.labels)]),
      [['[one two]', '{pool=x,zone=z}']],
    );
  });

  it('decides 16,000 strategies: one per pool is valid, a duplicate pool is found', () => {
    const entries = Array.from({ length: 16_000 }, (_, index) => ({
      name: `pool-${index}`,
      nodeSelector:
        index % 2 === 0
          ? { matchLabels: { pool: `pool-${index}` } }
          : {
              matchExpressions: [
                { key: 'pool', operator: 'In', values: [`pool-${index}`, `spare-${index}`] },
              ],
            },
    }));
    assert.deepEqual(overlapsOf(valid(entries)), []);
    entries.push({ name: 'late', nodeSelector: { matchLabels: { pool: 'pool-7777' } } });
    assert.deepEqual(
      overlapsOf(valid(entries)).map((overlap) => [
        strategyList(overlap.strategies),
        labelsText(overlap.labels),
      ]),
      [['[pool-7777 late]', '{pool=pool-7777}']],
    );
  });
});

describe('bounds on the overlap search and its messages', () => {
  it('reports at most 10 overlapping sets, the first ones met', () => {
    // Every virtual node {pool=i} matches every strategy but the i-th: 2,000 sets of 1,999.
    const all = valid(
      Array.from({ length: 2000 }, (_, index) => ({
        name: `s${index}`,
        nodeSelector: { matchExpressions: [{ key: 'pool', operator: 'NotIn', values: [`${index}`] }] },
      })),
    );
    const overlaps = overlapsOf(all);
    assert.deepEqual(
      overlaps.map((overlap) => [overlap.strategies.length, labelsText(overlap.labels)]),
      Array.from({ length: 10 }, (_, index) => [1999, `{pool=${index}}`]),
    );
    assert.equal(
      strategyList(overlaps[0]?.strategies ?? []),
      `[${Array.from({ length: 20 }, (_, index) => `s${index + 1}`).join(' ')} …and 1979 more]`,
    );
  });

  it('stops at its work bound and says so', () => {
    const all = valid(
      Array.from({ length: 50 }, (_, index) => ({
        name: `s${index}`,
        nodeSelector: { matchLabels: { pool: `${index}` } },
      })),
    );
    assert.deepEqual(searchOverlaps(all, 100), { overlaps: [], exhausted: true });
    assert.deepEqual(searchOverlaps(all), { overlaps: [], exhausted: false });
  });

  it('cuts long names and long label sets in messages', () => {
    const long = 'x'.repeat(200);
    const [strategy] = valid([{ name: long, nodeSelector: { matchLabels: { pool: 'a' } } }]);
    assert.ok(strategy);
    assert.equal(strategyList([strategy]), `[${'x'.repeat(47)}…(153 more chars)]`);
    const labels = Object.fromEntries(
      Array.from({ length: 25 }, (_, index) => [`k${String(index).padStart(2, '0')}`, 'v']),
    );
    assert.equal(
      labelsText(labels),
      `{${Array.from({ length: 20 }, (_, index) => `k${String(index).padStart(2, '0')}=v`).join(',')},…and 5 more}`,
    );
  });
});
