/**
 * `server`: every pod path through our app (createAdmissionApp on AdmissionHttpsServer, logging
 * as the operator does) against a bare HTTPS server and a minimal Koa app, in the same run.
 */
import type Koa from 'koa';
import { pino } from 'pino';
import { operatorLogger } from '../../operator/logger.js';
import { DEFAULT_TIER_LABEL_KEY } from '../../webhook/names.js';
import { parseFeatureGates } from '../../webhook/feature-gates.js';
import { createAdmissionApp } from '../../webhook/server/app.js';
import { AdmissionHttpsServer } from '../../webhook/server/https-server.js';
import { admissionMetrics, type AdmissionMetrics } from '../../webhook/metrics/admission-metrics.js';
import type { StateSnapshot } from '../../webhook/state.js';
import { enabledWebhooks, type WebhookEntry } from '../../webhook/table.js';
import { measurePath, type DriveSettings, type PathFigures } from './drive.js';
import { apiServerCallers } from '../harness/allowing-server.js';
import {
  benchCertificates,
  startBareServer,
  startMinimalKoa,
  type BenchCertificates,
  type Running,
} from './references.js';
import { inform, record, recordShare } from './report.js';
import { measureSteps, reportSteps } from './steps.js';

export const BENCH_NAMESPACE = 'bench';
export const TIERED_NAMESPACE = 'bench-gpu';

/** A review of a pod of four containers (twenty env vars each), as a Deployment would create it. */
export function podReviewBody(uid: string, namespace: string, gpu = false): string {
  const containers = Array.from({ length: 4 }, (_, i) => ({
    name: `c${i}`,
    image: `registry.example/app:${i}`,
    env: Array.from({ length: 20 }, (_, j) => ({ name: `VAR_${j}`, value: `value-${j}` })),
    resources: {
      requests: { cpu: '500m', memory: '512Mi', ...(gpu && i === 0 ? { 'nvidia.com/gpu': '1' } : {}) },
      limits: { cpu: '1', memory: '1Gi', ...(gpu && i === 0 ? { 'nvidia.com/gpu': '1' } : {}) },
    },
  }));
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      namespace,
      operation: 'CREATE',
      userInfo: { username: 'system:serviceaccount:kube-system:replicaset-controller' },
      object: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          generateName: 'web-7d4b9c-',
          namespace,
          labels: { app: 'web', 'pod-template-hash': '7d4b9c' },
        },
        spec: { containers },
      },
      oldObject: null,
      dryRun: false,
    },
  });
}

/** The pod paths, each with the review it is driven with. */
export const POD_PATHS: readonly { path: string; label: string; body: string }[] = [
  {
    path: '/mutate-pod',
    label: '/mutate-pod (no profile matches)',
    body: podReviewBody('00000000-0000-0000-0000-000000000001', BENCH_NAMESPACE),
  },
  {
    path: '/validate-pod',
    label: '/validate-pod',
    body: podReviewBody('00000000-0000-0000-0000-000000000002', BENCH_NAMESPACE),
  },
  {
    path: '/mutate-pod-gpu-class',
    label: '/mutate-pod-gpu-class (GPU pod, tiered ns)',
    body: podReviewBody('00000000-0000-0000-0000-000000000003', TIERED_NAMESPACE, true),
  },
];

/** Our admission app as the operator builds it (its webhooks, metrics and decision log), on `state`. */
export function buildOurApp(state: StateSnapshot): {
  app: Koa;
  table: readonly WebhookEntry[];
  metrics: AdmissionMetrics;
  close: () => void;
} {
  const table = enabledWebhooks({
    namespace: 'admission-system',
    excludedNamespaces: [],
    tierLabelKey: DEFAULT_TIER_LABEL_KEY,
    gpuResourceNames: ['nvidia.com/gpu'],
    configMaps: [],
    koordinatorNamespace: 'koordinator-system',
    gates: parseFeatureGates(''),
  });
  const metrics = admissionMetrics();
  const logger = operatorLogger('info', '/dev/null');
  const app = createAdmissionApp({
    webhooks: () => table,
    state: () => state,
    readiness: () => Promise.resolve({ ready: true, checks: {} }),
    metrics,
    logger,
    reserve: () => undefined,
    // Verification off: the references verify no client either.
    callers: apiServerCallers(false),
  });
  return {
    app,
    table,
    metrics,
    close: () => {
      logger.flush();
    },
  };
}

