/**
 * Builds the Kthena oracle: Kthena v1.0.0's webhook handlers behind our small harness
 * (oracle/main.go), a Go module of its own that requires `github.com/volcano-sh/kthena v1.0.0`
 * (oracle/go.mod and go.sum). Kthena's module has no `replace` directives, so its own requirements
 * are the versions built, as in Kthena's binaries. The binary is keyed by the harness's content (its
 * go.sum pins Kthena).
 */
import { createHash } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheDir } from '../../../scripts/cluster/layout.js';
import { ensureGoBinaries } from '../../../scripts/go-build.js';
import { KTHENA_VERSION } from '../../harness/kthena-module.js';

const ORACLE_DIR = join(dirname(fileURLToPath(import.meta.url)), 'oracle');
const BINARY = 'kthena-oracle';

async function oracleKey(): Promise<string> {
  const hash = createHash('sha256');
  for (const name of (await readdir(ORACLE_DIR)).sort()) {
    hash.update(`${name}\0`);
    hash.update(await readFile(join(ORACLE_DIR, name)));
  }
  return `kthena-${KTHENA_VERSION}-oracle-${hash.digest('hex').slice(0, 12)}`;
}

/** Builds the oracle unless built; resolves with its path. KTHENA_ORACLE names a binary to use instead. */
export async function ensureKthenaOracle(log: (line: string) => void): Promise<string> {
  const given = process.env.KTHENA_ORACLE;
  if (given) return given;
  const binDir = join(cacheDir, 'bin', await oracleKey());
  const binary = join(binDir, BINARY);
  await ensureGoBinaries(
    {
      name: `Kthena ${KTHENA_VERSION} oracle`,
      binDir,
      packages: ['.'],
      outputs: [binary],
      // go.sum is committed: a build never edits the harness's module files.
      goflags: '-mod=readonly',
    },
    () => Promise.resolve({ dir: ORACLE_DIR }),
    log,
  );
  return binary;
}
