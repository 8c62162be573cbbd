/**
 * The Go module one Kubernetes release's binaries are built from: kube-apiserver,
 * kube-controller-manager, kubectl and the embedded etcd (cmd/etcd), and the node's kubelet,
 * kube-scheduler and kube-proxy.
 *
 * k8s.io/kubernetes is not made to be required: its go.mod requires its staging modules (k8s.io/api,
 * k8s.io/client-go, ...) at v0.0.0 and replaces them with folders of its own repository. A module
 * that requires it replaces each with its published v0.<minor>.<patch>, and takes the Go language
 * version and GODEBUG defaults Kubernetes itself builds with (a binary gets its main module's).
 * That is all a release's go.mod says; `go mod tidy` adds the rest, etcd at the version Kubernetes
 * requires among it (minimal version selection), so the API server and etcd agree on the wire.
 *
 * The tested releases' go.mod and go.sum are committed (kubernetes/v<version>/); any other release's
 * are generated on first use into its build folder. Either way the build folder holds a copy of the
 * go.mod, go.sum and the shared sources, and a digest of them keys the built binaries.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { cacheDir } from './layout.js';
import { kubernetesModulesDir, parseRelease } from './kubernetes-versions.js';

const execFileAsync = promisify(execFile);

const MODULE_PATH = 'github.com/admission-operator/admission-operator/scripts/cluster/kubernetes';
/** The module's own sources, the same for every release. */
const SOURCES = ['tools.go', join('cmd', 'etcd', 'main.go')];
const MODULE_FILES = ['go.mod', 'go.sum'];

export interface PreparedModule {
  /** The folder `go build` runs in. */
  dir: string;
  /** sha256 of go.mod, go.sum and the sources: what the binaries were built from. */
  digest: string;
  /** Whether the release's module is committed (a tested release). */
  tested: boolean;
}

/** Where a release's module is committed (it may not be). */
export function committedModuleDir(version: string): string {
  return join(kubernetesModulesDir, version);
}

function buildDir(version: string): string {
  return join(cacheDir, 'modules', `kubernetes-${version}`);
}

async function go(args: string[], cwd: string): Promise<string> {
  try {
    const { stdout } = await execFileAsync('go', args, {
      cwd,
      maxBuffer: 64 * 2 ** 20,
      env: { ...process.env, GOFLAGS: '-mod=mod', GOWORK: 'off' },
    });
    return stdout;
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    throw new Error(
      `go ${args.join(' ')} failed in ${cwd}: ${(stderr ?? String(error)).trim().slice(-2000)}`,
      { cause: error },
    );
  }
}

/**
 * Copies `from` to `to` unless `to` already holds the same bytes: a build running in the folder
 * (another process's, which this one waits for) must never see a file rewritten under it.
 */
async function copyIfChanged(from: string, to: string): Promise<void> {
  const content = await readFile(from);
  const current = await readFile(to).catch(() => undefined);
  if (current?.equals(content)) return;
  await mkdir(dirname(to), { recursive: true });
  await writeFile(to, content);
}

async function copySources(dir: string): Promise<void> {
  for (const file of SOURCES) await copyIfChanged(join(kubernetesModulesDir, file), join(dir, file));
}

/** Kubernetes' own go.mod at `version`, from the module cache (downloaded through the Go module proxy). */
async function kubernetesGoMod(version: string, cwd: string): Promise<string> {
  const info = JSON.parse(await go(['mod', 'download', '-json', `k8s.io/kubernetes@${version}`], cwd)) as {
    GoMod?: string;
    Error?: string;
  };
  if (info.Error || !info.GoMod) {
    throw new Error(`k8s.io/kubernetes@${version}: ${info.Error ?? 'the Go module proxy gave no go.mod'}`);
  }
  return readFile(info.GoMod, 'utf8');
}

/** The go.mod that requires k8s.io/kubernetes at `version` with its staging modules at their published versions. */
export function kubernetesModuleGoMod(version: string, kubernetesGoModText: string): string {
  const release = parseRelease(version);
  if (!release) throw new Error(`not a Kubernetes release: ${version}`);
  const lines = kubernetesGoModText.split('\n');
  const goLine = lines.find((line) => /^go \d/.test(line));
  if (!goLine) throw new Error(`k8s.io/kubernetes@${version}'s go.mod has no go line`);
  const godebug = lines.filter((line) => /^godebug\s/.test(line));
  const staging = lines
    .map((line) => /^\s*(k8s\.io\/[\w.-]+)\s+=>\s+\.\/staging\/src\//.exec(line)?.[1])
    .filter((name): name is string => name !== undefined)
    .sort();
  if (staging.length === 0)
    throw new Error(`k8s.io/kubernetes@${version}'s go.mod replaces no staging module`);
  const published = `v0.${release.minor}.${release.patch}`;
  return [
    `module ${MODULE_PATH}`,
    '',
    goLine,
    ...(godebug.length > 0 ? ['', ...godebug] : []),
    '',
    `require k8s.io/kubernetes ${version}`,
    '',
    'replace (',
    ...staging.map((name) => `\t${name} => ${name} ${published}`),
    ')',
    '',
  ].join('\n');
}

/**
 * Writes a complete go.mod and go.sum for `version` into `targetDir` (the committed folder when a
 * release becomes tested: `tsx scripts/cluster/cli.ts module 1.37.3`).
 */
export async function generateKubernetesModule(
  version: string,
  targetDir: string,
  log: (line: string) => void,
): Promise<void> {
  log(`generating the Go module for Kubernetes ${version} (go mod tidy; downloads its dependencies)...`);
  await mkdir(join(cacheDir, 'modules'), { recursive: true });
  const work = await mkdtemp(join(cacheDir, 'modules', '.generate-'));
  try {
    await copySources(work);
    await writeFile(
      join(work, 'go.mod'),
      kubernetesModuleGoMod(version, await kubernetesGoMod(version, work)),
    );
    await go(['mod', 'tidy'], work);
    await mkdir(targetDir, { recursive: true });
    for (const file of MODULE_FILES) await copyFile(join(work, file), join(targetDir, file));
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function digestOf(dir: string): Promise<string> {
  const hash = createHash('sha256');
  for (const file of [...MODULE_FILES, ...SOURCES]) {
    hash.update(`${file}\0`);
    hash.update(await readFile(join(dir, file)));
  }
  return hash.digest('hex');
}

/** The module `version` builds from, ready in its build folder (generated first when it is not committed). */
export async function prepareKubernetesModule(
  version: string,
  log: (line: string) => void,
): Promise<PreparedModule> {
  const dir = buildDir(version);
  const committed = committedModuleDir(version);
  const tested = existsSync(join(committed, 'go.mod'));
  await mkdir(dir, { recursive: true });
  if (tested) {
    for (const file of MODULE_FILES) await copyIfChanged(join(committed, file), join(dir, file));
  } else if (!MODULE_FILES.every((file) => existsSync(join(dir, file)))) {
    log(
      `Kubernetes ${version} is not one of the tested releases (scripts/cluster/kubernetes/): building it anyway`,
    );
    await generateKubernetesModule(version, dir, log);
  }
  await copySources(dir);
  return { dir, digest: await digestOf(dir), tested };
}
