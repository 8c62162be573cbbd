/**
 * `npm run bench`: speed and memory against their targets, measured, never asserted in tests.
 *
 *   rules    rules in process against a large state: profiles on pods, slo-config and node checks
 *   paths    every webhook path in process on the fuzz corpus's valid review of it, µs per review
 *            and as a multiple of JSON.parse of that review
 *   hostile  every case of the unit suite's fuzz run (--hostile-seed, --hostile-cases) that is read as a review,
 *            judged in process body in to answer: the slowest, as a multiple of JSON.parse of the
 *            largest body the server accepts (hostile.ts)
 *   server   every pod path through our app over HTTPS against a bare HTTPS server and a minimal
 *            Koa app measured in the same run: peak rate, its share of each, p50/p99 at half peak
 *   state    the same paths with a large state (--state-scale=N multiplies its size), each as a
 *            share of its empty-state rate: in process, then end to end (the state created through
 *            the local API server, the compiled operator started on it: start to Ready, memory);
 *            `state-server` and `state-e2e` run one part alone
 *   rotation the admission server under a steady load while certificates are issued over and over,
 *            against the same load without issuing: key generation must not pause serving (p99 ratio)
 *   refusals a body declared past the limit (1 TiB; 7 MiB + 10 with nothing sent) against a valid
 *            review, each on a new TLS connection: time to the 413 as a ratio, and to the close
 *   transport pod creates through the local API server: no webhook, the pod webhooks answered by
 *            a bare server (a no-op), by our app over HTTP/1.1, and by our app offering HTTP/2
 *   cluster  the operator against the real local control plane: start to published, drift repair,
 *            Secret recovery, a burst of pod creates through the API server, resident memory
 *   quota-burst replicas behind one address, a burst of concurrent 500m creates into a quota with
 *            room for a part of it (client-side creates and a ReplicaSet), callers verified (ledger
 *            and leader) and not (watched usage only): admitted, refused by reason, latencies,
 *            forward outcomes; --burst, --room, --replicas, --modes, --shapes, --kill-leader=1, --cut-leader=1
 *            (quota-burst.ts)
 *   narrowing the narrowed configurations: their bytes at 10,000 namespaces and 1,000 profiles;
 *            on the local control plane, how soon they follow a new profile against a watch's
 *            delivery of it (Koordinator's informer lag), and the create latency of an ungoverned
 *            pod against a namespace no webhook sees
 *   scale    only when named: the compiled operator on a fresh local control plane grown to
 *            --pods (default 150000), --nodes (5000) and --namespaces (10000): start to Ready
 *            against the raw list, peak and settled memory, a forced relist, cost per pod;
 *            --steps=20000,50000 measures those pod counts on the way (nodes, namespaces in proportion)
 *   audit-scale only when named: `admission-operator audit` and the operator's periodic audit with
 *            PolicyReports over the scale objects on the local control plane (--pods, default 40000;
 *            --nodes, 1000; --namespaces, 400; created once, found again on a kept cluster): wall
 *            time, peak RSS of the CLI and of the operator (under the chart's limit), report sizes
 *   conditions  only when named (compiles Go against each tested release's k8s.io/apiserver): the
 *            match conditions of the narrowed pod webhooks through the API server's own matcher, per
 *            review of a pod they do not send, as multiples of a trivial condition's cost
 *   idle-cpu only when named (about ten minutes): the compiled operator idle on the local control
 *            plane, its CPU over --idle-window=MS (default 120000) per round (--rounds), against the
 *            same build with its watches' liveness off (bookmarks, short watches, watchdog,
 *            keepalive), alternating: both, their ratio and their difference (idle-cpu.ts)
 *   fuzz-memory  only when named (about ten minutes): the compiled operator as the image and the
 *            chart run it, on the local control plane, driven by the fuzzer's case families phase
 *            by phase and by 20,000 admitted pods through the quota ledger; its resident memory,
 *            heap, external memory and array buffers at each mark (fuzz-memory.ts has the flags)
 *   koord-manager only when named (builds koord-manager v1.8.0 from its Go module once): Koordinator's
 *            webhooks as its chart runs them, ours as the image runs it, and no webhook, in turn,
 *            --rounds rounds: a burst of --burst (1000) 500m creates into a quota with room for
 *            --room (500) with --replicas=1,2; --steady (1000) creates at --rate (20/s); the
 *            decisions that differ; --scale-pods=N: each process's start to Ready and peak RSS on N
 *            pods (koord-manager.ts; --parts=burst,steady,scale)
 *
 * Prints one line per measurement with its target; exits 0 (a miss is information, not a failure).
 * Flags: --duration=MS (each load run, default 4000), --connections=N (default 20),
 * --state-scale=N (default 1), --rounds=N (transport and quota-burst, default 2).
 */
