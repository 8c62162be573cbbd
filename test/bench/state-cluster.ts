/**
 * `state`, end to end: the large state created through the local API server, then the operator
 * as the image runs it (`npm run build`, the Dockerfile's ENTRYPOINT on dist/) started on it,
 * pinned like the server suite: start to Ready, resident memory, and the pod paths' peak rate through the operator's own
 * port, each against the same operator started on an empty cluster in the same run.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { request } from 'node:https';
import { join } from 'node:path';
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { freePorts } from '../../scripts/cluster/control-plane.js';
import { kubeconfigPath, repoRoot } from '../../scripts/cluster/layout.js';
import { DEFAULT_TIER_LABEL_KEY, NAMESPACE_NAME_LABEL } from '../../webhook/names.js';
import { QUOTA_LABELS } from '../../webhook/rules/koordinator/quota/keys.js';
import {
  apiServerClient,
  clientVerificationArgs,
  clusterKubeConfig,
  installCrds,
  waitFor,
} from '../harness/cluster.js';
import { inPool } from '../harness/scale-objects.js';
import { deleteConfigurations, readSecret, secretValue } from '../harness/operator.js';
import {
  cpuSecondsOf,
  measurePath,
  pinning,
  pinServer,
  type DriveSettings,
  type PathFigures,
} from './drive.js';
import { inform, record, recordShare } from './report.js';
import { benchProfiles, type StateSize } from './state.js';
import { podReviewBody, POD_PATHS } from './server.js';

/** Creates, ignoring "already exists" so a second run on the same cluster reuses the first's objects. */
async function create(make: () => Promise<unknown>): Promise<void> {
  try {
    await make();
  } catch (error) {
    if ((error as { code?: number }).code !== 409) throw error;
  }
}

/** The namespaces, ElasticQuotas, profiles, Models and pods of `size`, through the API server. */
async function populate(kc: KubeConfig, size: StateSize, prefix: string): Promise<string[]> {
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const namespaces = Array.from({ length: size.namespaces }, (_, i) => `${prefix}-team-${i}`);
  await inPool(namespaces.length, 16, (i) =>
    create(() =>
      core.createNamespace({
        body: {
          metadata: {
            name: namespaces[i],
            labels: { team: `team-${i}`, ...(i % 3 === 0 ? { [DEFAULT_TIER_LABEL_KEY]: 'silver' } : {}) },
          },
        },
      }),
    ),
  );
  const parents = Math.min(20, size.quotas);
  await inPool(size.quotas, 16, (i) =>
    create(() =>
      custom.createNamespacedCustomObject({
        group: 'scheduling.sigs.k8s.io',
        version: 'v1alpha1',
        plural: 'elasticquotas',
        namespace: namespaces[i % namespaces.length]!,
        body: {
          apiVersion: 'scheduling.sigs.k8s.io/v1alpha1',
          kind: 'ElasticQuota',
          metadata: {
            name: `${prefix}-quota-${i}`,
            labels:
              i < parents
                ? { [QUOTA_LABELS.isParent]: 'true' }
                : {
                    [QUOTA_LABELS.parent]: `${prefix}-quota-${i % parents}`,
                    [QUOTA_LABELS.isParent]: 'false',
                  },
          },
          spec: {
            min: { cpu: i < parents ? '100' : '1', memory: i < parents ? '100Gi' : '1Gi' },
            max: { cpu: '1000', memory: '1000Gi' },
          },
        },
      }),
    ),
  );
  const profiles = benchProfiles(size.profiles);
  await inPool(profiles.length, 16, (i) =>
    create(() =>
      custom.createClusterCustomObject({
        group: 'config.koordinator.sh',
        version: 'v1alpha1',
        plural: 'clustercolocationprofiles',
        body: {
          apiVersion: 'config.koordinator.sh/v1alpha1',
          kind: 'ClusterColocationProfile',
          metadata: { name: `${prefix}-${profiles[i]!.name}` },
          spec: profiles[i]!.spec,
        },
      }),
    ),
  );
  await inPool(size.models, 16, (i) =>
    create(() =>
      custom.createNamespacedCustomObject({
        group: 'workload.serving.volcano.sh',
        version: 'v1alpha1',
        plural: 'modelboosters',
        namespace: namespaces[i % namespaces.length]!,
        body: {
          apiVersion: 'workload.serving.volcano.sh/v1alpha1',
          kind: 'ModelBooster',
          metadata: { name: `model-${i}` },
          spec: {
            backend: {
              name: 'b0',
              type: 'vLLM',
              modelURI: 'hf://org/model',
              replicas: 1,
              workers: [{ type: 'server', image: 'vllm/vllm-openai:v0.10.0' }],
            },
          },
        },
      }),
    ),
  );
  // Pods go into the first namespaces only: each needs its default ServiceAccount first.
  const podNamespaces = namespaces.slice(0, Math.min(100, namespaces.length));
  for (const namespace of podNamespaces) {
    await waitFor('the default ServiceAccount', () =>
      core.readNamespacedServiceAccount({ namespace, name: 'default' }),
    );
  }
  await inPool(size.pods, 16, (i) =>
    create(() =>
      core.createNamespacedPod({
        namespace: podNamespaces[i % podNamespaces.length]!,
        body: {
          metadata: { name: `pod-${i}`, labels: { app: `app-${i % 50}` } },
          spec: {
            containers: [
              {
                name: 'main',
                image: 'registry.invalid/bench:1',
                resources: {
                  requests: { cpu: '100m', memory: '64Mi' },
                  limits: { cpu: '1', memory: '256Mi' },
                },
              },
            ],
          },
        },
      }),
    ),
  );
  return namespaces;
}

