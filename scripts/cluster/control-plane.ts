/**
 * Starts and stops the local control plane: etcd, kube-apiserver and
 * kube-controller-manager on free loopback ports, as detached processes whose pids are
 * recorded so that `down` stops exactly what `up` started. With a node (node.ts), the API
 * server binds and advertises the node's bridge address instead of the loopback, so that pods
 * reach it through the `kubernetes` Service, and resolves webhook Services to their endpoints.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, readdir, rm, unlink, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureBinaries } from './binaries.js';
import {
  admissionConfigurationPath,
  binaries,
  clusterDir,
  controllerManagerKubeconfigPath,
  etcdDataDir,
  kubeconfigPath,
  kubernetesVersion,
  lockFile,
  logsDir,
  nodeDir,
  pkiDir,
  stateFile,
  webhookClientKubeconfigPath,
} from './layout.js';
import { startNode, stopNode, type NodeKubeconfigs } from './node.js';
import { claimNodeHost, nodeNetwork, setUpNodeNetwork } from './node-network.js';
import { createClusterPki, WEBHOOK_CLIENT_NAME, type ClusterPki, type NodePki } from './pki.js';
import {
  isAlive,
  pidExists,
  startProcess,
  stopProcesses,
  waitFor,
  type ClusterProcess,
  type Log,
} from './processes.js';

export type { ClusterProcess, Log } from './processes.js';

export interface ClusterState {
  kubernetesVersion: string;
  startedAt: string;
  server: string;
  kubeconfig: string;
  processes: ClusterProcess[];
  /** Whether this cluster has a node (`cluster:up --node`); absent in states written before nodes existed. */
  node?: boolean;
  /**
   * The client certificate the API server presents to every admission webhook, and the CA that
   * issued it: what an operator on this cluster verifies its callers with. Absent in states written
   * before the API server presented one (such a cluster is started anew).
   */
  webhookClient?: WebhookClient;
}

/** Where the API server's webhook client certificate lives, and the name it carries. */
export interface WebhookClient {
  caFile: string;
  certFile: string;
  keyFile: string;
  subject: string;
}

export interface ClusterOptions {
  /** Start the node too: containerd, kubelet, kube-scheduler, kube-proxy. */
  node?: boolean;
}

async function readState(): Promise<ClusterState | undefined> {
  try {
    return JSON.parse(await readFile(stateFile, 'utf8')) as ClusterState;
  } catch {
    return undefined;
  }
}

interface TlsClient {
  ca: string;
  cert: string;
  key: string;
}

async function adminTls(): Promise<TlsClient> {
  const [ca, cert, key] = await Promise.all(
    ['ca.crt', 'admin.crt', 'admin.key'].map((file) => readFile(join(pkiDir, file), 'utf8')),
  );
  return { ca: ca ?? '', cert: cert ?? '', key: key ?? '' };
}

/** GET a URL; resolves with status and body, never rejects on HTTP status. */
function get(url: string, tls?: TlsClient): Promise<{ status: number; body: string }> {
  return new Promise((resolvePromise, reject) => {
    const send = url.startsWith('https:') ? httpsRequest : httpRequest;
    const req = send(url, { method: 'GET', timeout: 5000, ...(tls ?? {}) }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        resolvePromise({ status: res.statusCode ?? 0, body });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`timeout: GET ${url}`)));
    req.on('error', reject);
    req.end();
  });
}

/** The cluster is up when every recorded process lives and the API server answers /readyz. */
export async function clusterStatus(): Promise<{ running: boolean; state?: ClusterState; reason: string }> {
  const state = await readState();
  if (!state) return { running: false, reason: 'no cluster state recorded' };
  const dead = state.processes.filter((proc) => !isAlive(proc));
  if (dead.length > 0) {
    return { running: false, state, reason: `not running: ${dead.map((proc) => proc.name).join(', ')}` };
  }
  try {
    const { status, body } = await get(`${state.server}/readyz`, await adminTls());
    if (status === 200) return { running: true, state, reason: 'ready' };
    return { running: false, state, reason: `/readyz answered ${status}: ${body.slice(0, 200)}` };
  } catch (error) {
    return { running: false, state, reason: `/readyz failed: ${(error as Error).message}` };
  }
}

/** The lowest port handed out, and the default bottom of Linux's ephemeral range. */
const LOWEST_PORT = 10_000;
const DEFAULT_EPHEMERAL_LOW = 32_768;
/** Ports this process has handed out: never handed out twice, so two callers cannot share one. */
const handedOut = new Set<number>();