// First: an unsupported Node.js gets one line saying so, not a dependency's stack trace.
import '../../scripts/runtime/require-node.js';
import { generateKeyPairSync } from 'node:crypto';
import { Agent, request } from 'node:https';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { TestContext } from 'node:test';
import {
  AdmissionregistrationV1Api,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { pino } from 'pino';
import { cpus, totalmem } from 'node:os';
import { planSecretWithKeys, type CertificatePolicy } from '../../operator/certificates/tls-plan.js';
import { createCertificateAuthority, issueCertificate } from '../../operator/certificates/x509.js';
import { startCluster, stopCluster } from '../../scripts/cluster/control-plane.js';
import { createAdmissionApp } from '../../webhook/server/app.js';
import { AdmissionHttpsServer } from '../../webhook/server/https-server.js';
import { admissionMetrics } from '../../webhook/metrics/admission-metrics.js';
import { mutate } from '../../webhook/admission/decisions.js';
import { enabledWebhooks } from '../../webhook/table.js';
import { parseFeatureGates } from '../../webhook/feature-gates.js';
import type { WebhookEntry } from '../../webhook/table.js';
import type { AdmissionRequest, KubeObject } from '../../webhook/admission/types.js';
import { searchOverlaps } from '../../webhook/rules/koordinator/slo-config/node-selectors.js';
import { sloConfigCheckers } from '../../webhook/rules/koordinator/slo-config/slo-config-keys.js';
import { sloConfigValidator } from '../../webhook/rules/koordinator/slo-config/validate-slo-config.js';
import { apiServerCallers } from '../harness/allowing-server.js';
import { clusterKubeConfig, createPod, waitFor } from '../harness/cluster.js';
import { admissionRequest } from '../harness/requests.js';
import { stateSnapshot } from '../harness/state.js';
import { pinServer, unpinServer, type DriveSettings } from './drive.js';
import { benchAdmit } from './admit.js';
import { benchQuotaBurst, quotaBurstSettings } from './quota-burst.js';
import { inform, percentile, record, summary } from './report.js';
import { benchServer } from './server.js';
import { benchState, emptyState, stateSize } from './state.js';
import { benchStateCluster } from './state-cluster.js';
import { benchTransport } from './transport.js';
import { benchRefusals } from './refusals.js';
import { benchScale } from './scale.js';
import { AUDIT_SCALE_DEFAULTS, benchAuditScale } from './audit-scale.js';
import { benchPaths } from './paths.js';
import { benchHostile, hostileSettings } from './hostile.js';
import { benchFuzzMemory, fuzzMemorySettings } from './fuzz-memory.js';
import { benchIdleCpu } from './idle-cpu.js';
import { benchKoordManager } from './koord-manager.js';
import { sideBySideSettings } from './koord-manager-settings.js';
import { benchNarrowingCluster, benchNarrowingSize } from './narrowing.js';
import { benchMatchConditions } from './match-conditions.js';
import type { ScaleSize } from '../harness/scale-objects.js';
import {
  CONFIGURATION_NAME,
  deleteConfigurations,
  httpGet,
  httpsGet,
  publishedBundles,
  readSecret,
  secretValue,
  startOperator,
  waitForPublishedSecret,
} from '../harness/operator.js';

function parseArguments(argv: string[]): {
  suites: string[];
  flags: ReadonlyMap<string, string>;
  settings: DriveSettings;
  scale: number;
  rounds: number;
  size: ScaleSize;
  steps: number[];
} {
  const flags = new Map<string, string>();
  const suites: string[] = [];
  for (const arg of argv) {
    const flag = /^--([a-z-]+)=(.*)$/.exec(arg);
    if (flag) flags.set(flag[1]!, flag[2]!);
    else suites.push(arg);
  }
  const number = (name: string, fallback: number): number => {
    const value = Number(flags.get(name) ?? fallback);
    if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
    return value;
  };
  return {
    suites,
    flags,
    settings: { durationMs: number('duration', 4000), connections: number('connections', 20) },
    scale: number('state-scale', 1),
    rounds: number('rounds', 2),
    size: {
      pods: number('pods', 150_000),
      nodes: number('nodes', 5_000),
      namespaces: number('namespaces', 10_000),
    },
    steps: (flags.get('steps') ?? '')
      .split(',')
      .filter((step) => step !== '')
      .map((step) => {
        const pods = Number(step);
        if (!Number.isInteger(pods) || pods <= 0) throw new Error('--steps must list positive pod counts');
        return pods;
      }),
  };
}

/** Runs one suite; a suite that fails is reported and counted, and the others still run. */
async function survive(name: string, suite: () => Promise<void>): Promise<void> {
  try {
    await suite();
  } catch (error) {
    console.log(`FAIL  ${name}: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  }
}

function machine(): string {
  const cores = cpus();
  return `${cores.length} × ${cores[0]?.model.trim() ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
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

interface BenchServer {
  /** POSTs `body` and resolves with the milliseconds it took; rejects unless the answer is 200. */
  post: (path: string, body: string) => Promise<number>;
  close: () => Promise<void>;
}

/** The admission server in this process over HTTPS, with a mutating webhook of its own at /bench-mutate. */
async function startBenchServer(): Promise<BenchServer> {
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
  const metrics = admissionMetrics();
  const logger = pino({ level: 'silent' });
  const app = createAdmissionApp({
    webhooks: () => [...table, mutating],
    state: () => stateSnapshot(),
    readiness: () => Promise.resolve({ ready: true, checks: {} }),
    metrics,
    logger,
    // Verification off: what is measured here is the rules and the transport, not the handshake.
    callers: apiServerCallers(false),
  });
  const server = new AdmissionHttpsServer(app, logger, metrics);
  const port = await server.listen(0, '127.0.0.1', {
    certificatePem: leaf.certificatePem,
    privateKeyPem: leaf.privateKeyPem,
    clientCaPem: '',
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

  return {
    post,
    close: async () => {
      agent.destroy();
      await server.close(1000);
    },
  };
}

/**
 * Latencies of reviews sent at a fixed rate for `durationMs`, each timed from the moment it was
 * due rather than sent: the client shares the event loop with the server, so a stalled loop
 * delays the sending too, and that delay must count.
 */
async function steadyLoad(
  server: BenchServer,
  durationMs: number,
  intervalMs: number,
): Promise<{ latencies: number[]; longestStallMs: number }> {
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const answered: Promise<number>[] = [];
  const start = performance.now();
  const total = Math.floor(durationMs / intervalMs);
  let sent = 0;
  await new Promise<void>((done) => {
    const tick = (): void => {
      const now = performance.now();
      for (; sent < total && start + sent * intervalMs <= now; sent++) {
        const due = start + sent * intervalMs;
        answered.push(
          server.post('/validate-pod', podReview(`steady-${sent}`)).then(() => performance.now() - due),
        );
      }
      if (sent >= total) done();
      else setTimeout(tick, Math.max(0, start + sent * intervalMs - performance.now()));
    };
    tick();
  });
  const latencies = (await Promise.all(answered)).sort((a, b) => a - b);
  loopDelay.disable();
  return { latencies, longestStallMs: loopDelay.max / 1e6 };
}

/**
 * Runs `issue` over and over until `phase` settles, or `limit` times; resolves with how many
 * times it completed.
 */
async function issuingDuring(
  phase: Promise<unknown>,
  issue: () => Promise<unknown>,
  limit = Number.POSITIVE_INFINITY,
): Promise<number> {
  let settled = false;
  void phase.finally(() => (settled = true));
  let issued = 0;
  while (!settled && issued < limit) {
    await issue();
    issued++;
  }
  return issued;
}

async function benchRotation(): Promise<void> {
  const server = await startBenchServer();
  const policy: CertificatePolicy = {
    caLifetimeMs: 3600_000,
    caRenewBeforeMs: 600_000,
    servingLifetimeMs: 3600_000,
    servingRenewBeforeMs: 600_000,
    bundlePropagationMs: 10_000,
    maxCheckIntervalMs: 60_000,
    dnsNames: ['admission-operator.admission-system.svc', 'localhost'],
    ipAddresses: ['127.0.0.1'],
  };
  // What the certificate manager runs when there is no usable CA: a new CA and serving
  // certificate, two RSA keys, as at every CA rotation that also replaces the serving certificate.
  const rotate = (): Promise<unknown> =>
    planSecretWithKeys({ stored: undefined, policy, now: new Date(), isPublished: () => true });
  // The same two keys generated synchronously, as before: for comparison only.
  const rotateBlocking = async (): Promise<void> => {
    for (let i = 0; i < 2; i++) generateKeyPairSync('rsa', { modulusLength: 2048 });
    await new Promise((resolvePromise) => setImmediate(resolvePromise));
  };

  // A load this machine serves with room to spare, so queueing does not hide a pause.
  const durationMs = 8000;
  const intervalMs = 20;
  const label = `${1000 / intervalMs} reviews/s for ${durationMs / 1000} s`;
  await runPool(200, 8, (i) => server.post('/validate-pod', podReview(`warm-${i}`)));

  const quiet = await steadyLoad(server, durationMs, intervalMs);
  const rotatingLoad = steadyLoad(server, durationMs, intervalMs);
  const rotations = await issuingDuring(rotatingLoad, rotate);
  const rotating = await rotatingLoad;
  const blockingLoad = steadyLoad(server, durationMs, intervalMs);
  // As many rotations as the asynchronous phase managed, so both do the same work.
  const blockingRotations = await issuingDuring(blockingLoad, rotateBlocking, Math.max(1, rotations));
  const blocking = await blockingLoad;
  await server.close();

  const quietP99 = percentile(quiet.latencies, 99);
  const rotatingP99 = percentile(rotating.latencies, 99);
  const blockingP99 = percentile(blocking.latencies, 99);
  record(`rotation: validate-pod p99, ${label}, no issuing`, quietP99, 'ms', 50);
  record(`rotation: validate-pod p99, same load, issuing meanwhile`, rotatingP99, 'ms', 50);
  record('rotation: p99 while issuing / p99 without (ratio)', rotatingP99 / quietP99, '×', 2);
  inform('rotation: CA + serving certificates issued during that load', rotations, 'count');
  inform('rotation: longest event-loop stall, no issuing', quiet.longestStallMs, 'ms');
  inform('rotation: longest event-loop stall, issuing meanwhile', rotating.longestStallMs, 'ms');
  inform('rotation: for comparison, synchronous generation: p99', blockingP99, 'ms');
  inform('rotation: for comparison, synchronous generation: ratio', blockingP99 / quietP99, '×');
  inform('rotation: for comparison, synchronous generation: longest stall', blocking.longestStallMs, 'ms');
  inform('rotation: for comparison, synchronous key pairs generated', blockingRotations * 2, 'count');
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

    const metricsText = (await httpGet(operator.metricsPort, '/metrics')).body;
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

/**
 * slo-controller-config with thousands of node strategies (about 70 bytes each: 16,000 fill a
 * 1.1 MB ConfigMap): the whole check against 5,000 nodes, and the overlap search alone.
 */
function benchSloNodeStrategies(): void {
  const nodes = Array.from({ length: 5000 }, (_, i) => ({
    name: `node-${i}`,
    labels: { pool: `pool-${i}`, zone: `zone-${i % 3}`, 'kubernetes.io/hostname': `node-${i}` },
  }));
  for (const count of [4000, 16_000]) {
    const text = JSON.stringify({
      clusterStrategy: { enable: true },
      nodeStrategies: Array.from({ length: count }, (_, i) => ({
        name: `pool-${i}`,
        nodeSelector:
          i % 4 === 3
            ? { matchExpressions: [{ key: 'pool', operator: 'In', values: [`pool-${i}`, `spare-${i}`] }] }
            : { matchLabels: { pool: `pool-${i}` } },
        cpuSuppressThresholdPercent: 60,
      })),
    });
    const validateSloConfig = sloConfigValidator({
      namespace: 'koordinator-system',
      name: 'slo-controller-config',
      nodesOf: () => nodes,
    });
    const create = admissionRequest({
      kind: 'ConfigMap',
      resource: 'configmaps',
      namespace: 'koordinator-system',
      name: 'slo-controller-config',
      object: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'slo-controller-config', namespace: 'koordinator-system' },
        data: { 'resource-threshold-config': text },
      },
    });
    const state = stateSnapshot();
    record(
      `slo-config, ${count} node strategies × 5000 nodes (per call)`,
      microsPerCall(3, () => validateSloConfig(create, state)) / 1000,
      'ms',
      count === 4000 ? 250 : 1000,
    );
    const strategies = sloConfigCheckers()
      .find((checker) => checker.key === 'resource-threshold-config')
      ?.strategiesOf(text);
    if (!strategies) throw new Error('the bench config does not decode');
    record(
      `slo-config, ${count} node strategies: overlap search alone (per call)`,
      microsPerCall(3, () => searchOverlaps([...strategies])) / 1000,
      'ms',
      count === 4000 ? 25 : 100,
    );
  }
}

const { suites, flags, settings, scale, rounds, size, steps } = parseArguments(process.argv.slice(2));
const want = (name: string): boolean => suites.length === 0 || suites.includes(name);
console.log(`machine: ${machine()}`);
if (want('rules')) benchRules();
if (want('rules')) benchSloNodeStrategies();
if (want('paths')) benchPaths();
if (want('hostile')) benchHostile(hostileSettings(flags));
if (want('narrowing')) benchNarrowingSize();
if (want('server') || want('state') || want('state-server')) {
  console.log(pinServer());
  if (want('server')) await benchServer(settings, emptyState());
  if (want('state') || want('state-server')) await benchState(settings, scale);
  unpinServer();
}
if (want('rotation')) await benchRotation();
if (want('refusals')) await survive('refusals', benchRefusals);
if (want('admit')) await survive('admit', benchAdmit);
if (
  want('cluster') ||
  want('transport') ||
  want('state') ||
  want('state-e2e') ||
  want('quota-burst') ||
  want('narrowing')
) {
  const { startedNow } = await startCluster((line) => {
    console.error(`[cluster] ${line}`);
  });
  try {
    if (want('cluster')) await survive('cluster', benchCluster);
    if (want('transport')) await survive('transport', () => benchTransport(rounds));
    if (want('quota-burst'))
      await survive('quota-burst', () => benchQuotaBurst(quotaBurstSettings(flags, rounds)));
    if (want('narrowing')) await survive('narrowing', benchNarrowingCluster);
    if (want('state') || want('state-e2e'))
      await survive('state e2e', () => benchStateCluster(settings, stateSize(scale)));
  } finally {
    if (startedNow) await stopCluster(() => undefined);
  }
}
// Minutes of object creation on a fresh control plane: only when asked for by name.
if (suites.includes('scale')) await survive('scale', () => benchScale(settings, size, steps));
// Minutes of object creation (once per kept cluster) and audits of it: only when asked for by name.
if (suites.includes('audit-scale')) {
  const sized = (name: keyof ScaleSize): number =>
    flags.has(name) ? size[name] : AUDIT_SCALE_DEFAULTS[name];
  await survive('audit scale', () =>
    benchAuditScale({ pods: sized('pods'), nodes: sized('nodes'), namespaces: sized('namespaces') }),
  );
}
// koord-manager built, then minutes of bursts and paced creates per round: only when asked for by name.
if (suites.includes('koord-manager')) {
  const sideBySide = sideBySideSettings(flags, rounds);
  const { startedNow } = await startCluster((line) => {
    console.error(`[cluster] ${line}`);
  });
  try {
    await survive('koord-manager', () => benchKoordManager(sideBySide));
  } finally {
    if (startedNow) await stopCluster(() => undefined);
  }
}
// A Go build per tested release: only when asked for by name.
if (suites.includes('conditions')) await survive('conditions', benchMatchConditions);
// Minutes of idling, twice per round: only when asked for by name.
if (suites.includes('idle-cpu')) {
  const windowMs = Number(flags.get('idle-window') ?? 120_000);
  if (!Number.isFinite(windowMs) || windowMs <= 0) throw new Error('--idle-window must be a positive number');
  const { startedNow } = await startCluster((line) => {
    console.error(`[cluster] ${line}`);
  });
  try {
    await survive('idle cpu', () => benchIdleCpu({ windowMs, rounds }));
  } finally {
    if (startedNow) await stopCluster(() => undefined);
  }
}
// Minutes of hostile load: only when asked for by name.
if (suites.includes('fuzz-memory')) {
  const memorySettings = fuzzMemorySettings(flags);
  const { startedNow } = await startCluster((line) => {
    console.error(`[cluster] ${line}`);
  });
  try {
    await survive('fuzz memory', () => benchFuzzMemory(memorySettings));
  } finally {
    if (startedNow) await stopCluster(() => undefined);
  }
}
summary();
