/**
 * The operator the integration suite starts: bundled once per run (scripts/operator-bundle.ts)
 * into a folder the runner names in $ADMISSION_TEST_OPERATOR_BUNDLE, or, for a test file run on
 * its own, once per test process into a temporary folder.
 */
import { rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../../scripts/cluster/layout.js';
import { bundleTestOperator, TEST_OPERATOR_ENTRIES } from '../../scripts/operator-bundle.js';

export const OPERATOR_BUNDLE_ENV = 'ADMISSION_TEST_OPERATOR_BUNDLE';

/** Bundles the operator into a new temporary folder, removed when this process exits. */
export async function bundleIntoTemporaryFolder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'admission-operator-bundle-'));
  process.once('exit', () => {
    rmSync(dir, { recursive: true, force: true });
  });
  await bundleTestOperator(repoRoot, dir);
  return dir;
}

let bundled: Promise<string> | undefined;

/** The file of one of the bundle's entry points: `operator` (the image's) or `skewed` (a skewed clock). */
export async function operatorEntry(entry: keyof typeof TEST_OPERATOR_ENTRIES): Promise<string> {
  const given = process.env[OPERATOR_BUNDLE_ENV];
  const dir = given !== undefined && given !== '' ? given : await (bundled ??= bundleIntoTemporaryFolder());
  return join(dir, `${entry}.mjs`);
}
