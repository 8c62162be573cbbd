/**
 * What `--version` prints, the same for the operator, `admit` and `audit`: the package's version
 * and the git commit the build was made from. The bundle the image runs (scripts/bundle.ts) has
 * both written in at build time, because the image holds neither package.json nor .git; a run
 * from a checkout (tsx, or tsc's dist/) reads package.json and asks git.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Replaced by esbuild's `define` in the bundle; never declared anywhere else.
declare const ADMISSION_OPERATOR_VERSION: string | undefined;
declare const ADMISSION_OPERATOR_COMMIT: string | undefined;

/** The commit when neither the build nor a checkout can tell it. */
const UNKNOWN_COMMIT = 'unknown';

export interface BuildInfo {
  version: string;
  commit: string;
}

/** The checkout (or installed package) this file belongs to, from source or from dist/. */
function packageRoot(): string {
  const start = dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${start}`);
  }
}

/**
 * The commit of a checkout: HEAD, with `-dirty` when tracked files differ from it (a build of
 * uncommitted code must not claim a commit's name); `unknown` outside a git work tree.
 */
export function gitCommit(dir: string): string {
  const git = (...args: string[]): string =>
    execFileSync('git', ['-C', dir, ...args], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 5000,
    }).trim();
  try {
    const head = git('rev-parse', 'HEAD');
    const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
    return dirty ? `${head}-dirty` : head;
  } catch {
    return UNKNOWN_COMMIT;
  }
}

function buildInfo(): BuildInfo {
  if (typeof ADMISSION_OPERATOR_VERSION === 'string' && typeof ADMISSION_OPERATOR_COMMIT === 'string') {
    return { version: ADMISSION_OPERATOR_VERSION, commit: ADMISSION_OPERATOR_COMMIT };
  }
  const root = packageRoot();
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: string };
  return { version: manifest.version ?? '0.0.0', commit: gitCommit(root) };
}

/** The one line `--version` prints everywhere. */
export function versionLine(info: BuildInfo = buildInfo()): string {
  return `admission-operator ${info.version} (commit ${info.commit})`;
}
