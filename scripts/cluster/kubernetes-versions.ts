/**
 * Which Kubernetes release the local cluster runs, and the releases the project is tested on.
 *
 * Each tested release has its Go module committed under `scripts/cluster/kubernetes/v<version>/`
 * (go.mod and go.sum): the floor the operator supports and the newest release, both run by CI
 * (docs/development.md). The newest committed one is the default. Any other release builds too,
 * from a module generated on first use (kubernetes-module.ts), and is said to be untested.
 *
 * The release is chosen with `--kubernetes=<version>` (cluster:up, cluster:build, test:integration,
 * test:e2e) or `CLUSTER_KUBERNETES_VERSION`, which the option sets so that the processes a run
 * starts (the test files, the scripts they call) build and use the same binaries.
 *
 * This module imports nothing of the cluster's layout: an entry point reads its option before the
 * layout, which resolves the version once, is loaded.
 */
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const KUBERNETES_VERSION_ENV = 'CLUSTER_KUBERNETES_VERSION';
const OPTION = '--kubernetes=';

/** The shared sources of every release's module (tools.go, cmd/etcd) and the committed go.mod files. */
export const kubernetesModulesDir = join(dirname(fileURLToPath(import.meta.url)), 'kubernetes');

export interface Release {
  major: number;
  minor: number;
  patch: number;
}

const RELEASE = /^v?(\d+)\.(\d+)\.(\d+)$/;

/** `1.30.14` or `v1.30.14`; undefined for anything else (a pre-release, a minor alone). */
export function parseRelease(text: string): Release | undefined {
  const match = RELEASE.exec(text.trim());
  if (!match) return undefined;
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]) };
}

/** As the Go module proxy and /version name it: `v1.30.14`. */
export function formatRelease(release: Release): string {
  return `v${release.major}.${release.minor}.${release.patch}`;
}

export function compareReleases(a: Release, b: Release): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch;
}

/** The releases whose modules are committed, oldest first. */
export function testedReleases(dir: string = kubernetesModulesDir): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && RELEASE.test(entry.name) && entry.name.startsWith('v'))
    .map((entry) => parseRelease(entry.name) as Release)
    .sort(compareReleases)
    .map(formatRelease);
}

/** The default: the newest tested release. */
export function defaultRelease(): string {
  const newest = testedReleases().at(-1);
  if (!newest) throw new Error(`no Kubernetes module is committed under ${kubernetesModulesDir}`);
  return newest;
}

/** The release $CLUSTER_KUBERNETES_VERSION names, else the default; a clear error for anything else. */
export function selectedRelease(env: NodeJS.ProcessEnv = process.env): string {
  const value = env[KUBERNETES_VERSION_ENV];
  if (value === undefined || value === '') return defaultRelease();
  const release = parseRelease(value);
  if (!release) {
    throw new Error(
      `${KUBERNETES_VERSION_ENV}=${value.slice(0, 64)} (or --kubernetes) must name a Kubernetes release as 1.30.14`,
    );
  }
  return formatRelease(release);
}

export const CLUSTER_INSTANCE_ENV = 'CLUSTER_INSTANCE';

/** Which cluster of the release a process uses ($CLUSTER_INSTANCE: 1 to 9; 1 unless set). */
export function selectedInstance(env: NodeJS.ProcessEnv = process.env): number {
  const value = env[CLUSTER_INSTANCE_ENV];
  if (value === undefined || value === '') return 1;
  if (!/^[1-9]$/.test(value))
    throw new Error(`${CLUSTER_INSTANCE_ENV}=${value.slice(0, 64)} must be a number from 1 to 9`);
  return Number(value);
}

/**
 * Takes `--kubernetes=<version>` out of `args` into $CLUSTER_KUBERNETES_VERSION; returns the other
 * arguments. Throws a one-line error for a malformed option or variable, before anything is built.
 */
export function takeKubernetesOption(
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): string[] {
  const rest: string[] = [];
  for (const arg of args) {
    if (!arg.startsWith(OPTION)) {
      rest.push(arg);
      continue;
    }
    const value = arg.slice(OPTION.length);
    const release = parseRelease(value);
    if (!release) throw new Error(`${OPTION}${value.slice(0, 64)}: name a Kubernetes release as 1.30.14`);
    env[KUBERNETES_VERSION_ENV] = formatRelease(release);
  }
  selectedRelease(env);
  return rest;
}