export interface RunningOperator {
  child: ChildProcess;
  port: number;
  metricsPort: number;
  ca: string;
  /** The API server's client certificate, which the operator verifies its callers by. */
  client: { cert: string; key: string };
  readyMs: number;
  stop: () => Promise<void>;
}

/** Long enough for V8's memory reducer, which runs a few seconds after allocation stops. */
const SETTLE_MS = 10_000;

export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN) / 1024;
}

/** The operator's /metrics page. */
export function metricsText(metricsPort: number): Promise<string> {
  return new Promise<string>((resolvePromise, reject) => {
    const req = httpGet({ host: '127.0.0.1', port: metricsPort, path: '/metrics', timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        resolvePromise(body);
      });
    });
    req.on('error', reject);
  });
}

/** One sample's value from a /metrics page (`series` as printed, labels included), NaN when absent. */
export function metricValue(text: string, series: string): number {
  const escaped = series.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return Number(new RegExp(`^${escaped} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
}

/** The V8 heap's figures from the operator's own metrics, in MiB: what of the RSS is the JS heap. */
export async function heapMiB(
  metricsPort: number,
): Promise<{ used: number; total: number; external: number }> {
  const text = await metricsText(metricsPort);
  const value = (name: string): number => metricValue(text, name) / 2 ** 20;
  return {
    used: value('nodejs_heap_size_used_bytes'),
    total: value('nodejs_heap_size_total_bytes'),
    external: value('nodejs_external_memory_bytes'),
  };
}

function readyz(port: number): Promise<boolean> {
  return new Promise((resolvePromise) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/readyz', rejectUnauthorized: false, timeout: 1000 },
      (res) => {
        res.resume();
        resolvePromise(res.statusCode === 200);
      },
    );
    req.on('error', () => {
      resolvePromise(false);
    });
    req.end();
  });
}

/**
 * What the image's entry point runs (the Dockerfile's ENTRYPOINT, with the runtime stage's ENV):
 * node's flags, the file, which the build leaves in dist/ (scripts/bundle.ts), and the environment.
 * The bench runs the same, so it measures the memory and speed the image has.
 */
export function imageEntryPoint(dockerfile = readFileSync(join(repoRoot, 'Dockerfile'), 'utf8')): {
  nodeFlags: string[];
  script: string;
  env: Record<string, string>;
} {
  const line = /^ENTRYPOINT\s+(\[.*\])\s*$/m.exec(dockerfile);
  if (!line) throw new Error('the Dockerfile has no ENTRYPOINT in exec form');
  const entry = JSON.parse(line[1]!) as string[];
  const script = entry.at(-1) ?? '';
  if (entry[0] !== 'node' || !script.endsWith('.mjs')) throw new Error(`unexpected ENTRYPOINT ${line[1]!}`);
  // The last stage's ENV lines, in the KEY=value form (one or more per line).
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  const env: Record<string, string> = {};
  for (const [, assignments] of runtime.matchAll(/^ENV\s+(.+)$/gm)) {
    for (const [, key, value] of (assignments ?? '').matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S*)/g))
      env[key!] = value!.replace(/^"(.*)"$/, '$1');
  }
  return { nodeFlags: entry.slice(1, -1), script: join(repoRoot, 'dist', script), env };
}

/** What a bench adds to the image's own start: node flags before the file, environment, an IPC channel. */
export interface OperatorStartExtras {
  nodeFlags?: readonly string[];
  env?: Readonly<Record<string, string>>;
  /** Open an IPC channel to the process (for a probe loaded with --import). */
  ipc?: boolean;
}

/**
 * The operator as the image runs it, its log to /dev/null; resolves once /readyz answers 200. It
 * starts on every core, as it would in a pod with a CPU limit above one core, and is pinned to
 * core 0 once Ready, for the load.
 */
export async function startCompiledOperator(
  namespace: string,
  extraArgs: readonly string[] = [],
  extras: OperatorStartExtras = {},
): Promise<RunningOperator> {
  const [port, metricsPort] = (await freePorts(2)) as [number, number];
  const image = imageEntryPoint();
  const node = [
    process.execPath,
    ...image.nodeFlags,
    ...(extras.nodeFlags ?? []),
    image.script,
    `--namespace=${namespace}`,
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    `--metrics-bind-address=127.0.0.1:${metricsPort}`,
    // As a hardened cluster runs it: only the API server, by its client certificate, is answered.
    ...(await clientVerificationArgs()),
    ...extraArgs,
  ];
  const [command, ...args] = node;
  const started = performance.now();
  const child = spawn(command!, args, {
    cwd: repoRoot,
    env: { ...process.env, ...image.env, ...extras.env, KUBECONFIG: kubeconfigPath },
    stdio: ['ignore', 'ignore', 'inherit', ...(extras.ipc ? (['ipc'] as const) : [])],
  });
  await waitFor('the operator to be Ready', () => readyz(port), { timeoutMs: 300_000, intervalMs: 10 });
  const readyMs = performance.now() - started;
  if (pinning && child.pid !== undefined) pinServer(child.pid);
  const ca = await waitFor('the serving CA', async () => secretValue(await readSecret(namespace), 'ca.crt'));
  const exited = new Promise<void>((resolvePromise) =>
    child.once('exit', () => {
      resolvePromise();
    }),
  );
  return {
    child,
    port,
    metricsPort,
    ca,
    client: await apiServerClient(),
    readyMs,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      await deleteConfigurations();
    },
  };
}

/** The namespaces pod reviews name: one without a tier, one whose tier asks for a GPU class. */
export interface ReviewNamespaces {
  plain: string;
  tiered: string;
}

export async function measureOperator(
  operator: RunningOperator,
  settings: DriveSettings,
  label: string,
  { plain, tiered }: ReviewNamespaces = reviewNamespaces,
): Promise<Map<string, PathFigures>> {
  inform(`state e2e: ${label}: start to Ready (compiled operator)`, operator.readyMs, 'ms');
  const pid = operator.child.pid ?? 0;
  inform(`state e2e: ${label}: resident memory right after Ready`, rssMiB(pid), 'MiB');
  const heap = await heapMiB(operator.metricsPort);
  inform(`state e2e: ${label}: of which V8 heap committed`, heap.total, 'MiB');
  inform(`state e2e: ${label}: of which V8 heap used`, heap.used, 'MiB');
  inform(`state e2e: ${label}: of which external (buffers)`, heap.external, 'MiB');
  await new Promise((resolvePromise) => setTimeout(resolvePromise, SETTLE_MS));
  inform(`state e2e: ${label}: resident memory ${SETTLE_MS / 1000} s after Ready, idle`, rssMiB(pid), 'MiB');
  const figures = new Map<string, PathFigures>();
  for (const { path, label: pathLabel } of POD_PATHS) {
    // Reviews for a namespace the operator knows from the cluster: the tiered one for the GPU path.
    const body =
      path === '/mutate-pod-gpu-class' ? podReviewBody('u', tiered, true) : podReviewBody('u', plain);
    const target = { port: operator.port, ca: operator.ca, client: operator.client };
    const measured = await measurePath(target, path, body, settings, () => cpuSecondsOf(pid));
    figures.set(path, measured);
    inform(`state e2e: ${label}: ${pathLabel}, peak (wall clock)`, measured.rate, 'rev/s');
    inform(`state e2e: ${label}: ${pathLabel}, per CPU-second of the operator`, measured.capacity, 'rev/s');
    inform(`state e2e: ${label}: ${pathLabel}, p99 at half peak`, measured.p99Ms, 'ms');
  }
  inform(`state e2e: ${label}: resident memory after the load`, rssMiB(pid), 'MiB');
  return figures;
}

const reviewNamespaces: ReviewNamespaces = { plain: 'default', tiered: 'default' };

export async function benchStateCluster(settings: DriveSettings, size: StateSize): Promise<void> {
  execFileSync('npm', ['run', '-s', 'build'], { cwd: repoRoot, stdio: 'inherit' });
  const kc = await clusterKubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  await installCrds(
    'elasticquotas.scheduling.sigs.k8s.io',
    'clustercolocationprofiles.config.koordinator.sh',
    'modelboosters.workload.serving.volcano.sh',
  );
  const prefix = `bench${Date.now().toString(36)}`;
  const operatorNamespace = `${prefix}-operator`;
  reviewNamespaces.plain = `${prefix}-plain`;
  reviewNamespaces.tiered = `${prefix}-tiered`;
  for (const [name, labels] of [
    [operatorNamespace, {}],
    [reviewNamespaces.plain, {}],
    [reviewNamespaces.tiered, { [DEFAULT_TIER_LABEL_KEY]: 'gold' }],
  ] as const) {
    await core.createNamespace({
      body: { metadata: { name, labels: { ...labels, [NAMESPACE_NAME_LABEL]: name } } },
    });
  }
  await deleteConfigurations();
  let namespaces: string[] = [];
  try {
    // The first start issues the serving certificates; the measured starts find them in place.
    let operator = await startCompiledOperator(operatorNamespace);
    await operator.stop();
    operator = await startCompiledOperator(operatorNamespace);
    const empty = await measureOperator(operator, settings, 'empty cluster');
    const emptyReady = operator.readyMs;
    await operator.stop();

    const populating = performance.now();
    namespaces = await populate(kc, size, prefix);
    inform(
      'state e2e: large state created through the API server',
      (performance.now() - populating) / 1000,
      's',
    );

    operator = await startCompiledOperator(operatorNamespace);
    const rssAtReady = rssMiB(operator.child.pid ?? 0);
    const large = await measureOperator(operator, settings, 'large state');
    await operator.stop();
    record('state e2e: start to Ready at the large state', operator.readyMs, 'ms', 2000);
    inform('state e2e: start to Ready, empty cluster (reference)', emptyReady, 'ms');
    record('state e2e: resident memory at the large state, right after Ready', rssAtReady, 'MiB', 150);
    for (const [path, figures] of large) {
      const base = empty.get(path)!;
      recordShare(
        `state e2e: ${path} at the large state, share of its empty-cluster rate (per CPU-s)`,
        figures.capacity,
        base.capacity,
        90,
      );
      inform(
        `state e2e: ${path} at the large state, share of its empty-cluster rate (wall clock)`,
        (100 * figures.rate) / base.rate,
        '%',
      );
    }
  } finally {
    await deleteConfigurations();
    const custom = kc.makeApiClient(CustomObjectsApi);
    await inPool(size.profiles, 16, (i) =>
      custom
        .deleteClusterCustomObject({
          group: 'config.koordinator.sh',
          version: 'v1alpha1',
          plural: 'clustercolocationprofiles',
          name: `${prefix}-${benchProfiles(size.profiles)[i]!.name}`,
        })
        .catch(() => undefined),
    );
    for (const name of [...namespaces, operatorNamespace, reviewNamespaces.plain, reviewNamespaces.tiered]) {
      await core.deleteNamespace({ name }).catch(() => undefined);
    }
  }
}