/** Where the kernel's ephemeral ports (for outgoing connections and bind(0)) begin. */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > LOWEST_PORT + 1000 ? low : DEFAULT_EPHEMERAL_LOW;
  } catch {
    return DEFAULT_EPHEMERAL_LOW;
  }
}

/** Listens on `port` of the loopback, or resolves undefined when it is taken. */
function holdPort(port: number): Promise<ReturnType<typeof createServer> | undefined> {
  return new Promise((resolvePromise) => {
    const server = createServer();
    server.once('error', () => {
      resolvePromise(undefined);
    });
    server.listen(port, '127.0.0.1', () => {
      resolvePromise(server);
    });
  });
}

/**
 * `count` ports free on the loopback now, for processes about to listen on them. They lie below the
 * ephemeral range: a port from bind(0) is released before its user binds it, and meanwhile any
 * outgoing connection on this busy machine (the API server's, etcd's, the tests') may take it as
 * its local port; a port below the range is only ever taken by a listener. None is handed out twice.
 */
export async function freePorts(count: number): Promise<number[]> {
  const top = ephemeralLow();
  const held: ReturnType<typeof createServer>[] = [];
  for (let attempt = 0; held.length < count; attempt++) {
    if (attempt >= 1000) throw new Error(`no ${count} free ports between ${LOWEST_PORT} and ${top}`);
    const candidate = LOWEST_PORT + Math.floor(Math.random() * (top - LOWEST_PORT));
    if (handedOut.has(candidate)) continue;
    const server = await holdPort(candidate);
    if (!server) continue;
    handedOut.add(candidate);
    held.push(server);
  }
  const ports = held.map((server) => (server.address() as { port: number }).port);
  await Promise.all(held.map((server) => new Promise((done) => server.close(done))));
  return ports;
}

function kubeconfigYaml(
  server: string,
  user: string,
  caPem: string,
  certPem: string,
  keyPem: string,
): string {
  const b64 = (text: string): string => Buffer.from(text).toString('base64');
  // JSON is YAML; kubectl and client-node read it as a kubeconfig.
  return `${JSON.stringify(
    {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'local', cluster: { server, 'certificate-authority-data': b64(caPem) } }],
      users: [
        { name: user, user: { 'client-certificate-data': b64(certPem), 'client-key-data': b64(keyPem) } },
      ],
      contexts: [{ name: 'local', context: { cluster: 'local', user } }],
      'current-context': 'local',
    },
    null,
    2,
  )}\n`;
}

async function writeNodeKubeconfigs(server: string, caPath: string, pki: NodePki): Promise<NodeKubeconfigs> {
  const read = (path: string): Promise<string> => readFile(path, 'utf8');
  const ca = await read(caPath);
  const paths: NodeKubeconfigs = {
    kubelet: join(nodeDir, 'kubelet.kubeconfig'),
    scheduler: join(nodeDir, 'scheduler.kubeconfig'),
    proxy: join(nodeDir, 'kube-proxy.kubeconfig'),
  };
  await mkdir(nodeDir, { recursive: true });
  const users: [keyof NodeKubeconfigs, string, string, string][] = [
    ['kubelet', `system:node:${nodeNetwork.nodeName}`, pki.kubeletCert, pki.kubeletKey],
    ['scheduler', 'system:kube-scheduler', pki.schedulerCert, pki.schedulerKey],
    ['proxy', 'system:kube-proxy', pki.proxyCert, pki.proxyKey],
  ];
  for (const [key, user, cert, keyFile] of users) {
    await writeFile(paths[key], kubeconfigYaml(server, user, ca, await read(cert), await read(keyFile)), {
      mode: 0o600,
    });
  }
  return paths;
}

async function writeKubeconfigs(server: string, pki: ClusterPki): Promise<void> {
  const read = (path: string): Promise<string> => readFile(path, 'utf8');
  const ca = await read(pki.caCert);
  await writeFile(
    kubeconfigPath,
    kubeconfigYaml(server, 'admin', ca, await read(pki.adminCert), await read(pki.adminKey)),
    { mode: 0o600 },
  );
  await writeFile(
    controllerManagerKubeconfigPath,
    kubeconfigYaml(
      server,
      'system:kube-controller-manager',
      ca,
      await read(pki.controllerManagerCert),
      await read(pki.controllerManagerKey),
    ),
    { mode: 0o600 },
  );
}

