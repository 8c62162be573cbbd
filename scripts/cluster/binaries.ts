/**
 * Builds the upstream binaries from their Go modules, once per pinned version (scripts/go-build.ts
 * says how every Go program here is built). The Kubernetes groups are built from the chosen
 * release's module (kubernetes-module.ts) and keyed by a digest of it, so a changed go.mod for the
 * same release rebuilds them.
 */
import { join } from 'node:path';
import { ensureGoBinaries, type GoBinaries } from '../go-build.js';
import {
  binaries,
  controlPlaneBinDir,
  containerdVersion,
  cniPluginsVersion,
  helmBinDir,
  helmClientGoVersion,
  helmModuleDir,
  helmVersion,
  kubernetesNodeBinDir,
  kubernetesVersion,
  nodeModuleDir,
  nodeRuntimeBinDir,
  prometheusVersion,
  promtoolBinDir,
  promtoolModuleDir,
} from './layout.js';
import { prepareKubernetesModule, type PreparedModule } from './kubernetes-module.js';

/** A group built from a module of ours (moduleDir), or from the release's prepared Kubernetes module. */
interface BinaryGroup extends GoBinaries {
  moduleDir?: string;
}

/** The version stamps kube-apiserver reports at /version and kubectl at `version --client`. */
function kubernetesVersionLdflags(): string[] {
  const match = /^v(\d+)\.(\d+)\./.exec(kubernetesVersion);
  if (!match) throw new Error(`cannot parse Kubernetes version ${kubernetesVersion}`);
  const [, major = '', minor = ''] = match;
  const values: Record<string, string> = {
    gitVersion: kubernetesVersion,
    gitMajor: major,
    gitMinor: minor,
    gitTreeState: 'clean',
    buildDate: '1970-01-01T00:00:00Z',
  };
  return ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version'].flatMap((pkg) =>
    Object.entries(values).map(([key, value]) => `-X ${pkg}.${key}=${value}`),
  );
}

/**
 * As helm's own release build (its Makefile) stamps them: the Kubernetes version `helm template` and
 * `helm lint` assume without a cluster is client-go's (v0.37 -> 1.37), not the 1.20 a plain `go build`
 * leaves, which no chart with a kubeVersion floor would render on; and the version `helm version` shows.
 */
function helmLdflags(): string[] {
  const match = /^v0\.(\d+)\./.exec(helmClientGoVersion);
  if (!match?.[1]) throw new Error(`cannot parse helm's client-go version ${helmClientGoVersion}`);
  const minor = match[1];
  return [
    ...['pkg/lint/rules', 'pkg/chartutil'].flatMap((pkg) => [
      `-X helm.sh/helm/v3/${pkg}.k8sVersionMajor=1`,
      `-X helm.sh/helm/v3/${pkg}.k8sVersionMinor=${minor}`,
    ]),
    `-X helm.sh/helm/v3/internal/version.version=${helmVersion}`,
  ];
}

/** The control plane: what a cluster needs to start. */
const groups: BinaryGroup[] = [
  {
    name: `control plane ${kubernetesVersion}`,
    binDir: controlPlaneBinDir,
    packages: [
      './cmd/etcd',
      'k8s.io/kubernetes/cmd/kube-apiserver',
      'k8s.io/kubernetes/cmd/kube-controller-manager',
      'k8s.io/kubernetes/cmd/kubectl',
    ],
    outputs: [binaries.etcd, binaries.kubeApiserver, binaries.kubeControllerManager, binaries.kubectl],
    ldflags: kubernetesVersionLdflags(),
  },
];

/**
 * Only what installs or renders a chart needs helm (ensureHelm), so a cluster starts once its
 * control plane is built: on a cold machine both clusters waited 56 s more for helm.
 */
const helm = {
  name: `helm ${helmVersion}`,
  moduleDir: helmModuleDir,
  binDir: helmBinDir,
  packages: ['helm.sh/helm/v3/cmd/helm'],
  outputs: [binaries.helm],
  ldflags: helmLdflags(),
} satisfies BinaryGroup;

