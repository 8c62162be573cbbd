/**
 * koord-manager, Koordinator's controller and webhook process, built from its release's Go module
 * (cmd/koord-manager, as its Makefile builds it) through scripts/go-build.ts: what a Koordinator user
 * runs today, for the side-by-side bench and for any image that needs the real thing.
 *
 *   tsx scripts/upstream/koord-manager.ts   builds it (or finds it built) and prints its path
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheDir } from '../cluster/layout.js';
import { ensureGoBinaries } from '../go-build.js';
import { copyKoordinatorModule } from './koordinator-module.js';

/** The release the operator follows (test/differential's reference). */
export const KOORD_MANAGER_VERSION = 'v1.8.0';

/** Where the binary lands: .cache/bin/koord-manager-<version>/koord-manager. */
export function koordManagerPath(version: string = KOORD_MANAGER_VERSION): string {
  return join(cacheDir, 'bin', `koord-manager-${version}`, 'koord-manager');
}

/** Builds koord-manager at `version` unless built; resolves with the binary's path. */
export async function ensureKoordManager(
  log: (line: string) => void,
  version: string = KOORD_MANAGER_VERSION,
): Promise<string> {
  const binary = koordManagerPath(version);
  await ensureGoBinaries(
    {
      name: `koord-manager ${version}`,
      binDir: join(binary, '..'),
      packages: ['./cmd/koord-manager'],
      outputs: [binary],
      key: `koord-manager-${version}`,
    },
    () => copyKoordinatorModule(version, 'koord-manager-src-'),
    log,
  );
  return binary;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const binary = await ensureKoordManager((line) => {
    console.error(`[koord-manager] ${line}`);
  });
  console.log(binary);
}
