/**
 * The local cluster's node, as Kubernetes' own hack/local-up-cluster.sh runs one on a single host:
 * containerd (runc from the machine's package), the kubelet, kube-scheduler and kube-proxy in
 * iptables mode, every one a detached process recorded like the control plane's. `cluster:down`
 * stops them and removes what they made: containers, sandboxes' network namespaces, mounts,
 * the bridge and kube-proxy's rules.
 *
 * What this machine needs of them (found by running them here):
 * - The host runs cgroup v1, which kubelet 1.35 and later refuse unless `failCgroupV1: false`; there is no
 *   systemd, so the cgroup driver is cgroupfs for the kubelet and runc alike.
 * - Root lacks CAP_SYS_RESOURCE, so runc cannot give a sandbox the OOM score -998 containerd
 *   asks for ("failed to update /proc/self/oom_score_adj: Permission denied", seen as "can't get
 *   final child's PID from pipe: EOF"): containerd runs with `restrict_oom_score_adj = true`.
 * - No registry: the sandbox image is built here (pause-image.ts), and every pod's image must be
 *   imported into containerd's k8s.io namespace (`importImage`).
 * - There is no /lib/modules: nothing can be modprobed, so kube-proxy runs in iptables mode
 *   (the nat table and br_netfilter are built in) and touches no conntrack sysctl.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, readlink, rm, rmdir, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { stringify } from 'yaml';
import { parseRelease } from './kubernetes-versions.js';
import {
  binaries,
  cniBinDir,
  containerdRootDir,
  kubernetesVersion,
  logsDir,
  nodeDir,
  nodeRunDir,
} from './layout.js';
import {
  cniConfig,
  nodeNetwork,
  ownsNodeHost,
  removeKubeletChains,
  run,
  tearDownNodeNetwork,
} from './node-network.js';
import { buildPauseImageArchive, pauseImage } from './pause-image.js';
import type { NodePki } from './pki.js';
import { isAlive, startProcess, stopProcesses, waitFor, type ClusterProcess, type Log } from './processes.js';

export const containerdSocket = join(nodeRunDir, 'containerd', 'containerd.sock');
const containerdStateDir = join(nodeRunDir, 'containerd');
/** runc's state for the pods' containers: listed at `down` to remove any the shims left. */
const runcRoot = join(nodeRunDir, 'runc');
const kubeletRootDir = join(nodeDir, 'kubelet');
const cniConfDir = join(nodeDir, 'cni');
const podLogsDir = join(logsDir, 'pods');
/** Where the kubelet links every container's log, whatever podLogsDir says. */
const containerLogLinksDir = '/var/log/containers';
const CRI_NAMESPACE = 'k8s.io';

/** The node's processes, in start order; `down` stops them in reverse before the control plane. */
export const nodeProcessNames = ['containerd', 'kubelet', 'kube-scheduler', 'kube-proxy'] as const;

export interface NodeKubeconfigs {
  kubelet: string;
  scheduler: string;
  proxy: string;
}

export interface NodeStart {
  caCert: string;
  pki: NodePki;
  kubeconfigs: NodeKubeconfigs;
  /** Free loopback/node ports: kubelet, kubelet healthz, scheduler, kube-proxy healthz and metrics. */
  ports: [number, number, number, number, number];
  /** Records a started process in the cluster's state, so `down` finds it even if `up` fails later. */
  started: (proc: ClusterProcess & { exited: Promise<string> }) => Promise<void>;
  exited: () => Promise<string>[];
  /** True once the API server reports the Node Ready. */
  nodeReady: () => Promise<boolean>;
  log: Log;
}

function runcBinary(): string {
  for (const dir of (process.env.PATH ?? '/usr/sbin:/usr/bin').split(':')) {
    const candidate = join(dir, 'runc');
    if (dir && existsSync(candidate)) return candidate;
  }
  for (const candidate of ['/usr/sbin/runc', '/usr/bin/runc']) if (existsSync(candidate)) return candidate;
  throw new Error('the node needs runc (apt-get install runc)');
}

