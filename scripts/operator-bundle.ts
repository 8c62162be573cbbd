/**
 * How the operator is bundled into one ES module, for the image (scripts/bundle.ts, from tsc's
 * output) and for the integration suite (bundleTestOperator, straight from the TypeScript
 * sources): the same settings, so the suite runs what the image runs.
 */
import { build, type BuildOptions } from 'esbuild';
import { join } from 'node:path';
import { buildInfoDefines } from './build-info.js';

/** The settings both bundles share: everything but the entry points and where they go. */
export function operatorBundleOptions(root: string, env: NodeJS.ProcessEnv): BuildOptions {
  return {
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    // Identifiers are kept as written, so stack traces name our functions; esbuild's keepNames
    // would instead wrap every closure created per request in a defineProperty call (10-15 % of
    // the throughput, docs/performance/README.md).
    minifyWhitespace: true,
    minifySyntax: true,
    // Dependencies written as CommonJS call require(), which an ES module does not have.
    banner: {
      js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
    },
    define: buildInfoDefines(root, env),
    logLevel: 'warning',
  };
}

/** The entry points the integration suite starts, by the name of their file in the bundle's folder. */
export const TEST_OPERATOR_ENTRIES = {
  /** The operator as the image starts it. */
  operator: join('operator', 'main.ts'),
  /** The same start-up on a skewed clock (test/harness/skewed-operator.ts). */
  skewed: join('test', 'harness', 'skewed-operator.ts'),
} as const;

/**
 * Bundles the operator's entry points for the integration suite into `outdir`
 * (`operator.mjs`, `skewed.mjs`). A test starts dozens of operators: from one bundled file a
 * process is up in a fifth of the CPU that compiling and loading the thousand-odd modules through
 * tsx takes (docs/development.md, "CI time").
 */
export async function bundleTestOperator(root: string, outdir: string): Promise<void> {
  await build({
    ...operatorBundleOptions(root, process.env),
    entryPoints: Object.entries(TEST_OPERATOR_ENTRIES).map(([out, entry]) => ({
      in: join(root, entry),
      out,
    })),
    outdir,
    outExtension: { '.js': '.mjs' },
    // The two entries share nearly every module: one copy of them, in chunks both import.
    splitting: true,
  });
}
