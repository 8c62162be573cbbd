/**
 * A published Go module at one release, as the builds that compile inside it need it: downloaded
 * through the proxy `go env GOPROXY` names, and copied out of the read-only module cache into a
 * writable folder (builds run with -mod=mod, which may update go.sum). Built inside the module
 * itself, its `replace` directives apply exactly as in its own release builds.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ModuleSource } from '../go-build.js';

const execFileAsync = promisify(execFile);

/** The module's folder in the module cache (read-only), downloaded first when missing. */
export async function goModuleDir(module: string, version: string): Promise<string> {
  const { stdout } = await execFileAsync('go', ['mod', 'download', '-json', `${module}@${version}`], {
    cwd: tmpdir(),
    env: { ...process.env, GOFLAGS: '-mod=mod' },
  });
  const info = JSON.parse(stdout) as { Dir?: string; Error?: string };
  if (!info.Dir) throw new Error(`go mod download ${module}@${version}: ${info.Error}`);
  return info.Dir;
}

/** A writable copy of `module` at `version` in a new temporary folder, removed by its cleanup. */
export async function copyGoModule(module: string, version: string, prefix: string): Promise<ModuleSource> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  // The module cache's files and folders are read-only; their copies must be writable.
  await cp(await goModuleDir(module, version), dir, { recursive: true });
  await execFileAsync('chmod', ['-R', 'u+w', dir]);
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}
