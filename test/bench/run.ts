/**
 * `npm run bench`: speed and memory against their targets, measured, never asserted in tests.
 *
 *   rules    rules in process against a large state: profiles on pods, slo-config and node checks
 *   server   the admission server alone over HTTPS: a burst of concurrent reviews (p50, p99, rate)
 *   cluster  the operator against the real local control plane: start to published, drift repair,
 *            Secret recovery, a burst of pod creates through the API server, resident memory
 *
 * Prints one line per measurement with its target; exits 0 (a miss is information, not a failure).
 */
import { Agent, request } from 'node:https';
import type { TestContext } from 'node:test';
import {
  AdmissionregistrationV1Api,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { pino } from 'pino';
import { createCertificateAuthority, issueCertificate } from '../../operator/certificates/x509.js';
import { startCluster, stopCluster } from '../../scripts/cluster/control-plane.js';
import { createAdmissionApp } from '../../webhook/server/app.js';
import { AdmissionHttpsServer } from '../../webhook/server/https-server.js';
import { OperatorMetrics } from '../../webhook/server/metrics.js';
import { mutate } from '../../webhook/admission/decisions.js';
import { enabledWebhooks } from '../../webhook/table.js';
import { parseFeatureGates } from '../../webhook/feature-gates.js';
import type { WebhookEntry } from '../../webhook/table.js';
import type { AdmissionRequest, KubeObject } from '../../webhook/admission/types.js';
import { clusterKubeConfig, createPod, waitFor } from '../harness/cluster.js';
import { stateSnapshot } from '../harness/state.js';
import {
  CONFIGURATION_NAME,
  deleteConfigurations,
  httpsGet,
  publishedBundles,
  readSecret,
  secretValue,
  startOperator,
  waitForPublishedSecret,
} from '../harness/operator.js';

interface Result {
  name: string;
  value: number;
  unit: string;
  target: number;
  /** true when lower is better. */
  lower: boolean;
}
const results: Result[] = [];

function record(name: string, value: number, unit: string, target: number, lower = true): void {
  results.push({ name, value, unit, target, lower });
  const met = lower ? value <= target : value >= target;
  console.log(
    `${met ? 'met ' : 'MISS'}  ${name.padEnd(58)} ${value.toFixed(unit === 'ms' ? 1 : 0).padStart(9)} ${unit.padEnd(6)} (target ${lower ? '≤' : '≥'} ${target})`,
  );
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function runPool<T>(count: number, concurrency: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        out[i] = await task(i);
      }
    }),
  );
  return out;
}

function podReview(uid: string): string {
  const containers = Array.from({ length: 4 }, (_, i) => ({
    name: `c${i}`,
    image: `registry.example/app:${i}`,
    env: Array.from({ length: 20 }, (_, j) => ({ name: `VAR_${j}`, value: `value-${j}` })),
    resources: { requests: { cpu: '500m', memory: '512Mi' }, limits: { cpu: '1', memory: '1Gi' } },
  }));
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      namespace: 'bench',
      operation: 'CREATE',
      userInfo: { username: 'bench' },
      object: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: uid, namespace: 'bench', labels: { app: 'x' } },
        spec: { containers },
      },
    },
  });
}

