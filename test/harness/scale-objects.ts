/**
 * A cluster's worth of ordinary objects, created through the local API server: namespaces,
 * nodes (labels, conditions and an image list of a real node's size) and pods (two containers and
 * the metadata a Deployment's pods carry). The pods ask for a node label no node has, so nothing
 * would run them even with a scheduler: what is measured is the operator's watch of them.
 *
 * Objects are created over keep-alive connections, many at once, as raw JSON: tens of thousands
 * of creates through the generated client would take longer than what they measure.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { Agent, request } from 'node:https';
import type { OutgoingHttpHeaders } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ScaleSize {
  pods: number;
  nodes: number;
  namespaces: number;
}

/** The label every object created here carries, so a run can find (and delete) its own. */
export const SCALE_LABEL = 'bench.admission-operator/scale';
/** What the pods select on: no node carries it. */
const UNSCHEDULABLE = { 'bench.admission-operator/never': 'true' };
const CONCURRENCY = 32;

export interface ApiClient {
  /** POSTs `body` to `path`; an object that already exists counts as created. */
  create(path: string, body: unknown): Promise<void>;
  /** DELETEs `path` (a collection with a query deletes what it selects); absent is fine. */
  delete(path: string): Promise<void>;
  getJson(path: string): Promise<unknown>;
  close(): void;
}