/**
 * The credentials the API server presents to admission webhooks, as the Kubernetes documentation's
 * "Authenticate apiservers" configures them: a kubeconfig whose users are matched by webhook host,
 * `*` matching every host (on this cluster, only our webhooks).
 */
async function writeWebhookClientKubeconfig(pki: ClusterPki): Promise<void> {
  const b64 = async (path: string): Promise<string> => Buffer.from(await readFile(path)).toString('base64');
  const kubeconfig = {
    apiVersion: 'v1',
    kind: 'Config',
    users: [
      {
        name: '*',
        user: {
          'client-certificate-data': await b64(pki.webhookClientCert),
          'client-key-data': await b64(pki.webhookClientKey),
        },
      },
    ],
  };
  await writeFile(webhookClientKubeconfigPath, `${JSON.stringify(kubeconfig, null, 2)}\n`, { mode: 0o600 });
}

/**
 * The API server's admission plugins' configuration. Both webhook plugins present the client
 * certificate of webhook-client.kubeconfig, so an operator on this cluster verifies its callers
 * as a cluster admin's would. The critical priority classes are limited as hardened clusters limit
 * them (some managed clusters do, and Kubernetes' documentation gives this configuration): a pod
 * of either class is admitted only in a namespace whose ResourceQuota covers the class. The
 * chart's quota is then tested for real.
 */
const admissionConfiguration = (webhookKubeconfig: string): string => `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: ValidatingAdmissionWebhook
    configuration:
      apiVersion: apiserver.config.k8s.io/v1
      kind: WebhookAdmissionConfiguration
      kubeConfigFile: ${JSON.stringify(webhookKubeconfig)}
  - name: MutatingAdmissionWebhook
    configuration:
      apiVersion: apiserver.config.k8s.io/v1
      kind: WebhookAdmissionConfiguration
      kubeConfigFile: ${JSON.stringify(webhookKubeconfig)}
  - name: ResourceQuota
    configuration:
      apiVersion: apiserver.config.k8s.io/v1
      kind: ResourceQuotaConfiguration
      limitedResources:
        - resource: pods
          matchScopes:
            - scopeName: PriorityClass
              operator: In
              values: [system-node-critical, system-cluster-critical]
`;

