/**
 * The README is for users: its first lines give the two commands a newcomer needs, its sections
 * come in the order a cluster admin meets them, it stays short, every shell block in it is run
 * by a test or by CI, and every link in it and in docs/ leads somewhere.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { readmeBlocks, readmeCommands, readmePath } from '../harness/readme.js';
import { repoRoot } from '../../scripts/cluster/layout.js';

const readme = readFileSync(readmePath, 'utf8');

function filesUnder(dir: string, suffix: string): string[] {
  return readdirSync(join(repoRoot, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(suffix))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** Blocks whose commands CI runs itself (checked below), rather than a test. */
const RUN_BY_CI = new Set(['quickstart', 'develop']);

describe('README', () => {
  it('opens with the command that runs the operator locally and the one that runs every test', () => {
    const [first] = readmeBlocks();
    assert.equal(first?.id, 'quickstart');
    assert.ok(first.line <= 5, `the first block starts at line ${first.line}`);
    assert.deepEqual(readmeCommands('quickstart'), ['npm ci', 'npm start', 'npm test']);
  });

  it('keeps its sections in the order a user meets them, and under 350 lines', () => {
    const sections = [...readme.matchAll(/^## (.+)$/gm)].map((match) => match[1]);
    assert.deepEqual(sections, [
      'Install with Helm',
      'The first admitted and refused pod',
      'Check manifests in CI (`admit`)',
      'Rolling rules out',
      'Operations',
      'Rule families',
      'Developing',
      'License',
    ]);
    assert.ok(readme.split('\n').length <= 350, `README.md has ${readme.split('\n').length} lines`);
  });

  it('tags every shell block once', () => {
    const fences = readme.match(/^[ \t]*```sh$/gm) ?? [];
    const ids = readmeBlocks().map((block) => block.id);
    assert.equal(ids.length, fences.length, 'a ```sh block without a <!-- readme:<id> --> tag');
    assert.equal(new Set(ids).size, ids.length, `ids repeat: ${ids.join(', ')}`);
  });

  it('has every shell block run by a test, or by CI', () => {
    // A test runs a block by passing its id, as a string literal, to runReadmeBlock or readmeCommands.
    const runners = filesUnder('test', '.ts')
      .map((file) => readFileSync(file, 'utf8'))
      .filter(
        (source) => /\b(?:runReadmeBlock|readmeCommands)\(/.test(source) && !source.includes('RUN_BY_CI'),
      );
    const ranByTests = new Set(
      runners.flatMap((source) => [...source.matchAll(/'([\w-]+)'/g)].map((m) => m[1])),
    );
    for (const { id } of readmeBlocks()) {
      assert.ok(ranByTests.has(id) || RUN_BY_CI.has(id), `README block "${id}" is run by no test`);
    }
  });

  it('has CI run the commands of the blocks it claims', () => {
    const ciScript = readFileSync(join(repoRoot, '.ci', 'run'), 'utf8');
    // A step of .ci/run is `phase '<name>' <command>`: the command is what follows the name.
    const ciLines = ciScript
      .split('\n')
      .map((line) => line.trim().replace(/^phase\s+('[^']*'|"[^"]*")\s+/, ''));
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    // `npm test` runs its suites from a script (scripts/test-all.ts), each as `npmRun...('<script>')`.
    const runner = /^tsx (\S+\.ts)$/.exec(pkg.scripts.test ?? '')?.[1];
    assert.ok(runner, `npm test is "${pkg.scripts.test ?? ''}", not tsx running a script`);
    const runByNpmTest = [
      ...readFileSync(join(repoRoot, runner), 'utf8').matchAll(/npmRun(?:Beside)?\('([\w:-]+)'[,)]/g),
    ].map((match) => `npm run ${match[1] ?? ''}`);
    const runByTests = filesUnder('test', '.ts')
      .map((file) => readFileSync(file, 'utf8'))
      .join('\n');
    for (const id of RUN_BY_CI) {
      for (const command of readmeCommands(id)) {
        const byCi = ciLines.some((line) => line === command || line.startsWith(`${command} `));
        const byNpmTest = ciLines.includes('npm test') && runByNpmTest.includes(command);
        // `npm start` is started by the README's integration test (it reads the command from here).
        const byTest = runByTests.includes(`readmeCommands('${id}')`) && command === 'npm start';
        assert.ok(
          byCi || byNpmTest || byTest,
          `"${command}" (README block ${id}) is run neither by .ci/run nor by a test`,
        );
      }
    }
  });
});

describe('links in README.md, docs/ and the chart README', () => {
  const documents = [
    readmePath,
    join(repoRoot, 'charts', 'admission-operator', 'README.md'),
    ...filesUnder('docs', '.md'),
  ];
  for (const document of documents) {
    it(`every relative link of ${relative(repoRoot, document)} leads to a file`, () => {
      const text = readFileSync(document, 'utf8');
      for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = match[1] ?? '';
        if (/^[a-z]+:/.test(target) || target.startsWith('#')) continue;
        const path = resolve(dirname(document), decodeURIComponent(target.split('#')[0] ?? ''));
        assert.ok(
          existsSync(path),
          `${relative(repoRoot, document)} links to ${target}, which does not exist`,
        );
      }
    });
  }
});
