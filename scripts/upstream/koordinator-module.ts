/**
 * Koordinator's Go module at one release, as the builds that compile inside it need it: downloaded
 * through the proxy `go env GOPROXY` names, and copied out of the read-only module cache into a
 * writable folder (builds run with -mod=mod, which may update go.sum; the oracle drops its harness
 * in). Built inside Koordinator's own module, its `replace` directives apply exactly as in its
 * release builds.
 */
import { spawn } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ModuleSource } from '../go-build.js';

export const KOORDINATOR_MODULE = 'github.com/koordinator-sh/koordinator';

function run(command: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, {
      cwd,
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, GOFLAGS: '-mod=mod' },
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0) resolvePromise(stdout);
      else reject(new Error(`${command} ${args.join(' ')} failed (${signal ?? `exit ${code}`})`));
    });
  });
}

/** The module's folder in the module cache, downloaded first when missing. */
export async function koordinatorModuleDir(version: string): Promise<string> {
  const stdout = await run('go', ['mod', 'download', '-json', `${KOORDINATOR_MODULE}@${version}`], tmpdir());
  const info = JSON.parse(stdout) as { Dir?: string; Error?: string };
  if (!info.Dir) throw new Error(`go mod download ${KOORDINATOR_MODULE}@${version}: ${info.Error}`);
  return info.Dir;
}

/** A writable copy of the module at `version`, removed by its cleanup. */
export async function copyKoordinatorModule(version: string, prefix: string): Promise<ModuleSource> {
  const source = await mkdtemp(join(tmpdir(), prefix));
  await cp(await koordinatorModuleDir(version), source, { recursive: true });
  await run('chmod', ['-R', 'u+w', source], source);
  return { dir: source, cleanup: () => rm(source, { recursive: true, force: true }) };
}
