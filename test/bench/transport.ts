/**
 * `transport`: pod creates through the local API server, in namespaces that differ only in which
 * webhooks see them: none; the three pod webhooks answered by a bare HTTPS server (a no-op
 * webhook); the same three answered by our app over HTTP/1.1; and by our app offering HTTP/2
 * (ALPN h2, HTTP/1.1 still allowed), which the API server then uses. Our overhead is reported as
 * a ratio of the no-op webhook's overhead, and HTTP/2 as a ratio of HTTP/1.1.
 */
import { createSecureServer, type ServerHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import {
  AdmissionregistrationV1Api,
  CoreV1Api,
  type KubeConfig,
  type V1ValidatingWebhook,
} from '@kubernetes/client-node';
import { DEFAULT_TIER_LABEL_KEY } from '../../webhook/names.js';
import { clusterKubeConfig, waitFor } from '../harness/cluster.js';
import { benchCertificates, startBareServer, type BenchCertificates, type Running } from './references.js';
import { inform, percentile, record } from './report.js';
import { buildOurApp, startOurApp } from './server.js';
import { emptyState } from './state.js';

const VARIANT_LABEL = 'admission-operator.bench/variant';
const MUTATING_PATHS = ['/mutate-pod', '/mutate-pod-gpu-class'];
const VALIDATING_PATHS = ['/validate-pod'];

/** Our app over HTTP/2 (with HTTP/1.1 allowed), as node:http2 serves Koa through its compatibility API. */
async function startOurAppHttp2(certs: BenchCertificates): Promise<Running> {
  const { app, close } = buildOurApp(emptyState());
  const handle = app.callback();
  const server = createSecureServer(
    { cert: certs.certificatePem, key: certs.privateKeyPem, allowHTTP1: true, minVersion: 'TLSv1.2' },
    (req, res) => {
      void handle(req, res);
    },
  );
  const sessions = new Set<ServerHttp2Session>();
  server.on('session', (session: ServerHttp2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  await new Promise<void>((resolvePromise) => server.listen(0, '127.0.0.1', resolvePromise));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      await new Promise<void>((resolvePromise) => {
        server.close(() => {
          resolvePromise();
        });
        for (const session of sessions) session.destroy();
      });
      close();
    },
  };
}

interface Variant {
  name: string;
  namespace: string;
  port?: number;
}

function webhook(name: string, variant: Variant, path: string, ca: string): V1ValidatingWebhook {
  return {
    name: `${name}.${variant.name}.bench.admission-operator.io`,
    clientConfig: {
      url: `https://127.0.0.1:${variant.port}${path}`,
      caBundle: Buffer.from(ca).toString('base64'),
    },
    rules: [
      {
        apiGroups: [''],
        apiVersions: ['v1'],
        operations: ['CREATE'],
        resources: ['pods'],
        scope: 'Namespaced',
      },
    ],
    namespaceSelector: { matchLabels: { [VARIANT_LABEL]: variant.name } },
    failurePolicy: 'Fail',
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    timeoutSeconds: 5,
  };
}

async function register(
  kc: KubeConfig,
  name: string,
  variants: Variant[],
  ca: string,
): Promise<() => Promise<void>> {
  const admission = kc.makeApiClient(AdmissionregistrationV1Api);
  const served = variants.filter((variant) => variant.port !== undefined);
  await admission.createMutatingWebhookConfiguration({
    body: {
      metadata: { name },
      webhooks: served.flatMap((variant) =>
        MUTATING_PATHS.map((path) => ({
          ...webhook(path.slice(1), variant, path, ca),
          reinvocationPolicy: 'Never',
        })),
      ),
    },
  });
  await admission.createValidatingWebhookConfiguration({
    body: {
      metadata: { name },
      webhooks: served.flatMap((variant) =>
        VALIDATING_PATHS.map((path) => webhook(path.slice(1), variant, path, ca)),
      ),
    },
  });
  return async () => {
    await admission.deleteMutatingWebhookConfiguration({ name }).catch(() => undefined);
    await admission.deleteValidatingWebhookConfiguration({ name }).catch(() => undefined);
  };
}

/** A GPU pod, so /mutate-pod-gpu-class has its work to do in a tiered namespace. */
function gpuPod(): object {
  return {
    metadata: { generateName: 'bench-', labels: { app: 'web' } },
    spec: {
      containers: [
        {
          name: 'main',
          image: 'registry.invalid/bench:1',
          resources: { limits: { 'nvidia.com/gpu': '1' }, requests: { cpu: '100m', memory: '64Mi' } },
        },
      ],
    },
  };
}

async function createPods(
  core: CoreV1Api,
  namespace: string,
  count: number,
  concurrency: number,
): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        next++;
        const started = performance.now();
        await core.createNamespacedPod({ namespace, body: gpuPod() });
        latencies.push(performance.now() - started);
      }
    }),
  );
  return latencies.sort((a, b) => a - b);
}

