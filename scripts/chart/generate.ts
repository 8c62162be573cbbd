/**
 * `npm run chart:generate`: rewrites the chart's generated parts (scripts/chart/generated-files.ts).
 * `npm run chart:generate -- --check` writes nothing and fails, naming each file, when any is out
 * of date, missing or left over (the unit tests check the same).
 */
// First: an unsupported Node.js gets one line saying so, not a dependency's stack trace.
import '../runtime/require-node.js';
import { rm, writeFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { repoRoot } from '../cluster/layout.js';
import { staleness } from './generated-file.js';
import { generatedChartFiles } from './generated-files.js';

const check = process.argv.includes('--check');
let files: Awaited<ReturnType<typeof generatedChartFiles>>;
try {
  files = await generatedChartFiles();
} catch (error) {
  // A missing source (a page, a CRD, a marker) is told in one line naming the file, not a stack.
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
let stale = 0;
for (const file of files) {
  const problem = staleness(file);
  if (problem === undefined) continue;
  stale++;
  const shown = relative(repoRoot, file.path);
  if (check) {
    console.error(problem);
  } else if (file.generated === undefined) {
    await rm(file.path);
    console.log(`removed ${shown}`);
  } else {
    await writeFile(file.path, file.generated);
    console.log(`wrote ${shown}`);
  }
}
if (check && stale > 0) process.exitCode = 1;