/** Raw JSON calls with the kubeconfig's client certificate, over one keep-alive pool. */
export async function apiClient(kubeConfig: KubeConfig): Promise<ApiClient> {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig names no cluster');
  const options: {
    ca?: Buffer | string;
    cert?: Buffer | string;
    key?: Buffer | string;
    headers?: OutgoingHttpHeaders;
  } = {};
  await kubeConfig.applyToHTTPSOptions(options);
  const agent = new Agent({
    keepAlive: true,
    maxSockets: CONCURRENCY,
    ...(options.ca ? { ca: options.ca } : {}),
    ...(options.cert ? { cert: options.cert } : {}),
    ...(options.key ? { key: options.key } : {}),
  });
  const call = (method: string, path: string, body?: string): Promise<{ status: number; text: string }> =>
    new Promise((resolvePromise, reject) => {
      const req = request(
        new URL(path, cluster.server),
        {
          method,
          agent,
          headers: {
            ...(options.headers ?? {}),
            Accept: 'application/json',
            ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            resolvePromise({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  /** Retries what a busy API server answers (429, 5xx) and lost connections, a few times. */
  const withRetries = async (
    method: string,
    path: string,
    body?: string,
  ): Promise<{ status: number; text: string }> => {
    for (let attempt = 1; ; attempt++) {
      try {
        const answer = await call(method, path, body);
        if ((answer.status === 429 || answer.status >= 500) && attempt < 8) {
          await sleep(100 * attempt);
          continue;
        }
        return answer;
      } catch (error) {
        if (attempt >= 8) throw error;
        await sleep(100 * attempt);
      }
    }
  };
  return {
    async create(path, body) {
      const answer = await withRetries('POST', path, JSON.stringify(body));
      if (answer.status >= 300 && answer.status !== 409)
        throw new Error(`POST ${path}: ${answer.status} ${answer.text.slice(0, 300)}`);
    },
    async delete(path) {
      const answer = await withRetries('DELETE', path);
      if (answer.status >= 300 && answer.status !== 404)
        throw new Error(`DELETE ${path}: ${answer.status} ${answer.text.slice(0, 300)}`);
    },
    async getJson(path) {
      const answer = await withRetries('GET', path);
      if (answer.status !== 200)
        throw new Error(`GET ${path}: ${answer.status} ${answer.text.slice(0, 300)}`);
      return JSON.parse(answer.text) as unknown;
    },
    close() {
      agent.destroy();
    },
  };
}

/** Runs `task` for 0..count-1, `concurrency` at a time. */
export async function inPool(
  count: number,
  concurrency: number,
  task: (i: number) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

export const scaleNamespaceName = (prefix: string, i: number): string => `${prefix}-ns-${i}`;

function node(prefix: string, i: number): unknown {
  const zone = `zone-${i % 3}`;
  const now = new Date().toISOString();
  const condition = (type: string, status: string, reason: string, message: string): unknown => ({
    type,
    status,
    reason,
    message,
    lastHeartbeatTime: now,
    lastTransitionTime: now,
  });
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: `${prefix}-node-${i}`,
      labels: {
        [SCALE_LABEL]: prefix,
        'kubernetes.io/hostname': `${prefix}-node-${i}`,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'beta.kubernetes.io/os': 'linux',
        'beta.kubernetes.io/arch': 'amd64',
        'node.kubernetes.io/instance-type': i % 10 === 0 ? 'p4d.24xlarge' : 'm6i.4xlarge',
        'topology.kubernetes.io/region': 'region-1',
        'topology.kubernetes.io/zone': zone,
        'node-role.kubernetes.io/worker': '',
        'node-pool': `pool-${i % 8}`,
        ...(i % 10 === 0
          ? { 'nvidia.com/gpu.product': 'NVIDIA-A100-SXM4-40GB', 'nvidia.com/gpu.count': '8' }
          : {}),
      },
      annotations: {
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
      },
    },
    spec: {
      podCIDR: `10.${(i >> 8) & 255}.${i & 255}.0/24`,
      providerID: `bench:///${zone}/${prefix}-node-${i}`,
    },
    status: {
      capacity: { cpu: '16', memory: '65842236Ki', pods: '110', 'ephemeral-storage': '203070420Ki' },
      allocatable: { cpu: '15890m', memory: '64692220Ki', pods: '110', 'ephemeral-storage': '187149698763' },
      conditions: [
        condition(
          'MemoryPressure',
          'False',
          'KubeletHasSufficientMemory',
          'kubelet has sufficient memory available',
        ),
        condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
        condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
        condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
      ],
      addresses: [
        { type: 'InternalIP', address: `192.0.2.${i % 250}` },
        { type: 'Hostname', address: `${prefix}-node-${i}` },
      ],
      nodeInfo: {
        machineID: `${i}`.padStart(32, '0'),
        systemUUID: `${i}`.padStart(32, '0'),
        bootID: `${i}`.padStart(32, '0'),
        kernelVersion: '6.1.0-bench',
        osImage: 'Debian GNU/Linux 12 (bookworm)',
        containerRuntimeVersion: 'containerd://2.1.0',
        kubeletVersion: 'v1.35.4',
        kubeProxyVersion: 'v1.35.4',
        operatingSystem: 'linux',
        architecture: 'amd64',
      },
      // A busy node lists a few dozen images, each by tag and by digest.
      images: Array.from({ length: 40 }, (_, k) => ({
        names: [
          `registry.invalid/team-${k % 7}/service-${k}@sha256:${'0123456789abcdef'.repeat(4)}`,
          `registry.invalid/team-${k % 7}/service-${k}:v1.${k}.0`,
        ],
        sizeBytes: 50_000_000 + k * 1_234_567,
      })),
    },
  };
}

function pod(prefix: string, i: number, namespace: string): unknown {
  const app = `app-${i % 200}`;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${app}-${(i * 2654435761) % 4294967296}`,
      namespace,
      labels: {
        [SCALE_LABEL]: prefix,
        app,
        'app.kubernetes.io/name': app,
        'app.kubernetes.io/part-of': `system-${i % 20}`,
        'pod-template-hash': `${(i % 200) * 7919}`,
        tier: i % 2 === 0 ? 'backend' : 'frontend',
      },
      annotations: {
        'prometheus.io/scrape': 'true',
        'prometheus.io/port': '9090',
        'kubectl.kubernetes.io/restartedAt': '2026-11-01T00:00:00Z',
      },
    },
    spec: {
      nodeSelector: UNSCHEDULABLE,
      terminationGracePeriodSeconds: 30,
      containers: [
        {
          name: 'app',
          image: `registry.invalid/team/${app}:v1.2.3`,
          ports: [
            { name: 'http', containerPort: 8080 },
            { name: 'metrics', containerPort: 9090 },
          ],
          env: [
            { name: 'APP_NAME', value: app },
            { name: 'LOG_LEVEL', value: 'info' },
            { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
          ],
          resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { cpu: '1', memory: '512Mi' } },
          readinessProbe: { httpGet: { path: '/ready', port: 8080 }, periodSeconds: 10 },
          livenessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 20 },
          volumeMounts: [{ name: 'config', mountPath: '/etc/app' }],
        },
        {
          name: 'proxy',
          image: 'registry.invalid/mesh/proxy:1.24.0',
          args: ['proxy', 'sidecar', '--concurrency=2'],
          resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
        },
      ],
      volumes: [{ name: 'config', configMap: { name: `${app}-config` } }],
    },
  };
}

export interface Progress {
  (line: string): void;
}

const NONE: ScaleSize = { pods: 0, nodes: 0, namespaces: 0 };

/**
 * Grows the objects under `prefix` from `from` (what an earlier call created) to `size`; an object
 * that exists already counts as created.
 */
export async function createScaleObjects(
  client: ApiClient,
  prefix: string,
  size: ScaleSize,
  progress: Progress = () => undefined,
  from: ScaleSize = NONE,
): Promise<void> {
  const range = (kind: keyof ScaleSize, create: (i: number) => Promise<void>): Promise<void> =>
    inPool(Math.max(0, size[kind] - from[kind]), CONCURRENCY, (i) => create(from[kind] + i));
  await range('namespaces', (i) =>
    client.create('/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name: scaleNamespaceName(prefix, i),
        labels: { [SCALE_LABEL]: prefix, team: `team-${i % 50}` },
      },
    }),
  );
  progress(`${size.namespaces} namespaces`);
  await range('nodes', (i) => client.create('/api/v1/nodes', node(prefix, i)));
  progress(`${size.nodes} nodes`);
  let created = from.pods;
  await range('pods', async (i) => {
    const namespace = scaleNamespaceName(prefix, i % size.namespaces);
    // The ServiceAccount admission plugin refuses pods until the namespace's default ServiceAccount exists.
    for (let attempt = 0; ; attempt++) {
      try {
        await client.create(`/api/v1/namespaces/${namespace}/pods`, pod(prefix, i, namespace));
        break;
      } catch (error) {
        if (attempt > 100 || !/serviceaccount/i.test((error as Error).message)) throw error;
        await sleep(200);
      }
    }
    if (++created % 10_000 === 0) progress(`${created} of ${size.pods} pods`);
  });
}

/** Deletes what createScaleObjects made under `prefix` (pods go with their namespaces). */
export async function deleteScaleObjects(client: ApiClient, prefix: string, size: ScaleSize): Promise<void> {
  const selector = `labelSelector=${encodeURIComponent(`${SCALE_LABEL}=${prefix}`)}`;
  await client.delete(`/api/v1/nodes?${selector}`);
  await inPool(size.namespaces, CONCURRENCY, async (i) => {
    const namespace = scaleNamespaceName(prefix, i);
    await client.delete(`/api/v1/namespaces/${namespace}/pods?${selector}&gracePeriodSeconds=0`);
    await client.delete(`/api/v1/namespaces/${namespace}`);
  });
}