export async function benchTransport(rounds: number): Promise<void> {
  const kc = await clusterKubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const certs = await benchCertificates();
  const bare = await startBareServer(certs);
  const http1 = await startOurApp(certs, emptyState());
  const http2 = await startOurAppHttp2(certs);
  const suffix = Date.now().toString(36);
  const variants: Variant[] = [
    { name: 'none', namespace: `bench-none-${suffix}` },
    { name: 'bare', namespace: `bench-bare-${suffix}`, port: bare.port },
    { name: 'http1', namespace: `bench-http1-${suffix}`, port: http1.port },
    { name: 'http2', namespace: `bench-http2-${suffix}`, port: http2.port },
  ];
  for (const variant of variants) {
    await core.createNamespace({
      body: {
        metadata: {
          name: variant.namespace,
          labels: { [VARIANT_LABEL]: variant.name, [DEFAULT_TIER_LABEL_KEY]: 'gold' },
        },
      },
    });
    await waitFor('the default ServiceAccount', () =>
      core.readNamespacedServiceAccount({ namespace: variant.namespace, name: 'default' }),
    );
  }
  const unregister = await register(kc, `bench-transport-${suffix}`, variants, certs.ca);
  try {
    // Webhook configurations take effect once the API server's informer has them.
    await waitFor(
      'the bench webhooks in force',
      async () => {
        try {
          await core.createNamespacedPod({
            namespace: variants[1]!.namespace,
            body: gpuPod(),
            dryRun: 'All',
          });
          return true;
        } catch {
          return false;
        }
      },
      { intervalMs: 200 },
    );
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 2000));
    const serial = new Map<string, number[]>();
    const burst = new Map<string, number[]>();
    for (let round = 0; round < rounds; round++) {
      // Alternating, so a busy moment on the shared machine falls on every variant alike.
      for (const variant of variants) {
        serial.set(variant.name, [
          ...(serial.get(variant.name) ?? []),
          ...(await createPods(core, variant.namespace, 60, 1)),
        ]);
      }
      for (const variant of variants) {
        burst.set(variant.name, [
          ...(burst.get(variant.name) ?? []),
          ...(await createPods(core, variant.namespace, 150, 30)),
        ]);
      }
    }
    const p50 = (map: Map<string, number[]>, name: string): number =>
      percentile(
        [...(map.get(name) ?? [])].sort((a, b) => a - b),
        50,
      );
    const p99 = (map: Map<string, number[]>, name: string): number =>
      percentile(
        [...(map.get(name) ?? [])].sort((a, b) => a - b),
        99,
      );
    for (const [label, map] of [
      ['one at a time', serial],
      ['30 concurrent', burst],
    ] as const) {
      for (const variant of variants) {
        inform(`transport: pod create, ${label}, ${variant.name}: p50`, p50(map, variant.name), 'ms');
        inform(`transport: pod create, ${label}, ${variant.name}: p99`, p99(map, variant.name), 'ms');
      }
      const none = p50(map, 'none');
      const overhead = (name: string): number => p50(map, name) - none;
      inform(`transport: ${label}, p50 added by the no-op webhooks`, overhead('bare'), 'ms');
      record(
        `transport: ${label}, p50 added by ours (HTTP/1.1) / by the no-op`,
        overhead('http1') / overhead('bare'),
        '×',
        1.1,
      );
      inform(
        `transport: ${label}, p50 added by ours (HTTP/2) / by the no-op`,
        overhead('http2') / overhead('bare'),
        '×',
      );
      inform(
        `transport: ${label}, p50 HTTP/2 / HTTP/1.1 (whole create)`,
        p50(map, 'http2') / p50(map, 'http1'),
        '×',
      );
      inform(
        `transport: ${label}, p99 HTTP/2 / HTTP/1.1 (whole create)`,
        p99(map, 'http2') / p99(map, 'http1'),
        '×',
      );
    }
  } finally {
    await unregister();
    for (const variant of variants)
      await core.deleteNamespace({ name: variant.namespace }).catch(() => undefined);
    await bare.close();
    await http1.close();
    await http2.close();
  }
}
