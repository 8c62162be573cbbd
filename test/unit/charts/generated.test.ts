/**
 * The chart's generated parts are current (CI runs these), and the schema enumerates exactly what
 * the code knows: the feature gates, the webhooks of the one table and the enforcement actions.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { gateComments } from '../../../scripts/chart/code-lists.js';
import { staleness } from '../../../scripts/chart/generated-file.js';
import { generatedChartFiles } from '../../../scripts/chart/generated-files.js';
import { SCHEMA_PATH } from '../../../scripts/chart/schema-definitions.js';
import { TABLE_BEGIN, TABLE_END, valuesTable, withValuesTable } from '../../../scripts/chart/values-table.js';
import { ENFORCEMENT_ACTIONS } from '../../../webhook/enforcement/enforcement.js';
import { FEATURE_GATE_DEFAULTS, KOORDINATOR_GATE_ALIASES } from '../../../webhook/feature-gates.js';
import { enforceableNames, webhookShortNames } from '../../../webhook/table.js';

interface Definitions {
  definitions: Record<string, { properties?: Record<string, { default?: unknown }>; enum?: unknown[] }>;
}

describe('the chart’s generated parts', () => {
  it('are what npm run chart:generate writes (the schema’s lists, the README’s values table, the CRD copies)', async () => {
    for (const file of await generatedChartFiles()) {
      const problem = staleness(file);
      assert.equal(problem, undefined, problem);
    }
  });

  it('enumerate the code’s feature gates (with their defaults, then Koordinator’s names), webhook names and enforcement actions', () => {
    const schema = JSON.parse(readFileSync(SCHEMA_PATH, 'utf8')) as Definitions;
    const gates = schema.definitions.featureGates?.properties ?? {};
    assert.deepEqual(Object.keys(gates), [
      ...Object.keys(FEATURE_GATE_DEFAULTS),
      ...Object.keys(KOORDINATOR_GATE_ALIASES),
    ]);
    for (const [name, on] of Object.entries(FEATURE_GATE_DEFAULTS)) {
      assert.equal(gates[name]?.default, on, `default of ${name}`);
    }
    // An alias has no default of its own: it sets its gate only when given.
    for (const alias of Object.keys(KOORDINATOR_GATE_ALIASES)) assert.equal(gates[alias]?.default, undefined);
    assert.deepEqual(Object.keys(schema.definitions.webhookEnforcement?.properties ?? {}), [
      '*',
      ...enforceableNames(),
    ]);
    assert.ok(enforceableNames().includes('validate-pod/colocation'), 'steps enforced apart are named');
    assert.deepEqual(Object.keys(schema.definitions.webhookOverrides?.properties ?? {}), [
      ...webhookShortNames(),
    ]);
    assert.deepEqual(schema.definitions.enforcementAction?.enum, [...ENFORCEMENT_ACTIONS]);
  });

  it('take each rule gate’s description from its doc comment', () => {
    const comments = gateComments(
      [
        'export const RULE_GATE_DEFAULTS = {',
        '  PlainWebhook: true,',
        '  /** Refuse what',
        '   * spans lines. */',
        '  RuleGate: false,',
        '} as const satisfies Record<string, boolean>;',
      ].join('\n'),
    );
    assert.deepEqual([...comments], [['RuleGate', 'Refuse what spans lines.']]);
  });
});

describe('the values table', () => {
  const schema = JSON.stringify({
    properties: {
      known: { type: 'object', properties: { level: { enum: ['low', 'high'] } } },
      gates: {
        type: 'object',
        properties: { Alpha: { type: 'boolean', default: false, description: 'Turns alpha on.' } },
      },
    },
  });

  it('documents keys it has never seen, nested maps key by key, and schema-described keys values.yaml leaves unset', () => {
    const table = valuesTable(
      [
        'known:',
        '  # -- How loud.',
        '  level: low',
        '# -- A section another change added, with <placeholders> and a | pipe.',
        'policyReports:',
        '  enabled: false',
        'gates: {}',
      ].join('\n'),
      schema,
    );
    assert.deepEqual(table.split('\n').slice(2), [
      '| `known.level` | one of `low`, `high` | `"low"` | How loud. |',
      '| `policyReports` | object | `{"enabled":false}` | A section another change added, with &lt;placeholders&gt; and a \\| pipe. |',
      '| `gates` | object | `{}` |  |',
      '| `gates.Alpha` | boolean | `false` | Turns alpha on. |',
    ]);
  });

  it('replaces only the marked region of the README, and refuses a README without it', () => {
    const readme = `# Chart\n\nbefore\n\n${TABLE_BEGIN}\nold\n${TABLE_END}\n\nafter\n`;
    assert.equal(
      withValuesTable(readme, '| new |'),
      `# Chart\n\nbefore\n\n${TABLE_BEGIN}\n\n| new |\n\n${TABLE_END}\n\nafter\n`,
    );
    assert.throws(() => withValuesTable('# Chart\n', '| new |'), /no .*values-table:begin.* region/);
  });
});
