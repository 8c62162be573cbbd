/** The cluster commands behind cli.ts, loaded once the Kubernetes release is chosen. */
import { ensureBinaries, ensureHelm, ensurePromtool } from './binaries.js';
import { clusterStatus, logTails, startCluster, stopCluster } from './control-plane.js';
import { committedModuleDir, generateKubernetesModule } from './kubernetes-module.js';
import { newerReleases } from './kubernetes-updates.js';
import { formatRelease, parseRelease, testedReleases } from './kubernetes-versions.js';
import { binaries, kubeconfigPath, kubernetesVersion, logsDir } from './layout.js';

const log = (line: string): void => {
  console.log(line);
};

/** Runs one command; resolves with the exit code. */
export async function runClusterCommand(
  command: string | undefined,
  flags: string[],
  usage: string,
): Promise<number> {
  if (command === 'module') return writeModule(flags, usage);
  const unknown = flags.filter(
    (flag) => flag !== '--node' && !(command === 'build' && flag === '--promtool'),
  );
  if (unknown.length > 0) {
    console.error(`unknown option ${unknown.join(' ')}; ${usage}`);
    return 2;
  }
  const node = flags.includes('--node');
  switch (command) {
    case 'build':
      await ensureBinaries(log, { node });
      await ensureHelm(log);
      // The alert-rule tests' promtool, which starting a cluster never builds.
      if (flags.includes('--promtool')) await ensurePromtool(log);
      log(`binaries of Kubernetes ${kubernetesVersion} are built`);
      return 0;
    case 'up': {
      const started = Date.now();
      try {
        const { state, startedNow } = await startCluster(log, { node });
        log(
          startedNow
            ? `cluster (Kubernetes ${state.kubernetesVersion}) is up at ${state.server} (${((Date.now() - started) / 1000).toFixed(1)} s)`
            : `cluster (Kubernetes ${state.kubernetesVersion}) is already up at ${state.server}; nothing to do`,
        );
      } catch (error) {
        console.error(`cluster failed to start: ${(error as Error).message}\n${await logTails()}`);
        return 1;
      }
      log(`\nUse it with:\n  export KUBECONFIG=${kubeconfigPath}\n  ${binaries.kubectl} get namespaces`);
      log(`Logs: ${logsDir}\nStop it with: npm run cluster:down`);
      return 0;
    }
    case 'down':
      log((await stopCluster(log)) ? 'cluster stopped and its data removed' : 'no cluster was running');
      return 0;
    case 'status': {
      const status = await clusterStatus();
      log(
        status.running
          ? `running Kubernetes ${status.state?.kubernetesVersion ?? '?'} at ${status.state?.server ?? '?'}`
          : `not running: ${status.reason}`,
      );
      return status.running ? 0 : 1;
    }
    case 'versions': {
      log(
        `tested Kubernetes releases: ${testedReleases().join(', ')} (default ${testedReleases().at(-1) ?? '?'})`,
      );
      // A warning, never a failure: CI runs it, and the Go module proxy may be out of reach.
      for (const line of await newerReleases(testedReleases())) log(line);
      return 0;
    }
    default:
      console.error(usage);
      return 2;
  }
}

/** `module <version>`: generates and commits the release's go.mod and go.sum. */
async function writeModule(flags: string[], usage: string): Promise<number> {
  const release = flags.length === 1 && flags[0] !== undefined ? parseRelease(flags[0]) : undefined;
  if (!release) {
    console.error(usage);
    return 2;
  }
  const version = formatRelease(release);
  const dir = committedModuleDir(version);
  await generateKubernetesModule(version, dir, log);
  log(
    `wrote ${dir}/go.mod and go.sum: Kubernetes ${version} is now a tested release (see docs/kubernetes-versions.md)`,
  );
  return 0;
}
