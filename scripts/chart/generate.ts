/**
 * `npm run chart:generate`: rewrites the chart's generated parts (scripts/chart/generated-files.ts).
 * `npm run chart:generate -- --check` writes nothing and fails when either is out of date (the
 * unit tests check the same).
 */
// First: an unsupported Node.js gets one line saying so, not a dependency's stack trace.
import '../runtime/require-node.js';
import { writeFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { repoRoot } from '../cluster/layout.js';
import { generatedChartFiles } from './generated-files.js';

const check = process.argv.includes('--check');
let stale = 0;
for (const file of await generatedChartFiles()) {
  if (file.committed === file.generated) continue;
  stale++;
  const shown = relative(repoRoot, file.path);
  if (check) {
    console.error(`${shown} is out of date: run npm run chart:generate`);
  } else {
    await writeFile(file.path, file.generated);
    console.log(`wrote ${shown}`);
  }
}
if (check && stale > 0) process.exitCode = 1;
