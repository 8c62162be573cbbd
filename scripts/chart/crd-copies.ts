/**
 * The chart's copies of the project's CRDs (charts/admission-operator/files/crds/, which
 * templates/crds.yaml renders): one per kind whose CRD the project ships (`shipsCrd` in
 * webhook/kinds.ts), byte for byte its crds/<plural>.<group>.yaml. And the PolicyReport CRDs the
 * audit writes to (files/policy-report-crds/, which templates/policy-reports.yaml renders), each of
 * crds/policy-reports/: no kind of the registry, copied whole. crds/ is the only copy written by
 * hand.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ALL_KINDS, type KindDefinition } from '../../webhook/kinds.js';
import { repoRoot } from '../cluster/layout.js';
import { GENERATE_COMMAND, type GeneratedFile } from './generated-file.js';

export const CRDS_DIR = join(repoRoot, 'crds');
export const CHART_CRDS_DIR = join(repoRoot, 'charts', 'admission-operator', 'files', 'crds');
const POLICY_REPORT_CRDS_DIR = join(CRDS_DIR, 'policy-reports');
const CHART_POLICY_REPORT_CRDS_DIR = join(
  repoRoot,
  'charts',
  'admission-operator',
  'files',
  'policy-report-crds',
);

/** The kinds whose CRD the project ships, in the registry's order. */
export const SHIPPED_CRD_KINDS: readonly KindDefinition[] = ALL_KINDS.filter((kind) => kind.shipsCrd);

/** A CRD's file name under crds/ and in the chart: its metadata.name, `<plural>.<group>`. */
export const crdFileName = (kind: Pick<KindDefinition, 'plural' | 'group'>): string =>
  `${kind.plural}.${kind.group}.yaml`;

async function readIfPresent(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

async function filesIn(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((name) => name.endsWith('.yaml'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** Each copy `chart` should hold of `sources` (file name to text), and each it holds of none (to remove). */
async function copiesOf(sources: Map<string, string>, chart: string): Promise<GeneratedFile[]> {
  const copies: GeneratedFile[] = [];
  for (const [name, source] of sources) {
    const path = join(chart, name);
    copies.push({ path, committed: await readIfPresent(path), generated: source });
  }
  for (const name of await filesIn(chart)) {
    if (sources.has(name)) continue;
    const path = join(chart, name);
    copies.push({ path, committed: await readFile(path, 'utf8'), generated: undefined });
  }
  return copies;
}

/** Every copy the chart should hold, and every copy it holds of nothing shipped (to remove). */
export async function generatedCrdCopies(): Promise<GeneratedFile[]> {
  const shipped = new Map<string, string>();
  for (const kind of SHIPPED_CRD_KINDS) {
    const name = crdFileName(kind);
    const source = await readIfPresent(join(CRDS_DIR, name));
    if (source === undefined) {
      throw new Error(
        `webhook/kinds.ts says the project ships the CRD of ${kind.kind}, but crds/${name} does not exist: ` +
          `write it (or set shipsCrd: false when only another project installs it), then run ${GENERATE_COMMAND}`,
      );
    }
    shipped.set(name, source);
  }
  const policyReports = new Map<string, string>();
  for (const name of (await filesIn(POLICY_REPORT_CRDS_DIR)).sort()) {
    policyReports.set(name, await readFile(join(POLICY_REPORT_CRDS_DIR, name), 'utf8'));
  }
  return [
    ...(await copiesOf(shipped, CHART_CRDS_DIR)),
    ...(await copiesOf(policyReports, CHART_POLICY_REPORT_CRDS_DIR)),
  ];
}
