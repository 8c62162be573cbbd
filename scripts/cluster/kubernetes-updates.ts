/**
 * Says when Kubernetes has released a newer patch of a tested minor, or a newer minor, than the
 * project tests on: `tsx scripts/cluster/cli.ts versions` (CI runs it). It asks the Go module proxy
 * (the releases are the tags of k8s.io/kubernetes); out of reach, it says so and nothing fails.
 */
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { compareReleases, formatRelease, parseRelease, type Release } from './kubernetes-versions.js';

const execFileAsync = promisify(execFile);
const LIST_TIMEOUT_MS = 60_000;

/** What to say, given the tested releases and the releases the proxy has (pre-releases are ignored). */
export function releaseUpdates(tested: readonly string[], available: readonly string[]): string[] {
  const releases = available
    .map(parseRelease)
    .filter((release): release is Release => release !== undefined)
    .sort(compareReleases);
  const lines: string[] = [];
  for (const text of tested) {
    const release = parseRelease(text);
    if (!release) continue;
    const newest = releases
      .filter((other) => other.major === release.major && other.minor === release.minor)
      .at(-1);
    if (newest && compareReleases(newest, release) > 0) {
      lines.push(
        `warning: Kubernetes ${formatRelease(newest)} is out, newer than the tested ${formatRelease(release)}: ` +
          `test it (tsx scripts/cluster/cli.ts module ${formatRelease(newest).slice(1)}; docs/kubernetes-versions.md)`,
      );
    }
  }
  const newestTested = tested
    .map(parseRelease)
    .filter((release): release is Release => release !== undefined)
    .sort(compareReleases)
    .at(-1);
  const newestMinor = releases.at(-1);
  if (newestTested && newestMinor && compareReleases(newestMinor, newestTested) > 0) {
    const sameMinor = newestMinor.major === newestTested.major && newestMinor.minor === newestTested.minor;
    if (!sameMinor) {
      lines.push(
        `warning: Kubernetes ${formatRelease(newestMinor)} is out, a newer minor than the newest tested ` +
          `${formatRelease(newestTested)}: test it and make it the default (docs/kubernetes-versions.md)`,
      );
    }
  }
  if (lines.length === 0 && newestTested) {
    lines.push(`the tested Kubernetes releases are the newest patches the Go module proxy has`);
  }
  return lines;
}

/** The releases of k8s.io/kubernetes the Go module proxy lists, or why they could not be read. */
async function availableReleases(): Promise<string[] | Error> {
  try {
    const { stdout } = await execFileAsync('go', ['list', '-m', '-versions', 'k8s.io/kubernetes'], {
      cwd: tmpdir(),
      timeout: LIST_TIMEOUT_MS,
      env: { ...process.env, GO111MODULE: 'on', GOFLAGS: '' },
    });
    return stdout.trim().split(/\s+/).slice(1);
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    return new Error((stderr?.trim() || (error as Error).message).split('\n')[0]?.slice(0, 300) ?? '');
  }
}

/** The lines to print about newer releases than `tested`; never throws. */
export async function newerReleases(tested: readonly string[]): Promise<string[]> {
  const available = await availableReleases();
  if (available instanceof Error) {
    return [
      `warning: could not ask the Go module proxy for Kubernetes releases (${available.message}); not checked`,
    ];
  }
  return releaseUpdates(tested, available);
}
