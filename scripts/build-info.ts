/**
 * The build's identity written into the bundle (scripts/bundle.ts) for `--version`
 * (operator/version.ts): the package version, and the commit from $GIT_COMMIT when set (the
 * Dockerfile's build argument: its build stage has no .git), else from the checkout.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gitCommit } from '../operator/version.js';

/** esbuild `define` entries replacing the identifiers operator/version.ts declares. */
export function buildInfoDefines(root: string, env: NodeJS.ProcessEnv): Record<string, string> {
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  const commit = env.GIT_COMMIT?.trim() || gitCommit(root);
  return {
    ADMISSION_OPERATOR_VERSION: JSON.stringify(version),
    ADMISSION_OPERATOR_COMMIT: JSON.stringify(commit),
  };
}
