/**
 * Where the local control plane keeps its binaries, data and logs, and which upstream
 * versions it pins (read from the Go modules, so bumping a go.mod is the whole upgrade).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout this file belongs to, whether it runs from source or compiled into dist/. */
function findRepoRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${start}`);
  }
}

export const repoRoot = findRepoRoot(dirname(fileURLToPath(import.meta.url)));
export const clusterModuleDir = join(repoRoot, 'scripts', 'cluster');
export const helmModuleDir = join(clusterModuleDir, 'helm');
export const promtoolModuleDir = join(clusterModuleDir, 'promtool');

export const cacheDir = join(repoRoot, '.cache');
export const clusterDir = join(cacheDir, 'cluster');
export const logsDir = join(clusterDir, 'logs');
export const pkiDir = join(clusterDir, 'pki');
export const etcdDataDir = join(clusterDir, 'etcd');
export const stateFile = join(clusterDir, 'state.json');
export const lockFile = join(cacheDir, 'cluster.lock');
export const kubeconfigPath = join(clusterDir, 'kubeconfig');
export const controllerManagerKubeconfigPath = join(clusterDir, 'controller-manager.kubeconfig');

function requiredVersion(goModPath: string, modulePath: string): string {
  const goMod = readFileSync(goModPath, 'utf8');
  const escaped = modulePath.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const match = new RegExp(`^\\s*(?:require\\s+)?${escaped}\\s+(v\\S+)`, 'm').exec(goMod);
  if (!match?.[1]) throw new Error(`${goModPath} does not require ${modulePath}`);
  return match[1];
}

export const kubernetesVersion = requiredVersion(join(clusterModuleDir, 'go.mod'), 'k8s.io/kubernetes');
export const etcdVersion = requiredVersion(join(clusterModuleDir, 'go.mod'), 'go.etcd.io/etcd/server/v3');
export const helmVersion = requiredVersion(join(helmModuleDir, 'go.mod'), 'helm.sh/helm/v3');
export const prometheusVersion = requiredVersion(
  join(promtoolModuleDir, 'go.mod'),
  'github.com/prometheus/prometheus',
);

export const controlPlaneBinDir = join(
  cacheDir,
  'bin',
  `kubernetes-${kubernetesVersion}-etcd-${etcdVersion}`,
);
export const helmBinDir = join(cacheDir, 'bin', `helm-${helmVersion}`);
export const promtoolBinDir = join(cacheDir, 'bin', `promtool-${prometheusVersion}`);

export const binaries = {
  etcd: join(controlPlaneBinDir, 'etcd'),
  kubeApiserver: join(controlPlaneBinDir, 'kube-apiserver'),
  kubeControllerManager: join(controlPlaneBinDir, 'kube-controller-manager'),
  kubectl: join(controlPlaneBinDir, 'kubectl'),
  helm: join(helmBinDir, 'helm'),
  promtool: join(promtoolBinDir, 'promtool'),
} as const;