async function benchServer(): Promise<void> {
  const ca = await createCertificateAuthority({ commonName: 'bench-ca', lifetimeMs: 3600_000 });
  const leaf = await issueCertificate(
    { commonName: 'localhost', usage: 'server', lifetimeMs: 3600_000, ipAddresses: ['127.0.0.1'] },
    ca,
  );
  const table = enabledWebhooks({
    namespace: 'admission-system',
    excludedNamespaces: [],
    tierLabelKey: 't',
    gpuResourceNames: ['nvidia.com/gpu'],
    configMaps: [],
    koordinatorNamespace: 'koordinator-system',
    gates: parseFeatureGates(''),
  });
  // A mutation that touches every container, so the patch diff is part of what is measured.
  const mutating: WebhookEntry = {
    ...table[0]!,
    name: 'bench-mutate.admission-operator.io',
    path: '/bench-mutate',
    handler: (req) => {
      const object = structuredClone(req.object!);
      const spec = object.spec as { containers: { env: { name: string; value: string }[] }[] };
      for (const container of spec.containers) container.env.push({ name: 'INJECTED', value: 'yes' });
      return mutate(object);
    },
  };
  const metrics = new OperatorMetrics();
  const logger = pino({ level: 'silent' });
  const app = createAdmissionApp({
    webhooks: () => [...table, mutating],
    state: () => stateSnapshot(),
    readiness: () => Promise.resolve({ ready: true, checks: {} }),
    metrics,
    logger,
  });
  const server = new AdmissionHttpsServer(app, logger, metrics);
  const port = await server.listen(0, '127.0.0.1', {
    certificatePem: leaf.certificatePem,
    privateKeyPem: leaf.privateKeyPem,
  });
  const agent = new Agent({ keepAlive: true, maxSockets: 64, ca: ca.certificatePem });

  const post = (path: string, body: string): Promise<number> =>
    new Promise((resolvePromise, reject) => {
      const started = process.hrtime.bigint();
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path,
          method: 'POST',
          agent,
          headers: { 'Content-Type': 'application/json' },
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`));
            else resolvePromise(Number(process.hrtime.bigint() - started) / 1e6);
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  for (const [label, path] of [
    ['validate-pod (allow)', '/validate-pod'],
    ['mutate a 4-container pod (JSON patch from a diff)', '/bench-mutate'],
  ] as const) {
    await runPool(200, 16, (i) => post(path, podReview(`warm-${i}`)));
    const count = 3000;
    const started = Date.now();
    const latencies = (await runPool(count, 64, (i) => post(path, podReview(`uid-${i}`)))).sort(
      (a, b) => a - b,
    );
    const seconds = (Date.now() - started) / 1000;
    record(`server: ${label}, 64 concurrent, p50`, percentile(latencies, 50), 'ms', 10);
    record(`server: ${label}, 64 concurrent, p99`, percentile(latencies, 99), 'ms', 50);
    record(`server: ${label}, throughput`, count / seconds, 'req/s', 1000, false);
  }
  agent.destroy();
  await server.close(1000);
}

async function benchCluster(): Promise<void> {
  const afters: (() => Promise<unknown> | undefined)[] = [];
  const t = { after: (fn: () => Promise<unknown> | undefined) => afters.push(fn) } as unknown as TestContext;
  const kc = await clusterKubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const admission = kc.makeApiClient(AdmissionregistrationV1Api);
  const suffix = Date.now().toString(36);
  const namespace = `bench-op-${suffix}`;
  const workload = `bench-pods-${suffix}`;
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  await core.createNamespace({ body: { metadata: { name: workload } } });
  await waitFor('the default ServiceAccount', () =>
    core.readNamespacedServiceAccount({ namespace: workload, name: 'default' }),
  );
  try {
    await deleteConfigurations();
    let started = Date.now();
    const operator = await startOperator(t, { namespace });
    const secret = await waitForPublishedSecret(namespace);
    record('cluster: process start to Secret and both configurations', Date.now() - started, 'ms', 3000);
    const ca = secretValue(secret, 'ca.crt');
    await waitFor('ready', async () => (await httpsGet(operator.port, '/readyz', ca)).status === 200);

    const repairs: number[] = [];
    for (let i = 0; i < 5; i++) {
      await admission.patchValidatingWebhookConfiguration(
        {
          name: CONFIGURATION_NAME,
          body: [
            {
              op: 'replace',
              path: '/webhooks/0/clientConfig/caBundle',
              value: Buffer.from('garbage').toString('base64'),
            },
          ],
        },
        setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
      );
      started = Date.now();
      await waitFor('repair', async () => (await publishedBundles()).every((bundle) => bundle === ca), {
        intervalMs: 10,
      });
      repairs.push(Date.now() - started);
    }
    record('cluster: garbage caBundle repaired (worst of 5)', Math.max(...repairs), 'ms', 2000);

    await core.deleteNamespacedSecret({ namespace, name: 'webhook-tls' });
    started = Date.now();
    await waitFor(
      'recovery',
      async () => {
        if (!secretValue(await readSecret(namespace), 'tls.crt')) return false;
        await createPod(workload);
        return true;
      },
      { intervalMs: 20 },
    );
    record('cluster: Secret deleted to admissions working again', Date.now() - started, 'ms', 5000);

    await runPool(30, 10, () => createPod(workload));
    let failures = 0;
    const burstStarted = Date.now();
    const latencies = (
      await runPool(300, 30, async () => {
        const t0 = Date.now();
        try {
          await createPod(workload);
        } catch {
          failures++;
        }
        return Date.now() - t0;
      })
    ).sort((a, b) => a - b);
    record('cluster: burst of 300 pod creates (30 concurrent), p50', percentile(latencies, 50), 'ms', 200);
    record('cluster: burst of 300 pod creates (30 concurrent), p99', percentile(latencies, 99), 'ms', 1000);
    record('cluster: burst throughput', 300 / ((Date.now() - burstStarted) / 1000), 'pods/s', 50, false);
    record('cluster: burst failures', failures, 'count', 0);

    const metricsText = (await httpsGet(operator.port, '/metrics', ca)).body;
    const metric = (name: string): number =>
      Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metricsText)?.[1] ?? Number.NaN);
    // The process runs under tsx (esbuild loaded); the heap is what the operator itself holds.
    record(
      'cluster: operator heap used after the burst',
      metric('nodejs_heap_size_used_bytes') / 1024 / 1024,
      'MiB',
      64,
    );
    record(
      'cluster: operator resident memory (under tsx) after the burst',
      metric('process_resident_memory_bytes') / 1024 / 1024,
      'MiB',
      256,
    );
    const webhookP99 =
      /admission_request_duration_seconds_bucket\{le="0.005",webhook="validate-pod.admission-operator.io"\} (\d+)/.exec(
        metricsText,
      );
    const total =
      /admission_request_duration_seconds_count\{webhook="validate-pod.admission-operator.io"\} (\d+)/.exec(
        metricsText,
      );
    if (webhookP99 && total) {
      record(
        'cluster: validate-pod answered within 5 ms (share of requests)',
        (100 * Number(webhookP99[1])) / Number(total[1]),
        '%',
        99,
        false,
      );
    }
  } finally {
    for (const fn of afters.reverse()) await fn();
    await deleteConfigurations();
    await core.deleteNamespace({ name: namespace }).catch(() => undefined);
    await core.deleteNamespace({ name: workload }).catch(() => undefined);
  }
}

/** Mean time of one call, after a warm-up, in microseconds. */
function microsPerCall(calls: number, call: () => unknown): number {
  for (let i = 0; i < Math.min(200, calls); i++) call();
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) call();
  return Number(process.hrtime.bigint() - started) / 1000 / calls;
}

function benchRules(): void {
  // 200 profiles, one matching: every pod create evaluates all selectors, then applies one profile.
  const profiles = Array.from({ length: 200 }, (_, i) => ({
    name: `profile-${String(i).padStart(3, '0')}`,
    annotations: {},
    spec: {
      selector: { matchLabels: { app: i === 150 ? 'batch' : `app-${i}` } },
      qosClass: 'BE',
      priorityClassName: 'koord-batch',
      labels: { colocated: 'true' },
      patch: { spec: { tolerations: [{ key: 'batch', operator: 'Exists' }] } },
    },
  }));
  const nodes = Array.from({ length: 5000 }, (_, i) => ({
    name: `node-${i}`,
    labels: { pool: `pool-${i % 50}`, zone: `zone-${i % 3}` },
  }));
  const strategies = JSON.stringify({
    clusterStrategy: { enable: true, cpuSuppressThresholdPercent: 65 },
    nodeStrategies: Array.from({ length: 50 }, (_, i) => ({
      name: `pool-${i}`,
      nodeSelector: { matchLabels: { pool: `pool-${i}` } },
      cpuSuppressThresholdPercent: 60,
    })),
  });
  const state = stateSnapshot({
    colocationProfiles: profiles,
    priorityClasses: [{ name: 'koord-batch', value: 5500 }],
    namespaces: [{ name: 'bench', labels: {} }],
    nodes,
    configMaps: [
      {
        namespace: 'koordinator-system',
        name: 'slo-controller-config',
        uid: 'u',
        resourceVersion: '1',
        data: { 'resource-threshold-config': strategies },
      },
    ],
  });
  const table = enabledWebhooks({
    namespace: 'admission-system',
    excludedNamespaces: [],
    tierLabelKey: 'tier',
    gpuResourceNames: [],
    configMaps: [],
    koordinatorNamespace: 'koordinator-system',
    gates: parseFeatureGates(''),
  });
  const handler = (path: string): WebhookEntry['handler'] => {
    const entry = table.find((each) => each.path === path);
    if (!entry) throw new Error(`no webhook at ${path}`);
    return entry.handler;
  };
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'bench', labels: { app: 'batch' } },
    spec: {
      containers: Array.from({ length: 10 }, (_, i) => ({
        name: `c${i}`,
        image: 'x',
        resources: { requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '1', memory: '2Gi' } },
      })),
    },
  };
  const review = (
    resource: string,
    object: KubeObject,
    oldObject: KubeObject | null = null,
  ): AdmissionRequest => ({
    uid: 'u',
    kind: { group: '', version: 'v1', kind: resource },
    resource: { group: '', version: 'v1', resource },
    namespace: typeof object.metadata.namespace === 'string' ? object.metadata.namespace : '',
    name: typeof object.metadata.name === 'string' ? object.metadata.name : '',
    operation: oldObject ? 'UPDATE' : 'CREATE',
    userInfo: {},
    object,
    oldObject,
    dryRun: false,
  });
  const mutatePod = handler('/mutate-pod');
  const podReview = review('pods', pod);
  record(
    '/mutate-pod, 200 profiles, 10 containers (per call)',
    microsPerCall(2000, () => mutatePod(podReview, state)),
    'µs',
    1000,
  );

  const validateConfigMap = handler('/validate-configmap');
  const configReview = review('configmaps', {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'slo-controller-config', namespace: 'koordinator-system' },
    data: { 'resource-threshold-config': strategies },
  });
  record(
    'slo-config, 50 node strategies × 5000 nodes (per call)',
    microsPerCall(20, () => validateConfigMap(configReview, state)) / 1000,
    'ms',
    100,
  );

  const validateNode = handler('/validate-node');
  const node = (labels: Record<string, string>): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'n', labels },
  });
  const relabel = review('nodes', node({ pool: 'pool-1' }), node({ pool: 'pool-2' }));
  record(
    '/validate-node relabel vs 50 strategies (per call)',
    microsPerCall(500, () => validateNode(relabel, state)),
    'µs',
    100,
  );
}

const suites = process.argv.slice(2);
const want = (name: string): boolean => suites.length === 0 || suites.includes(name);
if (want('rules')) benchRules();
if (want('server')) await benchServer();
if (want('cluster')) {
  const { startedNow } = await startCluster((line) => {
    console.error(`[cluster] ${line}`);
  });
  try {
    await benchCluster();
  } finally {
    if (startedNow) await stopCluster(() => undefined);
  }
}
const misses = results.filter((r) => (r.lower ? r.value > r.target : r.value < r.target));
console.log(`\n${results.length - misses.length} of ${results.length} targets met`);
