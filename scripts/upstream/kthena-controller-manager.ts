/**
 * kthena-controller-manager, Kthena's controller and webhook process, built from its release's Go
 * module (./cmd/kthena-controller-manager, as its Makefile and Dockerfile build it) through
 * scripts/go-build.ts: what a Kthena user runs today, for the end-to-end suite's migration test.
 *
 *   tsx scripts/upstream/kthena-controller-manager.ts   builds it (or finds it built) and prints its path
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheDir } from '../cluster/layout.js';
import { ensureGoBinaries } from '../go-build.js';
import { copyGoModule } from './go-module.js';

export const KTHENA_MODULE = 'github.com/volcano-sh/kthena';
/** The release the operator follows (docs/rules/kthena.md, test/harness/kthena-module.ts). */
export const KTHENA_CONTROLLER_MANAGER_VERSION = 'v1.0.0';

/** Where the binary lands: .cache/bin/kthena-controller-manager-<version>/kthena-controller-manager. */
export function kthenaControllerManagerPath(version: string = KTHENA_CONTROLLER_MANAGER_VERSION): string {
  return join(cacheDir, 'bin', `kthena-controller-manager-${version}`, 'kthena-controller-manager');
}

/** Builds kthena-controller-manager at `version` unless built; resolves with the binary's path. */
export async function ensureKthenaControllerManager(
  log: (line: string) => void,
  version: string = KTHENA_CONTROLLER_MANAGER_VERSION,
): Promise<string> {
  const binary = kthenaControllerManagerPath(version);
  await ensureGoBinaries(
    {
      name: `kthena-controller-manager ${version}`,
      binDir: join(binary, '..'),
      packages: ['./cmd/kthena-controller-manager'],
      outputs: [binary],
      key: `kthena-controller-manager-${version}`,
    },
    () => copyGoModule(KTHENA_MODULE, version, 'kthena-controller-manager-src-'),
    log,
  );
  return binary;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const binary = await ensureKthenaControllerManager((line) => {
    console.error(`[kthena-controller-manager] ${line}`);
  });
  console.log(binary);
}
