/**
 * `npm start`: the operator from a checkout. It is the image's entry point plus one thing the
 * image must never carry: with neither $KUBECONFIG nor an in-cluster config, it starts (or joins)
 * the local control plane of `scripts/cluster/` and applies the CRDs to it.
 */
// First: an unsupported Node.js gets one line saying so, not a dependency's stack trace.
import './runtime/require-node.js';
import { join } from 'node:path';
import { runSubcommand } from '../operator/cli/dispatch.js';
import { startOperatorProcess, type LocalCluster } from '../operator/startup.js';
import { startCluster } from './cluster/control-plane.js';
import { kubeconfigPath, repoRoot } from './cluster/layout.js';

async function startLocalCluster(log: (line: string) => void): Promise<LocalCluster> {
  const { state } = await startCluster(log);
  const client = state.webhookClient;
  return {
    kubeconfigPath,
    server: state.server,
    crdsDir: join(repoRoot, 'crds'),
    webhookClient: client ? { caFile: client.caFile, subject: client.subject } : undefined,
  };
}

// As the image's entry point: `npm start -- --version` (or a subcommand) answers and exits.
if (!(await runSubcommand(process.argv.slice(2))))
  await startOperatorProcess({ argv: process.argv.slice(2), env: process.env, startLocalCluster });
