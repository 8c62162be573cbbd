/**
 * Builds the Kthena oracle: Kthena v1.0.0's webhook handlers behind our small harness
 * (oracle/main.go), a Go module of its own that requires `github.com/volcano-sh/kthena v1.0.0`
 * (oracle/go.mod and go.sum). Kthena's module has no `replace` directives, so its own requirements
 * are the versions built, as in Kthena's binaries. The binary goes to a temporary folder under
 * .cache/bin and is renamed into place, keyed by the harness's content (its go.sum pins Kthena).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { cacheDir } from '../../../scripts/cluster/layout.js';
import { KTHENA_VERSION } from '../../harness/kthena-module.js';

const ORACLE_DIR = join(dirname(fileURLToPath(import.meta.url)), 'oracle');
const BINARY = 'kthena-oracle';
const COMPLETE_STAMP = '.complete';

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
  if (existsSync(join(binDir, COMPLETE_STAMP)) && existsSync(binary)) return binary;
  const started = Date.now();
  log(`building Kthena ${KTHENA_VERSION}'s webhooks (the Kthena oracle) from its Go module...`);
  await mkdir(join(cacheDir, 'bin'), { recursive: true });
  const staging = await mkdtemp(join(cacheDir, 'bin', '.build-'));
  try {
    await promisify(execFile)(
      'go',
      ['build', '-trimpath', '-ldflags=-s -w', '-o', join(staging, BINARY), '.'],
      {
        cwd: ORACLE_DIR,
        // go.sum is committed: a build never edits the harness's module files.
        env: { ...process.env, GOFLAGS: '-mod=readonly' },
        maxBuffer: 16 << 20,
      },
    );
    await writeFile(join(staging, COMPLETE_STAMP), `${new Date().toISOString()}\n`);
    await rm(binDir, { recursive: true, force: true });
    await rename(staging, binDir);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  log(`built the Kthena oracle in ${Math.round((Date.now() - started) / 1000)} s`);
  return binary;
}