async function launch(log: Log, { node = false }: ClusterOptions): Promise<ClusterState> {
  await rm(clusterDir, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
  await mkdir(logsDir, { recursive: true });
  const pki = await createClusterPki(
    node ? { name: nodeNetwork.nodeName, address: nodeNetwork.address } : undefined,
  );
  const [etcdClientPort, etcdPeerPort, apiserverPort, controllerManagerPort, ...nodePorts] = await freePorts(
    node ? 9 : 4,
  );
  const etcdUrl = `http://127.0.0.1:${etcdClientPort}`;
  // With a node, the API server listens on the bridge's address (on this machine only), which
  // pods reach and which the `kubernetes` Service's endpoint names.
  const apiserverAddress = node ? nodeNetwork.address : '127.0.0.1';
  const server = `https://${apiserverAddress}:${apiserverPort}`;
  const started: (ClusterProcess & { exited: Promise<string> })[] = [];
  // Before anything is set up: a refusal must not tear down another checkout's node.
  if (node) await claimNodeHost();

  const record = async (): Promise<ClusterState> => {
    const state: ClusterState = {
      kubernetesVersion,
      startedAt: new Date().toISOString(),
      server,
      kubeconfig: kubeconfigPath,
      processes: started.map(({ name, pid, binary }) => ({ name, pid, binary })),
      node,
      webhookClient: {
        caFile: pki.caCert,
        certFile: pki.webhookClientCert,
        keyFile: pki.webhookClientKey,
        subject: WEBHOOK_CLIENT_NAME,
      },
    };
    await writeFile(stateFile, `${JSON.stringify(state, null, 2)}\n`);
    return state;
  };

  try {
    if (node) await setUpNodeNetwork();
    started.push(
      startProcess('etcd', binaries.etcd, [
        `--data-dir=${etcdDataDir}`,
        `--listen-client-url=${etcdUrl}`,
        `--listen-peer-url=http://127.0.0.1:${etcdPeerPort}`,
      ]),
    );
    await record();
    await waitFor(
      'etcd /health',
      async () => (await get(`${etcdUrl}/health`)).body.includes('"health":"true"'),
      started.map((p) => p.exited),
    );
    log(`etcd ready on ${etcdUrl}`);

    await writeWebhookClientKubeconfig(pki);
    await writeFile(admissionConfigurationPath, admissionConfiguration(webhookClientKubeconfigPath));
    started.push(
      startProcess('kube-apiserver', binaries.kubeApiserver, [
        `--etcd-servers=${etcdUrl}`,
        `--admission-control-config-file=${admissionConfigurationPath}`,
        `--secure-port=${apiserverPort}`,
        `--bind-address=${apiserverAddress}`,
        `--advertise-address=${apiserverAddress}`,
        `--cert-dir=${join(clusterDir, 'apiserver')}`,
        `--tls-cert-file=${pki.apiserverCert}`,
        `--tls-private-key-file=${pki.apiserverKey}`,
        `--client-ca-file=${pki.caCert}`,
        '--service-cluster-ip-range=10.0.0.0/24',
        ...(pki.node
          ? [
              // The Node authorizer lets the kubelet read what its pods need, as in any cluster.
              '--authorization-mode=Node,RBAC',
              '--enable-admission-plugins=NodeRestriction',
              // A webhook's Service resolves to its EndpointSlices' pod addresses, which this
              // machine routes to the bridge; kube-proxy is for pods, not the API server.
              '--enable-aggregator-routing=true',
              `--kubelet-client-certificate=${pki.node.apiserverKubeletClientCert}`,
              `--kubelet-client-key=${pki.node.apiserverKubeletClientKey}`,
              '--kubelet-preferred-address-types=InternalIP',
            ]
          : [
              '--authorization-mode=RBAC',
              // Without a node nothing dials the `kubernetes` Service, and from 1.37 the API server
              // refuses a loopback advertise address for the endpoints it would write there.
              '--endpoint-reconciler-type=none',
            ]),
        '--allow-privileged=true',
        '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
        `--service-account-key-file=${pki.serviceAccountPub}`,
        `--service-account-signing-key-file=${pki.serviceAccountKey}`,
        '--profiling=false',
      ]),
    );
    await record();
    await writeKubeconfigs(server, pki);
    const tls = await adminTls();
    await waitFor(
      'kube-apiserver /readyz',
      async () => (await get(`${server}/readyz`, tls)).status === 200,
      started.map((p) => p.exited),
    );
    log(`kube-apiserver ready on ${server}`);

    started.push(
      startProcess('kube-controller-manager', binaries.kubeControllerManager, [
        `--kubeconfig=${controllerManagerKubeconfigPath}`,
        `--authentication-kubeconfig=${controllerManagerKubeconfigPath}`,
        `--authorization-kubeconfig=${controllerManagerKubeconfigPath}`,
        '--bind-address=127.0.0.1',
        `--secure-port=${controllerManagerPort}`,
        `--cert-dir=${join(clusterDir, 'controller-manager')}`,
        `--service-account-private-key-file=${pki.serviceAccountKey}`,
        `--root-ca-file=${pki.caCert}`,
        '--use-service-account-credentials=true',
        '--controllers=*',
        '--leader-elect=false',
        '--profiling=false',
      ]),
    );
    const state = await record();
    // The ServiceAccount controller creating `default` proves the controller manager works.
    await waitFor(
      'kube-controller-manager (the default ServiceAccount)',
      async () =>
        (await get(`${server}/api/v1/namespaces/default/serviceaccounts/default`, tls)).status === 200,
      started.map((p) => p.exited),
    );
    log('kube-controller-manager running');
    if (!pki.node) return state;

    const [kubeletPort, kubeletHealthzPort, schedulerPort, proxyHealthzPort, proxyMetricsPort] = nodePorts;
    if (proxyMetricsPort === undefined) throw new Error('internal: too few ports for the node');
    await startNode({
      caCert: pki.caCert,
      pki: pki.node,
      kubeconfigs: await writeNodeKubeconfigs(server, pki.caCert, pki.node),
      ports: [
        kubeletPort ?? 0,
        kubeletHealthzPort ?? 0,
        schedulerPort ?? 0,
        proxyHealthzPort ?? 0,
        proxyMetricsPort,
      ],
      started: async (proc) => {
        started.push(proc);
        await record();
      },
      exited: () => started.map((p) => p.exited),
      nodeReady: async () => {
        const { status, body } = await get(`${server}/api/v1/nodes/${nodeNetwork.nodeName}`, tls);
        if (status !== 200) return false;
        const conditions = (
          JSON.parse(body) as { status?: { conditions?: { type: string; status: string }[] } }
        ).status?.conditions;
        return conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
      },
      log,
    });
    return await record();
  } catch (error) {
    await stopAll(started, node, log);
    throw error;
  }
}

/**
 * A control plane torn down (its data removed, or started afresh) has nothing to finish gracefully:
 * an API server the node's clients still held open took the whole 15 s before SIGKILL, at the end
 * of every end-to-end run.
 */
const TEARDOWN_GRACE_MS = 2_000;

/** Stops the node (and removes what it made) before the control plane it talks to. */
async function stopAll(processes: ClusterProcess[], node: boolean, log: Log): Promise<void> {
  if (node) await stopNode(processes, log);
  await stopProcesses(processes, log, TEARDOWN_GRACE_MS);
}

/** Serialises up/down across processes (two test runs, or a run and a user's `cluster:up`). */
async function withLock<T>(log: Log, work: () => Promise<T>): Promise<T> {
  await mkdir(dirname(lockFile), { recursive: true });
  let announced = false;
  for (;;) {
    try {
      await writeFile(lockFile, String(process.pid), { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(await readFile(lockFile, 'utf8').catch(() => '0'));
      if (!pidExists(holder)) {
        await unlink(lockFile).catch(() => undefined);
        continue;
      }
      if (!announced) log(`waiting for process ${holder}, which is starting or stopping the cluster...`);
      announced = true;
      await sleep(500);
    }
  }
  try {
    return await work();
  } finally {
    await unlink(lockFile).catch(() => undefined);
  }
}

/**
 * Starts the cluster unless it is already up; `startedNow` tells the caller whether to stop it
 * later. A cluster with a node serves a caller that needs none; one without a node is started
 * anew when a node is asked for (the API server must move to the node's address), and one of
 * another Kubernetes release is started anew on this process's release.
 */
export async function startCluster(
  log: Log,
  options: ClusterOptions = {},
): Promise<{ state: ClusterState; startedNow: boolean }> {
  return withLock(log, async () => {
    const status = await clusterStatus();
    const sameRelease = status.state?.kubernetesVersion === kubernetesVersion;
    // A cluster whose API server presents no client certificate to webhooks is of an older checkout.
    const presentsClientCertificate = status.state?.webhookClient !== undefined;
    const fits =
      sameRelease && presentsClientCertificate && (status.state?.node === true || options.node !== true);
    if (status.running && status.state && fits) return { state: status.state, startedNow: false };
    if (status.state) {
      log(
        !status.running
          ? `cleaning up a previous cluster (${status.reason})`
          : !sameRelease
            ? `restarting the running cluster (Kubernetes ${status.state.kubernetesVersion}) on Kubernetes ${kubernetesVersion}`
            : !presentsClientCertificate
              ? 'restarting the running cluster: its API server presents no client certificate to webhooks'
              : 'restarting the running cluster with a node',
      );
      await stopAll(status.state.processes, status.state.node === true, log);
    }
    await ensureBinaries(log, { node: options.node === true });
    return { state: await launch(log, options), startedNow: true };
  });
}

/** Stops the processes recorded in the state file and removes the cluster's data (logs stay). */
export async function stopCluster(log: Log): Promise<boolean> {
  return withLock(log, async () => {
    const state = await readState();
    if (state) await stopAll(state.processes, state.node === true, log);
    const keep = new Set(['logs']);
    if (existsSync(clusterDir)) {
      for (const entry of await readdir(clusterDir)) {
        if (!keep.has(entry)) await rm(join(clusterDir, entry), { recursive: true, force: true });
      }
    }
    return state !== undefined;
  });
}

/** The last lines of every control-plane log, for failure messages. */
export async function logTails(lines = 30): Promise<string> {
  if (!existsSync(logsDir)) return '(no logs)';
  const parts: string[] = [];
  for (const file of (await readdir(logsDir)).sort()) {
    const text = await readFile(join(logsDir, file), 'utf8');
    parts.push(
      `--- ${file} (last ${lines} lines) ---\n${text.trimEnd().split('\n').slice(-lines).join('\n')}`,
    );
  }
  return parts.join('\n');
}

/** A control-plane process as the integration suite stopped it: how to start it again as it was. */
export interface StoppedProcess {
  name: string;
  binary: string;
  args: string[];
}
/** The API server as the integration suite stopped it. */
export type StoppedApiServer = StoppedProcess;

/** Stops the recorded process `name` (SIGTERM), its flags read from the process itself. */
async function stopRecorded(name: string, log: Log): Promise<StoppedProcess> {
  const proc = (await readState())?.processes.find((p) => p.name === name);
  if (!proc || !isAlive(proc)) throw new Error(`no running ${name} to stop`);
  const [binary, ...args] = readFileSync(`/proc/${proc.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  if (binary !== proc.binary) throw new Error(`pid ${proc.pid} is not the recorded ${name}`);
  await stopProcesses([proc], log);
  return { name, binary, args };
}

/** Starts a process stopRecorded stopped, with the same flags, in its place in the state file. */
async function startRecorded(
  stopped: StoppedProcess,
): Promise<{ state: ClusterState; exited: Promise<string> }> {
  const state = await readState();
  if (!state) throw new Error(`no cluster state to start ${stopped.name} into`);
  const started = startProcess(stopped.name, stopped.binary, stopped.args);
  state.processes = state.processes.map((p) =>
    p.name === stopped.name ? { name: p.name, pid: started.pid, binary: started.binary } : p,
  );
  await writeFile(stateFile, `${JSON.stringify(state, null, 2)}\n`);
  return { state, exited: started.exited };
}

/**
 * Stops the running cluster's API server (SIGTERM, as an upgrade or a crashing control plane
 * does), leaving etcd and the rest running: one of the integration suite's control-plane faults.
 * Its flags are read from the process itself, so any running cluster can be restarted.
 */
export async function stopApiServer(log: Log): Promise<StoppedApiServer> {
  return withLock(log, () => stopRecorded('kube-apiserver', log));
}

/** Starts an API server stopped by stopApiServer again, with the same flags; resolves once it is ready. */
export async function startApiServer(log: Log, stopped: StoppedApiServer): Promise<void> {
  await withLock(log, async () => {
    const { state, exited } = await startRecorded(stopped);
    const tls = await adminTls();
    await waitFor(
      'kube-apiserver /readyz',
      async () => (await get(`${state.server}/readyz`, tls)).status === 200,
      [exited],
    );
    log(`kube-apiserver ready again on ${state.server}`);
  });
}

/**
 * Restarts kube-controller-manager with the same flags. After an API server restart its informers
 * back off for up to 30 s between tries (the returning server refuses them until its RBAC has
 * loaded); a fresh one lists at once. A test that restarts the API server calls this to hand the
 * next test a cluster whose controllers act (test/harness/cluster.ts, controllersServing).
 */
export async function restartControllerManager(log: Log): Promise<void> {
  await withLock(log, async () => {
    await startRecorded(await stopRecorded('kube-controller-manager', log));
    log('kube-controller-manager restarted');
  });
}

/**
 * Compacts etcd's history up to its current revision (what its periodic compaction does): a watch
 * or continue token older than that then gets 410 Gone. Through etcd's JSON gateway, no etcdctl.
 */
export async function compactEtcd(): Promise<number> {
  const state = await readState();
  const proc = state?.processes.find((p) => p.name === 'etcd');
  if (!proc) throw new Error('no etcd in the cluster state');
  const flag = readFileSync(`/proc/${proc.pid}/cmdline`, 'utf8')
    .split('\0')
    .find((arg) => arg.startsWith('--listen-client-url='));
  const url = flag?.slice('--listen-client-url='.length);
  if (!url) throw new Error('etcd runs without --listen-client-url');
  const post = async (path: string, body: object): Promise<Record<string, unknown>> => {
    const response = await fetch(`${url}${path}`, { method: 'POST', body: JSON.stringify(body) });
    if (!response.ok) throw new Error(`etcd ${path}: HTTP ${response.status} ${await response.text()}`);
    return (await response.json()) as Record<string, unknown>;
  };
  // A range over one key answers with the current revision in its header.
  const { header } = (await post('/v3/kv/range', { key: Buffer.from('/').toString('base64') })) as {
    header?: { revision?: string };
  };
  const revision = Number(header?.revision);
  if (!Number.isInteger(revision) || revision <= 0) throw new Error('etcd did not say its revision');
  await post('/v3/kv/compaction', { revision: String(revision), physical: true });
  return revision;
}
