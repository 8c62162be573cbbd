/**
 * `--version`: the operator, `admit`, `audit` and `kubectl admit` print one and the same line, the
 * package version and the commit of the build; the bundle the image runs carries both written in
 * at build time (it has no package.json or .git to read them from).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { admitMain } from '../../../operator/cli/admit/main.js';
import { auditMain } from '../../../operator/cli/audit/main.js';
import { gitCommit, versionLine } from '../../../operator/version.js';
import { buildInfoDefines } from '../../../scripts/build-info.js';
import { repoRoot } from '../../../scripts/cluster/layout.js';

const execFileAsync = promisify(execFile);
const packageVersion = (
  JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }
).version;

async function command(main: typeof admitMain, args: string[]): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  const code = await main(args, {
    stdout: (text) => (stdout += text),
    stderr: () => undefined,
    readStdin: () => Promise.resolve(''),
    env: {},
  });
  return { code, stdout };
}

describe('--version', () => {
  it('names the package version and the checkout’s commit when run from source', async () => {
    const { stdout: head } = await execFileAsync('git', ['-C', repoRoot, 'rev-parse', 'HEAD']);
    const version = packageVersion.replaceAll('.', '\\.');
    assert.match(
      versionLine(),
      new RegExp(`^admission-operator ${version} \\(commit ${head.trim()}(-dirty)?\\)$`),
    );
  });

  it('is the same line from the operator, admit, audit, kubectl admit and npm start', async () => {
    const expected = `${versionLine()}\n`;
    assert.deepEqual(await command(admitMain, ['--version']), { code: 0, stdout: expected });
    assert.deepEqual(await command(auditMain, ['--version']), { code: 0, stdout: expected });
    const operator = await execFileAsync(process.execPath, ['bin/admission-operator.js', '--version'], {
      cwd: repoRoot,
    });
    assert.equal(operator.stdout, expected);
    // Among the operator's flags, as --help may be; nothing starts.
    const among = await execFileAsync(
      process.execPath,
      ['bin/admission-operator.js', '--log-level=debug', '--version'],
      { cwd: repoRoot },
    );
    assert.equal(among.stdout, expected);
    // `npm start -- --version` from a checkout.
    const local = await execFileAsync(
      process.execPath,
      ['--import', 'tsx', 'scripts/start-local.ts', '--version'],
      {
        cwd: repoRoot,
      },
    );
    assert.equal(local.stdout, expected);
    const plugin = await execFileAsync(process.execPath, ['bin/kubectl-admit.js', '--version'], {
      cwd: repoRoot,
    });
    assert.equal(plugin.stdout, expected);
  });

  it('outside a git work tree, says the commit is unknown', () => {
    assert.equal(gitCommit('/'), 'unknown');
  });

  it('in the bundle, prints the version and the commit written in at build time', async () => {
    const bundled = await build({
      stdin: {
        contents: "import { versionLine } from './operator/version.ts'; console.log(versionLine());",
        resolveDir: repoRoot,
        loader: 'ts',
      },
      bundle: true,
      platform: 'node',
      format: 'esm',
      write: false,
      define: buildInfoDefines(repoRoot, { GIT_COMMIT: '0123456789abcdef0123456789abcdef01234567' }),
      logLevel: 'silent',
    });
    const source = bundled.outputFiles[0]?.text ?? '';
    // Run from / with a commit that is not the checkout's: what it prints was written in.
    const { stdout } = await execFileAsync(process.execPath, ['--input-type=module', '-e', source], {
      cwd: '/',
    });
    assert.equal(
      stdout,
      `admission-operator ${packageVersion} (commit 0123456789abcdef0123456789abcdef01234567)\n`,
    );
  });
});