function containerdConfig(): string {
  const cri = "plugins.'io.containerd.cri.v1.runtime'";
  return [
    'version = 3',
    `root = ${JSON.stringify(containerdRootDir)}`,
    `state = ${JSON.stringify(containerdStateDir)}`,
    '[grpc]',
    `  address = ${JSON.stringify(containerdSocket)}`,
    // The NRI socket would sit at a fixed path under /var/run; nothing here uses NRI.
    "[plugins.'io.containerd.nri.v1.nri']",
    '  disable = true',
    "[plugins.'io.containerd.cri.v1.images']",
    "  snapshotter = 'overlayfs'",
    "[plugins.'io.containerd.cri.v1.images'.pinned_images]",
    `  sandbox = ${JSON.stringify(pauseImage)}`,
    `[${cri}]`,
    '  restrict_oom_score_adj = true',
    // Sandboxes' network namespaces under containerd's state, not the host's /var/run/netns.
    '  netns_mounts_under_state_dir = true',
    `[${cri}.cni]`,
    `  bin_dirs = [${JSON.stringify(cniBinDir)}]`,
    `  conf_dir = ${JSON.stringify(cniConfDir)}`,
    `[${cri}.containerd.runtimes.runc]`,
    "  runtime_type = 'io.containerd.runc.v2'",
    `[${cri}.containerd.runtimes.runc.options]`,
    `  BinaryName = ${JSON.stringify(runcBinary())}`,
    `  Root = ${JSON.stringify(runcRoot)}`,
    '  SystemdCgroup = false',
    '',
  ].join('\n');
}

/**
 * The kubelet of 1.31 and later has `failCgroupV1` (true by default from 1.35, KEP-5573); 1.30's
 * does not know the field and runs on cgroup v1 anyway.
 */
function cgroupV1Setting(): { failCgroupV1?: false } {
  const release = parseRelease(kubernetesVersion);
  return release && release.major === 1 && release.minor < 31 ? {} : { failCgroupV1: false };
}

function kubeletConfig(caCert: string, port: number, healthzPort: number): string {
  return stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    // cgroup v1 host: kubelet 1.35 and later refuse it unless told otherwise.
    ...cgroupV1Setting(),
    cgroupDriver: 'cgroupfs',
    failSwapOn: false,
    containerRuntimeEndpoint: `unix://${containerdSocket}`,
    address: nodeNetwork.address,
    port,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort,
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: true },
      x509: { clientCAFile: caCert },
    },
    authorization: { mode: 'Webhook' },
    podLogsDir,
    clusterDomain: 'cluster.local',
    registerNode: true,
    maxPods: 40,
    // A Secret written after its pod started reaches the pod's volume at the kubelet's next sync of
    // the pod (every minute by default): Kthena's controller-manager writes its own certificate
    // Secret once running, and was restarted by its liveness probe when that sync came too late.
    syncFrequency: '10s',
    rotateCertificates: false,
    // A shared 2-core test machine: never evict because another engineer's build filled the disk.
    evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '1%', 'imagefs.available': '1%' },
    // Images are imported, never pulled: the kubelet must never collect them.
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
  });
}

function kubeProxyConfig(kubeconfig: string, healthzPort: number, metricsPort: number): string {
  return stringify({
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    mode: 'iptables',
    clientConnection: { kubeconfig },
    hostnameOverride: nodeNetwork.nodeName,
    clusterCIDR: nodeNetwork.podSubnet,
    healthzBindAddress: `127.0.0.1:${healthzPort}`,
    metricsBindAddress: `127.0.0.1:${metricsPort}`,
    // NodePorts answer on the bridge's address only, never on the machine's outside interfaces.
    nodePortAddresses: [`${nodeNetwork.address}/32`],
    // Zero leaves the host's conntrack sysctls as they are (no modules to load, shared machine).
    conntrack: {
      maxPerCore: 0,
      min: 0,
      tcpEstablishedTimeout: '0s',
      tcpCloseWaitTimeout: '0s',
      udpTimeout: '0s',
      udpStreamTimeout: '0s',
    },
    // True would set route_localnet on the host.
    iptables: { localhostNodePorts: false },
  });
}

function ctr(args: string[]): Promise<string> {
  return run(binaries.ctr, ['--address', containerdSocket, '--namespace', CRI_NAMESPACE, ...args]);
}

/** Imports an image archive (OCI or `podman save`/`docker save` format) into the node's containerd. */
export async function importImage(archive: string): Promise<void> {
  // ctr unpacks what it imports into the overlayfs snapshotter, where the CRI finds it.
  await ctr(['images', 'import', archive]);
}

