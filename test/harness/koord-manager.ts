/**
 * koord-manager v1.8.0 as a host process against the local control plane, as its chart runs it:
 * the chart rendered with `helm template`, the objects a manager needs applied (its namespace, CRDs,
 * priority classes, ConfigMaps, certificate Secret and both webhook configurations, unchanged), and
 * each replica started with the chart's flags and environment in host mode (koord-manager-chart.ts).
 *
 * Each replica runs in a network namespace of its own, as a pod does: koord-manager binds its
 * webhook, health, metrics and pprof ports on every address, so two on one machine need one each.
 * Two relays (relay.ts) join it to the host: one inside, which takes the API server's address
 * there and hands out the webhook and health ports as Unix sockets, and one outside, which
 * serves those sockets as host ports (the balancer's backend, its readiness probe) and carries the
 * API traffic on. Our operator is run behind the same two relays by the bench, so both pay the
 * same hops.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseDocument } from 'yaml';
import { ensureHelm } from '../../scripts/cluster/binaries.js';
import { kubeconfigPath, repoRoot } from '../../scripts/cluster/layout.js';
import type { ReadinessProbe } from './balancer.js';
import { kubectl } from './cluster.js';
import {
  chartRenderArguments,
  koordManagerObjects,
  koordManagerProcess,
  webhookConfigurationNames,
  type RenderedObject,
} from './koord-manager-chart.js';
import { startRelay, type RelayProcess } from './relay-process.js';

const execFileAsync = promisify(execFile);

/** Koordinator's official chart, `versions/v1.8.0` of koordinator-sh/charts, unchanged (../shared/upstream). */
export const koordinatorChart =
  process.env.KOORDINATOR_CHART ?? join(repoRoot, '..', 'shared', 'upstream', 'koordinator-charts-v1.8.0');

/** The chart's health port (manager.healthProbe.port), where the kubelet asks /readyz. */
const HEALTH_PORT = 8000;

export interface KoordinatorRender {
  documents: RenderedObject[];
  /**
   * Each document's text as Helm rendered it, sent to the API server as is: one of the chart's CRDs
   * has under-indented quoted descriptions that Go's YAML reads as Helm means them and this
   * package's parser does not, so a parsed object written out again is another CRD.
   */
  texts: Map<RenderedObject, string>;
  namespace: string;
}

/** `helm template` of the chart for `replicas` managers. */
export async function renderKoordinatorChart(replicas: number): Promise<KoordinatorRender> {
  const { stdout } = await execFileAsync(
    await ensureHelm(),
    chartRenderArguments(koordinatorChart, replicas),
    {
      maxBuffer: 64 * 2 ** 20,
    },
  );
  const texts = new Map<RenderedObject, string>();
  for (const text of stdout.split(/^---$/m)) {
    // Parsed leniently: only kind and metadata are read from it (above).
    const object = parseDocument(text).toJS() as RenderedObject | null;
    if (object !== null && typeof object === 'object') texts.set(object, text);
  }
  const documents = [...texts.keys()];
  const namespace = documents.find((object) => object.kind === 'Namespace')?.metadata?.name;
  if (!namespace) throw new Error('the render holds no Namespace');
  return { documents, texts, namespace };
}

/**
 * Creates what a manager needs, or replaces it where it exists (our own copies of three of the
 * CRDs, say, which lack Koordinator's status subresource). Unvalidated, as Helm sends them: one of
 * the chart's CRDs carries description text that Go's YAML reads as keys, which strict field
 * validation (and so server-side apply) refuses.
 */
export async function applyKoordinatorObjects(render: KoordinatorRender): Promise<void> {
  const objects = koordManagerObjects(render.documents, render.namespace);
  const first = objects.filter(
    (object) => object.kind === 'Namespace' || object.kind === 'CustomResourceDefinition',
  );
  const rest = objects.filter((object) => !first.includes(object));
  for (const group of [first, rest]) {
    const text = group.map((object) => `---\n${render.texts.get(object) ?? ''}`).join('');
    // Those that exist fail to be created; then every one of them exists, and is replaced.
    await kubectl(['create', '--validate=false', '-f', '-'], text).catch(() => undefined);
    await kubectl(['replace', '--validate=false', '-f', '-'], text);
    if (group === first)
      await kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  }
}

/** Deletes both of the chart's webhook configurations (a stopped manager's, before ours or none run). */
export async function deleteKoordinatorConfigurations(render: KoordinatorRender): Promise<void> {
  const names = webhookConfigurationNames(render.documents);
  await kubectl(['delete', 'mutatingwebhookconfiguration', names.mutating, '--ignore-not-found']);
  await kubectl(['delete', 'validatingwebhookconfiguration', names.validating, '--ignore-not-found']);
}

/** Puts the chart's two configurations back as it renders them (`service`, empty caBundle). */
export async function applyKoordinatorConfigurations(render: KoordinatorRender): Promise<void> {
  await deleteKoordinatorConfigurations(render);
  const configurations = render.documents.filter(
    (object) =>
      object.kind === 'MutatingWebhookConfiguration' || object.kind === 'ValidatingWebhookConfiguration',
  );
  await kubectl(
    ['create', '-f', '-'],
    configurations.map((object) => `---\n${render.texts.get(object) ?? ''}`).join(''),
  );
}

