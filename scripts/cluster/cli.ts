/**
 * `npm run cluster:up | cluster:down | cluster:build`: the local control plane from the
 * command line; with `--node` (`npm run cluster:up -- --node`), also the node that runs pods;
 * with `--kubernetes=1.30.14`, that Kubernetes release instead of the default (the newest tested).
 *
 *   tsx scripts/cluster/cli.ts versions         the tested releases, and newer ones the Go module proxy has
 *   tsx scripts/cluster/cli.ts module 1.37.3    commits a release's Go module (makes it a tested release)
 */
// First: an unsupported Node.js gets one line saying so, not a dependency's stack trace.
import '../runtime/require-node.js';
import { takeKubernetesOption } from './kubernetes-versions.js';

const USAGE =
  'usage: tsx scripts/cluster/cli.ts up|down|status|build [--node] [--kubernetes=1.30.14] | build --promtool | versions | module <version>';

let args: string[];
try {
  args = takeKubernetesOption(process.argv.slice(2));
} catch (error) {
  console.error(`${(error as Error).message}\n${USAGE}`);
  process.exit(2);
}
// After the option is read: the layout resolves the release once, when it is loaded.
const { runClusterCommand } = await import('./commands.js');
process.exitCode = await runClusterCommand(args[0], args.slice(1), USAGE);