/** The names of the images the node's containerd holds, as its CRI finds them. */
export async function nodeImages(): Promise<Set<string>> {
  const names = (await ctr(['images', 'list', '--quiet'])).split('\n').map((line) => line.trim());
  return new Set(names.filter((name) => name !== ''));
}

/** Gives an image the node holds another name: the same content, nothing imported. */
export async function tagNodeImage(source: string, target: string): Promise<void> {
  await ctr(['images', 'tag', '--force', source, target]);
}

/** The host pid of a running container's first process (the end-to-end suite kills containers with it). */
export async function containerPid(containerId: string): Promise<number> {
  for (const line of (await ctr(['tasks', 'list'])).split('\n')) {
    const [id, pid, status] = line.trim().split(/\s+/);
    if (id === containerId && status === 'RUNNING') return Number(pid);
  }
  throw new Error(`container ${containerId} has no running task`);
}

/** Starts containerd, the kubelet, kube-scheduler and kube-proxy, and waits for the Node to be Ready. */
export async function startNode(options: NodeStart): Promise<void> {
  const { caCert, kubeconfigs, log, started, exited } = options;
  const [kubeletPort, kubeletHealthzPort, schedulerPort, proxyHealthzPort, proxyMetricsPort] = options.ports;
  await mkdir(nodeDir, { recursive: true });
  await mkdir(cniConfDir, { recursive: true });
  await mkdir(podLogsDir, { recursive: true });
  await mkdir(containerdRootDir, { recursive: true });

  const containerdToml = join(nodeDir, 'containerd.toml');
  await writeFile(containerdToml, containerdConfig());
  // containerd finds its runc shim on PATH.
  const containerd = startProcess('containerd', binaries.containerd, ['--config', containerdToml], {
    ...process.env,
    PATH: `${dirname(binaries.containerdShim)}:${process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin'}`,
  });
  await started(containerd);
  await waitFor(
    'containerd',
    async () => {
      await ctr(['version']);
      return true;
    },
    exited(),
  );
  await importImage(await buildPauseImageArchive(binaries.pause, nodeDir));
  log(`containerd ready at ${containerdSocket} (sandbox image ${pauseImage} imported)`);

  // Before the kubelet: the runtime reports its network ready only once a CNI config exists.
  await writeFile(
    join(cniConfDir, '10-local-node.conflist'),
    `${JSON.stringify(cniConfig(join(nodeDir, 'cni-ipam')), null, 2)}\n`,
  );
  const kubeletYaml = join(nodeDir, 'kubelet.yaml');
  await writeFile(kubeletYaml, kubeletConfig(caCert, kubeletPort, kubeletHealthzPort));
  await started(
    startProcess('kubelet', binaries.kubelet, [
      `--config=${kubeletYaml}`,
      `--kubeconfig=${kubeconfigs.kubelet}`,
      `--root-dir=${kubeletRootDir}`,
      `--hostname-override=${nodeNetwork.nodeName}`,
      `--node-ip=${nodeNetwork.address}`,
      '--v=1',
    ]),
  );
  await started(
    startProcess('kube-scheduler', binaries.kubeScheduler, [
      `--kubeconfig=${kubeconfigs.scheduler}`,
      `--authentication-kubeconfig=${kubeconfigs.scheduler}`,
      `--authorization-kubeconfig=${kubeconfigs.scheduler}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${schedulerPort}`,
      '--leader-elect=false',
      '--profiling=false',
    ]),
  );
  const proxyYaml = join(nodeDir, 'kube-proxy.yaml');
  await writeFile(proxyYaml, kubeProxyConfig(kubeconfigs.proxy, proxyHealthzPort, proxyMetricsPort));
  await started(startProcess('kube-proxy', binaries.kubeProxy, [`--config=${proxyYaml}`]));
  await waitFor(`Node ${nodeNetwork.nodeName} Ready`, options.nodeReady, exited());
  log(`node ${nodeNetwork.nodeName} Ready at ${nodeNetwork.address}`);
}

