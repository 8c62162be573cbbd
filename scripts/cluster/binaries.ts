/**
 * Builds the upstream binaries from their Go modules, once per pinned version.
 *
 * A group of binaries is built into a temporary folder and renamed into place, so an
 * interrupted build never leaves a half-written binary that a later run would trust. The
 * Kubernetes groups are built from the chosen release's module (kubernetes-module.ts) and keyed by
 * a digest of it, so a changed go.mod for the same release rebuilds them.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  binaries,
  cacheDir,
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

interface BinaryGroup {
  name: string;
  /** The module's folder; absent for the Kubernetes groups, built from the release's prepared module. */
  moduleDir?: string;
  binDir: string;
  packages: string[];
  outputs: string[];
  ldflags: string[];
  env?: Record<string, string>;
}

const COMPLETE_STAMP = '.complete';

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
  {
    name: 'helm',
    moduleDir: helmModuleDir,
    binDir: helmBinDir,
    packages: ['helm.sh/helm/v3/cmd/helm'],
    outputs: [binaries.helm],
    ldflags: helmLdflags(),
  },
];

/**
 * The node: only `cluster:up --node` builds it. kubelet, kube-scheduler and kube-proxy come from
 * the control plane's module (one Kubernetes version); containerd, the CNI plugins and the pause
 * program from a module of their own, whose dependency versions never meet Kubernetes'. Both
 * are static (CGO_ENABLED=0), as Kubernetes' and containerd's own releases of them are.
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
    env: { CGO_ENABLED: '0' },
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
    ldflags: [],
    env: { CGO_ENABLED: '0' },
  },
];

/** Only the alert-rule tests need promtool, so starting the cluster does not build it. */
const promtool: BinaryGroup = {
  name: `promtool ${prometheusVersion}`,
  moduleDir: promtoolModuleDir,
  binDir: promtoolBinDir,
  packages: ['github.com/prometheus/prometheus/cmd/promtool'],
  outputs: [binaries.promtool],
  ldflags: [],
};

/** Built, and (for a Kubernetes group) from the module whose digest is `digest`. */
function isBuilt(group: BinaryGroup, digest?: string): boolean {
  const stamp = join(group.binDir, COMPLETE_STAMP);
  if (!existsSync(stamp) || !group.outputs.every((output) => existsSync(output))) return false;
  return digest === undefined || readFileSync(stamp, 'utf8').includes(digest);
}

function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, {
      cwd,
      stdio: 'inherit',
      env: { ...process.env, GOFLAGS: '-mod=mod', ...env },
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0) resolvePromise();
      else reject(new Error(`${command} ${args.join(' ')} failed (${signal ?? `exit ${code}`})`));
    });
  });
}

async function build(
  group: BinaryGroup,
  moduleDir: string,
  log: (line: string) => void,
  digest?: string,
): Promise<void> {
  const started = Date.now();
  log(`building ${group.name} from Go modules (a cold build takes many minutes on 2 cores)...`);
  await mkdir(dirname(group.binDir), { recursive: true });
  const staging = await mkdtemp(join(cacheDir, 'bin', '.build-'));
  try {
    const ldflags = ['-s', '-w', ...group.ldflags].join(' ');
    await run(
      'go',
      ['build', `-ldflags=${ldflags}`, '-o', `${staging}/`, ...group.packages],
      moduleDir,
      group.env,
    );
    await writeFile(
      join(staging, COMPLETE_STAMP),
      `${new Date().toISOString()}${digest ? ` ${digest}` : ''}\n`,
    );
    await rm(group.binDir, { recursive: true, force: true });
    await rename(staging, group.binDir);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  log(`built ${group.name} in ${Math.round((Date.now() - started) / 1000)} s`);
}

/**
 * Builds whatever binaries are missing (the node's too when `node` is set); a second call with
 * the same versions does nothing.
 */
export async function ensureBinaries(
  log: (line: string) => void,
  { node = false }: { node?: boolean } = {},
): Promise<void> {
  let kubernetes: PreparedModule | undefined;
  for (const group of node ? [...groups, ...nodeGroups] : groups) {
    if (group.moduleDir !== undefined) {
      if (!isBuilt(group)) await build(group, group.moduleDir, log);
      continue;
    }
    kubernetes ??= await prepareKubernetesModule(kubernetesVersion, log);
    if (!isBuilt(group, kubernetes.digest)) await build(group, kubernetes.dir, log, kubernetes.digest);
  }
}

/** Builds promtool unless this version is already built; resolves with its path. */
export async function ensurePromtool(log: (line: string) => void): Promise<string> {
  if (!isBuilt(promtool)) await build(promtool, promtoolModuleDir, log);
  return binaries.promtool;
}
