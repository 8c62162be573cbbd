/**
 * `npm run deploy:local [-- helm arguments]`: starts the local cluster with its node if needed,
 * builds and loads the image, and installs or upgrades the chart (deploy-local.ts).
 */
// First: an unsupported Node.js gets one line saying so, not a dependency's stack trace.
import '../runtime/require-node.js';
import { startCluster } from '../cluster/control-plane.js';
import { binaries, kubeconfigPath } from '../cluster/layout.js';
import {
  buildAndLoadImage,
  helmUpgrade,
  imageRepository,
  releaseName,
  releaseNamespace,
} from './deploy-local.js';

async function main(): Promise<void> {
  const log = (line: string): void => {
    console.log(line);
  };
  const started = Date.now();
  await startCluster(log, { node: true });
  const tag = await buildAndLoadImage(log);
  await helmUpgrade(tag, process.argv.slice(2));
  log(
    `release ${releaseName} in ${releaseNamespace} is Ready with ${imageRepository}:${tag} ` +
      `(${((Date.now() - started) / 1000).toFixed(1)} s)\n` +
      `  KUBECONFIG=${kubeconfigPath} ${binaries.kubectl} get pods -n ${releaseNamespace} -o wide`,
  );
}

await main().catch((error: unknown) => {
  console.error(`deploy:local failed: ${(error as Error).message}`);
  process.exitCode = 1;
});
