/**
 * Builds the differential suite's oracle: Koordinator's webhooks at one pinned version, set up by
 * our harness (test/differential/oracle/*.go), as scripts/cluster builds Kubernetes.
 *
 * The module comes from the Go module proxy and is copied out of the module cache into a temporary
 * folder (scripts/upstream/koordinator-module.ts), and the harness is dropped into the copy as `cmd/admission-operator-oracle`:
 * built inside Koordinator's own module, its `replace` directives (k8s.io at v0.28.7,
 * controller-runtime v0.16.5, ...) apply exactly as in koord-manager's build. The binary goes to a
 * temporary folder under .cache/bin and is renamed into place, keyed by the version and the
 * harness's content, so an interrupted build is never reused and a changed harness rebuilds.
 */
import { createHash } from 'node:crypto';
import { cp, mkdir, readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheDir } from '../../scripts/cluster/layout.js';
import { ensureGoBinaries } from '../../scripts/go-build.js';
import { copyKoordinatorModule } from '../../scripts/upstream/koordinator-module.js';

/**
 * The Koordinator releases the suite compares against, the reference first: one oracle each, built
 * from the same harness (it compiles against both releases' controller-runtime).
 */
export const KOORDINATOR_VERSIONS = ['v1.8.0', 'v1.7.0'] as const;
export type KoordinatorVersion = (typeof KOORDINATOR_VERSIONS)[number];
/** The release the operator follows, compared against unless another is asked for. */
export const KOORDINATOR_VERSION: KoordinatorVersion = 'v1.8.0';

const HARNESS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'oracle');
/** Where the harness goes inside the module copy. */
const HARNESS_PACKAGE = 'cmd/admission-operator-oracle';
const BINARY = 'koordinator-oracle';

/** The harness's Go files, sorted by name. */
async function harnessFiles(): Promise<string[]> {
  return (await readdir(HARNESS_DIR)).filter((name) => name.endsWith('.go')).sort();
}

/** The cache key: the pinned version and a digest of the harness's files. */
async function oracleKey(version: KoordinatorVersion): Promise<string> {
  const hash = createHash('sha256');
  for (const name of await harnessFiles()) {
    hash.update(`${name}\0`);
    hash.update(await readFile(join(HARNESS_DIR, name)));
    hash.update('\0');
  }
  return `koordinator-${version}-oracle-${hash.digest('hex').slice(0, 12)}`;
}

/**
 * Builds the oracle unless this version and harness are built; resolves with the binary's path.
 * DIFFERENTIAL_ORACLE names a binary to use instead (one built before a change to the harness).
 */
export async function ensureOracle(
  log: (line: string) => void,
  version: KoordinatorVersion = KOORDINATOR_VERSION,
): Promise<string> {
  const given = process.env.DIFFERENTIAL_ORACLE;
  if (given) return given;
  const binDir = join(cacheDir, 'bin', await oracleKey(version));
  const binary = join(binDir, BINARY);
  await ensureGoBinaries(
    {
      name: `Koordinator ${version} oracle`,
      binDir,
      packages: [`./${HARNESS_PACKAGE}`],
      outputs: [binary],
    },
    async () => {
      // The module cache is read-only: the copy must take the harness, go.sum updates (-mod=mod)
      // and, at the end, its own removal.
      const source = await copyKoordinatorModule(version, 'koordinator-oracle-src-');
      const target = join(source.dir, HARNESS_PACKAGE);
      await mkdir(target, { recursive: true });
      for (const name of await harnessFiles()) await cp(join(HARNESS_DIR, name), join(target, name));
      return source;
    },
    log,
  );
  return binary;
}
