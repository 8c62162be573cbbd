/**
 * Where the local control plane keeps its binaries, data and logs, and which upstream
 * versions it pins: Kubernetes the release chosen for this process (kubernetes-versions.ts), the
 * other tools from their Go modules, so bumping a go.mod is the whole upgrade.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultRelease, selectedInstance, selectedRelease } from './kubernetes-versions.js';

/** The checkout this file belongs to, whether it runs from source or compiled into dist/. */
function findRepoRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${start}`);
  }
}

export const repoRoot = findRepoRoot(dirname(fileURLToPath(import.meta.url)));
const clusterScriptsDir = join(repoRoot, 'scripts', 'cluster');
export const helmModuleDir = join(clusterScriptsDir, 'helm');
export const promtoolModuleDir = join(clusterScriptsDir, 'promtool');
export const nodeModuleDir = join(clusterScriptsDir, 'node');

export const cacheDir = join(repoRoot, '.cache');
/** The Kubernetes release this process builds and runs (`v1.37.2`): $CLUSTER_KUBERNETES_VERSION, else the default. */
export const kubernetesVersion = selectedRelease();
/**
 * Which of this checkout's clusters of the release this process uses: $CLUSTER_INSTANCE, 1 unless
 * set. The integration suite runs its files on two at once (scripts/integration-shards.ts).
 */
export const clusterInstance = selectedInstance();
/**
 * The cluster's files: the default release's first cluster in `.cache/cluster` (its kubeconfig is
 * the one `npm start` and the docs name), another release's beside it in `.cache/cluster-v1.30.14`,
 * and a second cluster of either with `-2` after it. Each is its own, so the floor's cluster runs
 * while the default's does (CI runs their suites side by side); only one of them can have the node
 * (node-network.ts claims it).
 */
export const clusterDir = join(
  cacheDir,
  [
    'cluster',
    ...(kubernetesVersion === defaultRelease() ? [] : [kubernetesVersion]),
    ...(clusterInstance === 1 ? [] : [String(clusterInstance)]),
  ].join('-'),
);
export const logsDir = join(clusterDir, 'logs');
export const pkiDir = join(clusterDir, 'pki');
export const etcdDataDir = join(clusterDir, 'etcd');
export const stateFile = join(clusterDir, 'state.json');
export const lockFile = join(cacheDir, `${basename(clusterDir)}.lock`);
export const kubeconfigPath = join(clusterDir, 'kubeconfig');
export const controllerManagerKubeconfigPath = join(clusterDir, 'controller-manager.kubeconfig');
/** The API server's admission plugin configuration (see control-plane.ts). */
export const admissionConfigurationPath = join(clusterDir, 'admission-configuration.yaml');
/** The credentials the API server presents to admission webhooks (named by the admission configuration). */
export const webhookClientKubeconfigPath = join(clusterDir, 'webhook-client.kubeconfig');
/** The node's own files (kubelet, kube-proxy and scheduler configuration, the kubelet's root). */
export const nodeDir = join(clusterDir, 'node');
/**
 * containerd's image store outlives `cluster:down`, so the next `up --node` does not import
 * the same images again; containers, sandboxes and mounts never outlive it.
 */
export const containerdRootDir = join(cacheDir, 'containerd');
/** containerd's sockets and runtime state: on tmpfs, short enough for unix socket paths. */
export const nodeRunDir = '/run/admission-operator-node';

function requiredVersion(goModPath: string, modulePath: string): string {
  const goMod = readFileSync(goModPath, 'utf8');
  const escaped = modulePath.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const match = new RegExp(`^\\s*(?:require\\s+)?${escaped}\\s+(v\\S+)`, 'm').exec(goMod);
  if (!match?.[1]) throw new Error(`${goModPath} does not require ${modulePath}`);
  return match[1];
}

export const helmVersion = requiredVersion(join(helmModuleDir, 'go.mod'), 'helm.sh/helm/v3');
export const prometheusVersion = requiredVersion(
  join(promtoolModuleDir, 'go.mod'),
  'github.com/prometheus/prometheus',
);

/** kube-apiserver, kube-controller-manager, kubectl and etcd; the etcd is the one this release requires. */
export const controlPlaneBinDir = join(cacheDir, 'bin', `kubernetes-${kubernetesVersion}`);
/** The client-go helm is built with: its default Kubernetes version without a cluster (see binaries.ts). */
export const helmClientGoVersion = requiredVersion(join(helmModuleDir, 'go.mod'), 'k8s.io/client-go');
export const helmBinDir = join(cacheDir, 'bin', `helm-${helmVersion}-client-go-${helmClientGoVersion}`);
export const promtoolBinDir = join(cacheDir, 'bin', `promtool-${prometheusVersion}`);
export const containerdVersion = requiredVersion(
  join(nodeModuleDir, 'go.mod'),
  'github.com/containerd/containerd/v2',
);
export const cniPluginsVersion = requiredVersion(
  join(nodeModuleDir, 'go.mod'),
  'github.com/containernetworking/plugins',
);
/** kubelet, kube-scheduler and kube-proxy: the control plane's version, built apart so adding them rebuilds nothing. */
export const kubernetesNodeBinDir = join(cacheDir, 'bin', `kubernetes-node-${kubernetesVersion}`);
/** containerd, its runc shim, ctr, the CNI plugins and the pause program. */
export const nodeRuntimeBinDir = join(
  cacheDir,
  'bin',
  `node-runtime-containerd-${containerdVersion}-cni-${cniPluginsVersion}`,
);

export const binaries = {
  etcd: join(controlPlaneBinDir, 'etcd'),
  kubeApiserver: join(controlPlaneBinDir, 'kube-apiserver'),
  kubeControllerManager: join(controlPlaneBinDir, 'kube-controller-manager'),
  kubectl: join(controlPlaneBinDir, 'kubectl'),
  helm: join(helmBinDir, 'helm'),
  promtool: join(promtoolBinDir, 'promtool'),
  kubelet: join(kubernetesNodeBinDir, 'kubelet'),
  kubeScheduler: join(kubernetesNodeBinDir, 'kube-scheduler'),
  kubeProxy: join(kubernetesNodeBinDir, 'kube-proxy'),
  containerd: join(nodeRuntimeBinDir, 'containerd'),
  containerdShim: join(nodeRuntimeBinDir, 'containerd-shim-runc-v2'),
  ctr: join(nodeRuntimeBinDir, 'ctr'),
  pause: join(nodeRuntimeBinDir, 'pause'),
} as const;

/** The CNI plugins' folder: the node runtime's, where `bridge`, `host-local`, `loopback` and `portmap` are built. */
export const cniBinDir = nodeRuntimeBinDir;
