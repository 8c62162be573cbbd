/**
 * Bundles the compiled operator (dist/operator/main.js, from tsc) and its dependencies into one
 * ES module without comments or whitespace, dist/admission-operator.mjs: all the image runs.
 * Loading one file instead of the thousand-odd modules of client-node and the rest took start to
 * Ready at the large state from about 1.5 s to 1.0 s, and holding 4.5 MiB of source in the heap
 * instead of the 20 MiB that client-node's generated API code alone holds took the resident
 * memory from about 166 to 134 MiB (docs/performance/README.md).
 *
 * The source map beside the bundle maps stack traces to the TypeScript when the process runs with
 * NODE_OPTIONS=--enable-source-maps (left off by default: loading the map costs memory).
 *
 * The package version and the git commit are written into the bundle for `--version`
 * (scripts/build-info.ts): the image has neither package.json nor .git.
 */
// First: an unsupported Node.js gets one line saying so, not a dependency's stack trace.
import './runtime/require-node.js';
import { build } from 'esbuild';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { operatorBundleOptions } from './operator-bundle.js';

const root = fileURLToPath(new URL('..', import.meta.url));

await build({
  ...operatorBundleOptions(root, process.env),
  entryPoints: [join(root, 'dist', 'operator', 'main.js')],
  outfile: join(root, 'dist', 'admission-operator.mjs'),
  sourcemap: true,
});