/** Mount points under any of `roots`, deepest first (read from this process's mount table). */
async function mountsUnder(roots: string[]): Promise<string[]> {
  const table = await readFile('/proc/self/mountinfo', 'utf8');
  const points = table
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .map((point) =>
      point.replace(/\\(\d{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8))),
    )
    .filter((point) => roots.some((root) => point === root || point.startsWith(`${root}/`)));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

/** Removes the cgroups the kubelet made for pods (empty once their processes are gone). */
async function removePodCgroups(): Promise<void> {
  const remove = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      if (entry.isDirectory()) await remove(join(dir, entry.name));
    }
    await rmdir(dir).catch(() => undefined);
  };
  for (const controller of await readdir('/sys/fs/cgroup').catch(() => [])) {
    const kubepods = join('/sys/fs/cgroup', controller, 'kubepods');
    if (existsSync(kubepods)) await remove(kubepods);
  }
}

/**
 * Stops the node's processes and removes what they made. Pods' containers are killed through
 * containerd while it still runs (their shims unmount the root filesystems); whatever a crash
 * left is removed by hand: shims of this node's binary, runc containers in its own runc root,
 * mounts under its folders (network namespaces included), the bridge and kube-proxy's rules.
 */
export async function stopNode(processes: ClusterProcess[], log: Log): Promise<void> {
  const byName = (name: string) => processes.filter((proc) => proc.name === name);
  await stopProcesses(['kube-proxy', 'kube-scheduler', 'kubelet'].flatMap(byName), log);
  const containerd = byName('containerd');
  if (!(await ownsNodeHost())) {
    // Another checkout's node runs here now: its containers, mounts and bridge are not ours.
    await stopProcesses(containerd, log);
    return;
  }
  if (containerd.some(isAlive)) {
    const tasks = (await ctr(['tasks', 'list', '--quiet']).catch(() => '')).split('\n').filter(Boolean);
    // containerd's CRI deletes a task itself once it exits; a delete that finds none is done.
    await Promise.all(
      tasks.map(async (task) => {
        await ctr(['tasks', 'kill', '--all', '--signal', 'SIGKILL', task]).catch(() => undefined);
        for (let attempt = 0; attempt < 50; attempt++) {
          const deleted = await ctr(['tasks', 'delete', '--force', task]).then(
            () => true,
            (error: unknown) => /not found/i.test((error as Error).message),
          );
          if (deleted) return;
          await sleep(100);
        }
      }),
    );
    const containers = (await ctr(['containers', 'list', '--quiet']).catch(() => ''))
      .split('\n')
      .filter(Boolean);
    if (containers.length > 0) await ctr(['containers', 'delete', ...containers]).catch(() => undefined);
    if (tasks.length > 0) log(`removed ${tasks.length} pod containers and sandboxes`);
  }
  await stopProcesses(containerd, log);
  await killLeftoverShims(log);
  if (existsSync(runcRoot)) {
    const left = (await run(runcBinary(), ['--root', runcRoot, 'list', '--quiet']).catch(() => ''))
      .split('\n')
      .filter(Boolean);
    for (const id of left)
      await run(runcBinary(), ['--root', runcRoot, 'delete', '--force', id]).catch(() => undefined);
  }
  for (const point of await mountsUnder([nodeRunDir, nodeDir, containerdRootDir])) {
    await run('umount', ['--lazy', point]).catch((error: unknown) => {
      log(`could not unmount ${point}: ${(error as Error).message}`);
    });
  }
  await removePodCgroups();
  await run(binaries.kubeProxy, ['--cleanup']).catch(() => undefined);
  await removeKubeletChains();
  await tearDownNodeNetwork();
  await removeContainerLogLinks();
  await rm(nodeRunDir, { recursive: true, force: true });
  await rm(nodeDir, { recursive: true, force: true });
}

/** Shim processes of this node's shim binary only: nothing another runtime on the machine started. */
async function killLeftoverShims(log: Log): Promise<void> {
  for (const entry of await readdir('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const proc = { name: 'containerd-shim', pid, binary: binaries.containerdShim };
    if (isAlive(proc)) {
      process.kill(pid, 'SIGKILL');
      log(`killed a leftover containerd shim (pid ${pid})`);
    }
  }
}

async function removeContainerLogLinks(): Promise<void> {
  for (const entry of await readdir(containerLogLinksDir).catch(() => [])) {
    const link = join(containerLogLinksDir, entry);
    const target = await readlink(link).catch(() => '');
    if (target.startsWith(`${podLogsDir}/`)) await unlink(link).catch(() => undefined);
  }
}
