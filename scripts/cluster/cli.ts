/**
 * `npm run cluster:up | cluster:down | cluster:build`: the local control plane from the
 * command line; with `--node` (`npm run cluster:up -- --node`), also the node that runs pods.
 */
import { ensureBinaries } from './binaries.js';
import { clusterStatus, logTails, startCluster, stopCluster } from './control-plane.js';
import { binaries, kubeconfigPath, logsDir } from './layout.js';

const log = (line: string): void => {
  console.log(line);
};

async function main(command: string | undefined, flags: string[]): Promise<void> {
  const unknown = flags.filter((flag) => flag !== '--node');
  if (unknown.length > 0) {
    console.error(`unknown option ${unknown.join(' ')}; usage: tsx scripts/cluster/cli.ts up|build [--node]`);
    process.exitCode = 2;
    return;
  }
  const node = flags.includes('--node');
  switch (command) {
    case 'build':
      await ensureBinaries(log, { node });
      log('binaries are built');
      return;
    case 'up': {
      const started = Date.now();
      try {
        const { state, startedNow } = await startCluster(log, { node });
        log(
          startedNow
            ? `cluster is up at ${state.server} (${((Date.now() - started) / 1000).toFixed(1)} s)`
            : `cluster is already up at ${state.server}; nothing to do`,
        );
      } catch (error) {
        console.error(`cluster failed to start: ${(error as Error).message}\n${await logTails()}`);
        process.exitCode = 1;
        return;
      }
      log(`\nUse it with:\n  export KUBECONFIG=${kubeconfigPath}\n  ${binaries.kubectl} get namespaces`);
      log(`Logs: ${logsDir}\nStop it with: npm run cluster:down`);
      return;
    }
    case 'down':
      log((await stopCluster(log)) ? 'cluster stopped and its data removed' : 'no cluster was running');
      return;
    case 'status': {
      const status = await clusterStatus();
      log(status.running ? `running at ${status.state?.server ?? '?'}` : `not running: ${status.reason}`);
      process.exitCode = status.running ? 0 : 1;
      return;
    }
    default:
      console.error('usage: tsx scripts/cluster/cli.ts up|down|status|build [--node]');
      process.exitCode = 2;
  }
}

await main(process.argv[2], process.argv.slice(3));
