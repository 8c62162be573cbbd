/**
 * The generated files: the chart schema's enumerations (gates, webhook names, enforcement
 * actions, from the code), the chart README's values table (from values.yaml and the schema), the
 * ClusterRole's reads of whole kinds and the chart's CRD copies (from webhook/kinds.ts, the copies
 * of crds/), and the facts of docs/rules/ (from the webhooks' folders), each with what is
 * committed and what the generator makes of it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { repoRoot } from '../cluster/layout.js';
import { generatedClusterRole } from './cluster-role-reads.js';
import { codeLists } from './code-lists.js';
import { generatedCrdCopies } from './crd-copies.js';
import type { GeneratedFile } from './generated-file.js';
import { generatedRulesDocs } from './rules-docs.js';
import { SCHEMA_PATH, withGeneratedDefinitions } from './schema-definitions.js';
import { valuesTable, withValuesTable } from './values-table.js';

const chart = join(repoRoot, 'charts', 'admission-operator');
export const README_PATH = join(chart, 'README.md');
export const VALUES_PATH = join(chart, 'values.yaml');

export async function generatedChartFiles(): Promise<GeneratedFile[]> {
  const schema = await readFile(SCHEMA_PATH, 'utf8');
  const generatedSchema = await withGeneratedDefinitions(schema, codeLists());
  const readme = await readFile(README_PATH, 'utf8');
  const table = valuesTable(await readFile(VALUES_PATH, 'utf8'), generatedSchema);
  return [
    { path: SCHEMA_PATH, committed: schema, generated: generatedSchema },
    { path: README_PATH, committed: readme, generated: withValuesTable(readme, table) },
    await generatedClusterRole(),
    ...(await generatedCrdCopies()),
    ...(await generatedRulesDocs()),
  ];
}