/**
 * The node: only `cluster:up --node` builds it. kubelet, kube-scheduler and kube-proxy come from
 * the control plane's module (one Kubernetes version); containerd, the CNI plugins and the pause
 * program from a module of their own, whose dependency versions never meet Kubernetes'. Built
 * apart from the control plane, so the integration suite never waits for them; static like every
 * build here, they reuse what the control plane's build compiled.
 */
const nodeGroups: BinaryGroup[] = [
  {
    name: `node ${kubernetesVersion} (kubelet, kube-scheduler, kube-proxy)`,
    binDir: kubernetesNodeBinDir,
    packages: [
      'k8s.io/kubernetes/cmd/kubelet',
      'k8s.io/kubernetes/cmd/kube-scheduler',
      'k8s.io/kubernetes/cmd/kube-proxy',
    ],
    outputs: [binaries.kubelet, binaries.kubeScheduler, binaries.kubeProxy],
    ldflags: kubernetesVersionLdflags(),
  },
  {
    name: `node runtime (containerd ${containerdVersion}, CNI plugins ${cniPluginsVersion}, pause)`,
    moduleDir: nodeModuleDir,
    binDir: nodeRuntimeBinDir,
    packages: [
      'github.com/containerd/containerd/v2/cmd/containerd',
      'github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2',
      'github.com/containerd/containerd/v2/cmd/ctr',
      'github.com/containernetworking/plugins/plugins/main/bridge',
      'github.com/containernetworking/plugins/plugins/ipam/host-local',
      'github.com/containernetworking/plugins/plugins/main/loopback',
      'github.com/containernetworking/plugins/plugins/meta/portmap',
      './cmd/pause',
    ],
    outputs: [binaries.containerd, binaries.containerdShim, binaries.ctr, binaries.pause].concat(
      ['bridge', 'host-local', 'loopback', 'portmap'].map((plugin) => join(nodeRuntimeBinDir, plugin)),
    ),
  },
];

/** Only the alert-rule tests need promtool, so starting the cluster does not build it. */
const promtool = {
  name: `promtool ${prometheusVersion}`,
  moduleDir: promtoolModuleDir,
  binDir: promtoolBinDir,
  packages: ['github.com/prometheus/prometheus/cmd/promtool'],
  outputs: [binaries.promtool],
  // Every service-discovery plugin (each cloud's SDK, client-go): half of Prometheus' dependencies,
  // and nothing `promtool check rules` or `test rules` uses.
  tags: ['remove_all_sd'],
} satisfies BinaryGroup;

/**
 * Builds the control plane's binaries where missing (the node's too when `node` is set); a second
 * call with the same versions does nothing. Helm and promtool are built by what uses them.
 */
export async function ensureBinaries(
  log: (line: string) => void,
  { node = false }: { node?: boolean } = {},
): Promise<void> {
  let kubernetes: PreparedModule | undefined;
  for (const group of node ? [...groups, ...nodeGroups] : groups) {
    if (group.moduleDir !== undefined) {
      await ensureFromOwnModule({ ...group, moduleDir: group.moduleDir }, log);
      continue;
    }
    kubernetes ??= await prepareKubernetesModule(kubernetesVersion, log);
    const { dir, digest } = kubernetes;
    await ensureGoBinaries({ ...group, key: digest }, () => Promise.resolve({ dir }), log);
  }
}

/** Builds a group of a module of ours unless it is already built (another process's build waited for). */
async function ensureFromOwnModule(
  group: BinaryGroup & { moduleDir: string },
  log: (line: string) => void,
): Promise<void> {
  await ensureGoBinaries(group, () => Promise.resolve({ dir: group.moduleDir }), log);
}

/** Builds helm unless this version is already built; resolves with its path. */
export async function ensureHelm(log: (line: string) => void = () => undefined): Promise<string> {
  await ensureFromOwnModule(helm, log);
  return binaries.helm;
}

/** Builds promtool unless this version is already built; resolves with its path. */
export async function ensurePromtool(log: (line: string) => void): Promise<string> {
  await ensureFromOwnModule(promtool, log);
  return binaries.promtool;
}