/** One webhook process behind its two relays. */
export interface RelayedReplica {
  /** The host port that reaches its webhook server: the balancer's backend. */
  backendPort: number;
  /** Its readiness, as the kubelet asks it (undefined: HTTPS /readyz on backendPort). */
  probe: ReadinessProbe | undefined;
  /** The webhook process's pid (for /proc: memory, CPU). */
  pid: number;
  /** Where its log goes. */
  logFile: string;
  stop: () => Promise<void>;
}

/** The port of the cluster's API server, from the kubeconfig every process here uses. */
export async function apiServerPort(): Promise<number> {
  const { stdout } = await kubectl([
    'config',
    'view',
    '--minify',
    '-o',
    'jsonpath={.clusters[0].cluster.server}',
  ]);
  const port = Number(new URL(stdout.trim()).port);
  if (!port) throw new Error(`the kubeconfig's server has no port: ${stdout}`);
  return port;
}

function httpReady(port: number): ReadinessProbe {
  return (timeoutMs) =>
    new Promise((resolvePromise) => {
      const req = request(
        { host: '127.0.0.1', port, path: '/readyz', timeout: timeoutMs, agent: false },
        (res) => {
          res.resume();
          resolvePromise(res.statusCode === 200);
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => {
        resolvePromise(false);
      });
      req.end();
    });
}

/**
 * The outer relay: the API server for the inner one, and each of the process's sockets as a host
 * port. Resolves with the relay and its ports by socket.
 */
async function outerRelay(dir: string, apiPort: number, sockets: readonly string[]): Promise<RelayProcess> {
  return startRelay({
    args: [`--unix=${join(dir, 'api.sock')}:${apiPort}`, ...sockets.map((socket) => `--tcp=0:${socket}`)],
  });
}

/**
 * One koord-manager replica: `webhookPort` is the port the balancer listens on (koord-manager
 * writes it into its configurations' URLs and listens on it in its own namespace); `extraArgs`
 * follow the chart's flags.
 */
export async function startKoordManagerReplica(
  binary: string,
  render: KoordinatorRender,
  webhookPort: number,
  extraArgs: readonly string[] = [],
): Promise<RelayedReplica> {
  const dir = await mkdtemp(join(tmpdir(), 'koord-manager-'));
  const webhookSocket = join(dir, 'webhook.sock');
  const healthSocket = join(dir, 'health.sock');
  const apiPort = await apiServerPort();
  const launch = koordManagerProcess(render.documents, {
    host: '127.0.0.1',
    port: webhookPort,
    certDir: join(dir, 'certs'),
  });
  const outer = await outerRelay(dir, apiPort, [webhookSocket, healthSocket]);
  const pidFile = join(dir, 'pid');
  const logFile = join(dir, 'koord-manager.log');
  let inner: RelayProcess;
  try {
    inner = await startRelay({
      netns: true,
      pidFile,
      env: { ...launch.env, KUBECONFIG: kubeconfigPath },
      args: [
        '--loopback-up',
        `--tcp=${apiPort}:${join(dir, 'api.sock')}`,
        `--unix=${webhookSocket}:${webhookPort}`,
        `--unix=${healthSocket}:${HEALTH_PORT}`,
        `--pid-file=${pidFile}`,
        `--log-file=${logFile}`,
        '--',
        binary,
        ...launch.args,
        ...extraArgs,
      ],
    });
  } catch (error) {
    await outer.stop();
    throw error;
  }
  const stop = async (): Promise<void> => {
    await inner.stop();
    await outer.stop();
    if (process.env.KEEP_KOORD_MANAGER_LOGS !== '1') await rm(dir, { recursive: true, force: true });
  };
  try {
    const backendPort = outer.tcpPorts.get(webhookSocket);
    const healthPort = outer.tcpPorts.get(healthSocket);
    if (!backendPort || !healthPort) throw new Error('the outer relay did not say its ports');
    return { backendPort, probe: httpReady(healthPort), pid: await inner.commandPid(), logFile, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

export interface RelayedProcessSpec {
  /** Where the inner relay takes API traffic: the process's kubeconfig must point there. */
  apiRelayPort: number;
  /** The process's webhook port. */
  port: number;
  command: string[];
  env: NodeJS.ProcessEnv;
}

/**
 * Any webhook process behind the same two relays, without a namespace of its own (our operator
 * listens where it is told).
 */
export async function startRelayedProcess({
  apiRelayPort,
  port,
  command,
  env,
}: RelayedProcessSpec): Promise<RelayedReplica> {
  const dir = await mkdtemp(join(tmpdir(), 'relayed-webhook-'));
  const webhookSocket = join(dir, 'webhook.sock');
  const apiPort = await apiServerPort();
  const outer = await outerRelay(dir, apiPort, [webhookSocket]);
  const pidFile = join(dir, 'pid');
  const logFile = join(dir, 'webhook.log');
  let inner: RelayProcess;
  try {
    inner = await startRelay({
      pidFile,
      env,
      args: [
        `--tcp=${apiRelayPort}:${join(dir, 'api.sock')}`,
        `--unix=${webhookSocket}:${port}`,
        `--pid-file=${pidFile}`,
        `--log-file=${logFile}`,
        '--',
        ...command,
      ],
    });
  } catch (error) {
    await outer.stop();
    throw error;
  }
  const stop = async (): Promise<void> => {
    await inner.stop();
    await outer.stop();
    await rm(dir, { recursive: true, force: true });
  };
  const backendPort = outer.tcpPorts.get(webhookSocket);
  if (!backendPort) {
    await stop();
    throw new Error('the outer relay did not say its port');
  }
  return { backendPort, probe: undefined, pid: await inner.commandPid(), logFile, stop };
}