/**
 * Our admission app as the operator builds it, on state `state`, served as the operator serves
 * it. Decisions are logged as the operator logs them, to /dev/null rather than a terminal.
 */
export async function startOurApp(certs: BenchCertificates, state: StateSnapshot): Promise<Running> {
  const { app, metrics, close } = buildOurApp(state);
  const server = new AdmissionHttpsServer(app, pino({ level: 'silent' }), metrics);
  const port = await server.listen(0, '127.0.0.1', { ...certs, clientCaPem: '' });
  return {
    port,
    close: async () => {
      await server.close(1000);
      close();
    },
  };
}

export interface ReferenceRates {
  bare: PathFigures;
  koa: PathFigures;
}

/** Measures the bare server and the minimal Koa app, each on the review of /validate-pod. */
export async function measureReferences(
  certs: BenchCertificates,
  settings: DriveSettings,
): Promise<ReferenceRates> {
  const body = POD_PATHS[1]!.body;
  const measured: PathFigures[] = [];
  for (const [label, start] of [
    ['bare Node HTTPS server', startBareServer],
    ['minimal Koa app', startMinimalKoa],
  ] as const) {
    const running = await start(certs);
    const figures = await measurePath({ port: running.port, ca: certs.ca }, '/', body, settings);
    await running.close();
    inform(`reference: ${label}, peak (wall clock)`, figures.rate, 'rev/s');
    inform(`reference: ${label}, per CPU-second of the server`, figures.capacity, 'rev/s');
    inform(`reference: ${label}, p50 at half peak`, figures.p50Ms, 'ms');
    inform(`reference: ${label}, p99 at half peak`, figures.p99Ms, 'ms');
    measured.push(figures);
  }
  const [bare, koa] = measured as [PathFigures, PathFigures];
  inform('reference: minimal Koa / bare server, per CPU-second', (100 * koa.capacity) / bare.capacity, '%');
  inform('reference: minimal Koa / bare server, wall clock', (100 * koa.rate) / bare.rate, '%');
  return { bare, koa };
}

/** Records one path's figures against the references. */
export function reportPath(
  prefix: string,
  label: string,
  measured: PathFigures,
  references: ReferenceRates,
): void {
  const name = `${prefix}: ${label}`;
  inform(`${name}, peak (wall clock)`, measured.rate, 'rev/s');
  inform(`${name}, per CPU-second of the server`, measured.capacity, 'rev/s');
  recordShare(`${name}, share of minimal Koa (per CPU-s)`, measured.capacity, references.koa.capacity, 90);
  inform(
    `${name}, share of bare server (per CPU-s)`,
    (100 * measured.capacity) / references.bare.capacity,
    '%',
  );
  inform(`${name}, share of minimal Koa (wall clock)`, (100 * measured.rate) / references.koa.rate, '%');
  inform(`${name}, p50 at half peak`, measured.p50Ms, 'ms');
  record(`${name}, p99 at half peak`, measured.p99Ms, 'ms', 2);
  if (measured.errors > 0) record(`${name}, errors`, measured.errors, 'count', 0);
}

/** Measures every pod path (or those in `only`) through our app on `state`, recording each against the references. */
export async function measureOurPaths(
  certs: BenchCertificates,
  state: StateSnapshot,
  references: ReferenceRates,
  settings: DriveSettings,
  prefix: string,
  only?: readonly string[],
): Promise<Map<string, PathFigures>> {
  const running = await startOurApp(certs, state);
  const { table } = buildOurApp(state);
  const figures = new Map<string, PathFigures>();
  for (const { path, label, body } of POD_PATHS) {
    if (only && !only.includes(path)) continue;
    const measured = await measurePath({ port: running.port, ca: certs.ca }, path, body, settings);
    figures.set(path, measured);
    reportPath(prefix, label, measured, references);
    const entry = table.find((candidate) => candidate.path === path);
    if (entry) {
      const gap = 1e6 / measured.capacity - 1e6 / references.koa.capacity;
      reportSteps(`${prefix}: ${label}, in process`, measureSteps(entry, body, state), gap);
    }
  }
  await running.close();
  inform(
    `${prefix}: resident memory of the bench process (server side)`,
    process.memoryUsage().rss / 2 ** 20,
    'MiB',
  );
  return figures;
}

export async function benchServer(settings: DriveSettings, state: StateSnapshot): Promise<void> {
  const certs = await benchCertificates();
  const references = await measureReferences(certs, settings);
  await measureOurPaths(certs, state, references, settings, 'server');
}
