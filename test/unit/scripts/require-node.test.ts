/**
 * An unsupported Node.js gets one line from every entry point: the version found, the version
 * required and how to install it, exit code 1, no stack trace. Run for real under an older Node
 * (this machine's own, which CI puts behind the Node it installs), and on this Node against a
 * package.json that asks for more.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from '../../../scripts/cluster/layout.js';

const checker = join(repoRoot, 'scripts', 'runtime', 'require-node.js');
const packageJson = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  engines: { node: string };
  scripts: Record<string, string>;
  bin: Record<string, string>;
};
const requiredMajor = Number(/^>=(\d+)/.exec(packageJson.engines.node)?.[1]);

/** The one line, for Node `version` at `execPath`, with the installer named from the repository's root. */
function expectedLine(version: string, execPath: string, range = packageJson.engines.node): string {
  const wanted = range.replace(/^>=/, '');
  return (
    `admission-operator needs Node.js ${wanted} or later (package.json engines: ${range}); ` +
    `this is Node.js ${version} (${execPath}). Install Node.js ${wanted} with: ` +
    'PATH="$(scripts/runtime/install-node.sh):$PATH"'
  );
}

/** A Node.js on this machine older than the one required, if there is one. */
function olderNode(): { path: string; version: string } | undefined {
  const candidates = [
    ...(process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'node')),
    '/usr/bin/node',
    '/usr/local/bin/node',
  ];
  for (const path of new Set(
    candidates.filter((candidate) => candidate.startsWith('/') && existsSync(candidate)),
  )) {
    const version = spawnSync(path, ['--version'], { encoding: 'utf8' }).stdout.trim();
    if (Number(/^v(\d+)\./.exec(version)?.[1]) < requiredMajor) return { path, version };
  }
  return undefined;
}

/** The files npm scripts run with tsx (`tsx <file>`, `node --import tsx <file>`). */
function scriptEntryPoints(): string[] {
  const files = Object.values(packageJson.scripts).flatMap((command) =>
    [...command.matchAll(/\btsx\s+(?:--\S+\s+)*([\w./-]+\.ts)\b/g)].map((match) => match[1] ?? ''),
  );
  return [...new Set(files)].sort();
}

describe('an unsupported Node.js', () => {
  it('is checked first by every entry point: the bins, each script npm runs with tsx, and npm ci', () => {
    const entries = [...Object.values(packageJson.bin), ...scriptEntryPoints()];
    assert.ok(
      entries.includes('scripts/start-local.ts') && entries.includes('scripts/run-tests.ts'),
      entries.join(),
    );
    for (const entry of entries) {
      const source = readFileSync(join(repoRoot, entry), 'utf8');
      const first = /^import\s+(?:[^'"]*from\s+)?['"]([^'"]+)['"]/m.exec(source)?.[1] ?? '(none)';
      assert.equal(resolve(repoRoot, dirname(entry), first), checker, `${entry}'s first import is ${first}`);
    }
    // npm ci runs the root package's preinstall after it has installed the dependencies, but before any
    // entry point could fail in one of them (engine-strict would stop it earlier, with npm's own words).
    assert.equal(packageJson.scripts.preinstall, `node ${relative(repoRoot, checker)}`);
  });

  it('gets one line naming the version found, the version required and the installer, and exit code 1', () => {
    const dir = mkdtempSync(join(tmpdir(), 'require-node-'));
    try {
      cpSync(checker, join(dir, 'scripts', 'runtime', 'require-node.js'));
      writeFileSync(
        join(dir, 'package.json'),
        JSON.stringify({ type: 'module', engines: { node: '>=999.1' } }),
      );
      const run = spawnSync(process.execPath, ['scripts/runtime/require-node.js'], {
        cwd: dir,
        encoding: 'utf8',
      });
      assert.equal(run.status, 1);
      assert.equal(run.stdout, '');
      assert.equal(run.stderr, `${expectedLine(process.version, process.execPath, '>=999.1')}\n`);
      // This Node meets the project's own requirement: nothing is printed.
      assert.deepEqual(execFileSync(process.execPath, [checker], { encoding: 'utf8' }), '');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('run under an older Node: the bins, npm start, npm test, a cluster script and the preinstall say so in one line', (t) => {
    const older = olderNode();
    if (!older) {
      t.skip(`no Node.js older than ${requiredMajor} on this machine`);
      return;
    }
    const line = expectedLine(older.version, older.path);
    // Scripts' shebangs (`env node`) and npm's own find the older Node first on PATH.
    const env = {
      ...process.env,
      PATH: [dirname(older.path), join(repoRoot, 'node_modules', '.bin'), process.env.PATH].join(delimiter),
    };
    const npm = process.env.npm_execpath;
    const runs: [string, string, string[]][] = [
      ['admission-operator --version', older.path, ['bin/admission-operator.js', '--version']],
      ['kubectl admit --help', older.path, ['bin/kubectl-admit.js', '--help']],
      [
        'tsx scripts/cluster/cli.ts up',
        join(repoRoot, 'node_modules', '.bin', 'tsx'),
        ['scripts/cluster/cli.ts', 'up'],
      ],
      ['the preinstall', older.path, ['scripts/runtime/require-node.js']],
      ...(['start', 'test'] as const).map((script): [string, string, string[]] =>
        npm
          ? [`npm ${script}`, older.path, [npm, '--silent', script]]
          : [`npm ${script}`, 'npm', ['--silent', script]],
      ),
    ];
    for (const [name, command, args] of runs) {
      const run = spawnSync(command, args, { cwd: repoRoot, env, encoding: 'utf8', timeout: 60_000 });
      assert.equal(run.stderr, `${line}\n`, `${name} under Node ${older.version}: stderr`);
      assert.equal(run.stdout, '', `${name}: stdout`);
      assert.equal(run.status, 1, `${name}: exit code`);
    }
  });
});
