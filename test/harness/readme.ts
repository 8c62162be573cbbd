/**
 * The README's shell blocks, so that tests run exactly what users read. Each block is tagged
 * with `<!-- readme:<id> -->` on the line before its fence; test/unit/readme.test.ts checks that
 * every block is tagged and that some test (or CI itself) runs it.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ensureHelm } from '../../scripts/cluster/binaries.js';
import { binaries, kubeconfigPath, repoRoot } from '../../scripts/cluster/layout.js';

export interface ReadmeBlock {
  id: string;
  /** The block's text, as bash reads it. */
  script: string;
  /** 1-based line of the opening fence. */
  line: number;
}

const TAGGED_BLOCK = /^[ \t]*<!-- readme:([\w-]+) -->\n[ \t]*```sh\n([\s\S]*?)^[ \t]*```$/gm;

export const readmePath = join(repoRoot, 'README.md');

export function readmeBlocks(text = readFileSync(readmePath, 'utf8')): ReadmeBlock[] {
  return [...text.matchAll(TAGGED_BLOCK)].map((match) => {
    const indent = /^[ \t]*/.exec(match[0].split('\n')[1] ?? '')?.[0] ?? '';
    return {
      id: match[1] ?? '',
      script: (match[2] ?? '')
        .split('\n')
        .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
        .join('\n'),
      line: text.slice(0, match.index).split('\n').length + 1,
    };
  });
}

export function readmeBlock(id: string): ReadmeBlock {
  const block = readmeBlocks().find((candidate) => candidate.id === id);
  if (!block) throw new Error(`README.md has no block tagged <!-- readme:${id} -->`);
  return block;
}

/** The commands of a block: lines without comments, continuations joined, `a && b` split. */
export function readmeCommands(id: string): string[] {
  return readmeBlock(id)
    .script.replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .flatMap((line) => line.split(/\s*&&\s*/));
}

export interface BlockRun {
  code: number;
  /** stdout and stderr interleaved, as a terminal shows them. */
  output: string;
}

/**
 * Runs a block with bash in the repository, kubectl and helm on PATH and the local cluster's
 * kubeconfig, as a user who followed the README would. Not `set -e`: a block may show a refusal
 * and go on, so tests assert on the output (and the code of the last command).
 */
export async function runReadmeBlock(
  id: string,
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 300_000,
): Promise<BlockRun> {
  const { script } = readmeBlock(id);
  const path = [
    dirname(binaries.kubectl),
    dirname(await ensureHelm()),
    dirname(process.execPath),
    process.env.PATH,
  ].join(':');
  return new Promise((resolvePromise, reject) => {
    const child = spawn('bash', ['-c', script], {
      cwd: repoRoot,
      env: { ...process.env, KUBECONFIG: kubeconfigPath, PATH: path, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: timeoutMs,
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      resolvePromise({ code: code ?? (signal ? 128 : 0), output });
    });
  });
}
