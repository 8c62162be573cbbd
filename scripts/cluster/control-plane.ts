/**
 * Starts and stops the local control plane: etcd, kube-apiserver and
 * kube-controller-manager on free loopback ports, as detached processes whose pids are
 * recorded so that `down` stops exactly what `up` started.
 */
import { spawn } from 'node:child_process';
import { existsSync, openSync, readFileSync, closeSync } from 'node:fs';
import { mkdir, readFile, readdir, rm, unlink, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureBinaries } from './binaries.js';
import {
  binaries,
  clusterDir,
  controllerManagerKubeconfigPath,
  etcdDataDir,
  kubeconfigPath,
  kubernetesVersion,
  lockFile,
  logsDir,
  pkiDir,
  stateFile,
} from './layout.js';
import { createClusterPki, type ClusterPki } from './pki.js';

export interface ClusterProcess {
  name: string;
  pid: number;
  binary: string;
}

export interface ClusterState {
  kubernetesVersion: string;
  startedAt: string;
  server: string;
  kubeconfig: string;
  processes: ClusterProcess[];
}

export type Log = (line: string) => void;

const READY_TIMEOUT_MS = 120_000;

function pidExists(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function isAlive(proc: ClusterProcess): boolean {
  if (!pidExists(proc.pid)) return false;
  // A recorded pid may have been reused by an unrelated process after a reboot.
  try {
    return readFileSync(`/proc/${proc.pid}/cmdline`, 'utf8').split('\0')[0] === proc.binary;
  } catch {
    return false;
  }
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

function startProcess(
  name: string,
  binary: string,
  args: string[],
): ClusterProcess & { exited: Promise<string> } {
  const out = openSync(join(logsDir, `${name}.log`), 'a');
  const child = spawn(binary, args, { detached: true, stdio: ['ignore', out, out] });
  closeSync(out);
  if (child.pid === undefined) throw new Error(`could not start ${name}`);
  const exited = new Promise<string>((resolvePromise) => {
    child.on('exit', (code, signal) => {
      resolvePromise(`${name} exited (${signal ?? `code ${code}`})`);
    });
  });
  child.unref();
  return { name, pid: child.pid, binary, exited };
}

async function waitFor(
  what: string,
  probe: () => Promise<boolean>,
  exited: Promise<string>[],
  timeoutMs = READY_TIMEOUT_MS,
): Promise<void> {
  let failure: string | undefined;
  void Promise.race(exited).then((reason) => (failure = reason));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (failure) throw new Error(`${failure} while waiting for ${what}`);
    if (await probe().catch(() => false)) return;
    await sleep(200);
  }
  throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
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

async function launch(log: Log): Promise<ClusterState> {
  await rm(clusterDir, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
  await mkdir(logsDir, { recursive: true });
  const pki = await createClusterPki();
  const [etcdClientPort, etcdPeerPort, apiserverPort, controllerManagerPort] = await freePorts(4);
  const etcdUrl = `http://127.0.0.1:${etcdClientPort}`;
  const server = `https://127.0.0.1:${apiserverPort}`;
  const started: (ClusterProcess & { exited: Promise<string> })[] = [];

  const record = async (): Promise<ClusterState> => {
    const state: ClusterState = {
      kubernetesVersion,
      startedAt: new Date().toISOString(),
      server,
      kubeconfig: kubeconfigPath,
      processes: started.map(({ name, pid, binary }) => ({ name, pid, binary })),
    };
    await writeFile(stateFile, `${JSON.stringify(state, null, 2)}\n`);
    return state;
  };

  try {
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

    started.push(
      startProcess('kube-apiserver', binaries.kubeApiserver, [
        `--etcd-servers=${etcdUrl}`,
        `--secure-port=${apiserverPort}`,
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        `--cert-dir=${join(clusterDir, 'apiserver')}`,
        `--tls-cert-file=${pki.apiserverCert}`,
        `--tls-private-key-file=${pki.apiserverKey}`,
        `--client-ca-file=${pki.caCert}`,
        '--service-cluster-ip-range=10.0.0.0/24',
        '--authorization-mode=RBAC',
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
    return state;
  } catch (error) {
    await stopProcesses(started, log);
    throw error;
  }
}

async function stopProcesses(processes: ClusterProcess[], log: Log): Promise<void> {
  // Reverse start order: the controller manager and API server before their etcd.
  for (const proc of [...processes].reverse()) {
    if (!isAlive(proc)) continue;
    process.kill(proc.pid, 'SIGTERM');
    const deadline = Date.now() + 15_000;
    while (isAlive(proc) && Date.now() < deadline) await sleep(100);
    if (isAlive(proc)) process.kill(proc.pid, 'SIGKILL');
    while (isAlive(proc)) await sleep(50);
    log(`stopped ${proc.name} (pid ${proc.pid})`);
  }
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

/** Starts the cluster unless it is already up; `startedNow` tells the caller whether to stop it later. */
export async function startCluster(log: Log): Promise<{ state: ClusterState; startedNow: boolean }> {
  return withLock(log, async () => {
    const status = await clusterStatus();
    if (status.running && status.state) return { state: status.state, startedNow: false };
    if (status.state) {
      log(`cleaning up a previous cluster (${status.reason})`);
      await stopProcesses(status.state.processes, log);
    }
    await ensureBinaries(log);
    return { state: await launch(log), startedNow: true };
  });
}

/** Stops the processes recorded in the state file and removes the cluster's data (logs stay). */
export async function stopCluster(log: Log): Promise<boolean> {
  return withLock(log, async () => {
    const state = await readState();
    if (state) await stopProcesses(state.processes, log);
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
