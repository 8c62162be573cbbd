/**
 * The migration test's workload: pods that a 50 % ClusterColocationProfile with a label suffix
 * selects, created into an ElasticQuota with room for exactly `fit` of them, each create's outcome
 * read as a user sees it (admitted or refused, by whose webhook, and the API server's `Warning`
 * headers, where our webhooks in `warn` say what they would refuse). Creates go over raw HTTPS
 * because the generated client drops the warnings.
 */
import { request, Agent } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

/** The profile's selectors and what it applies (test/e2e/migration.test.ts creates it). */
export const MIGRATION_NAMESPACE_LABEL = 'e2e.admission-operator.io/migration';
export const WORKLOAD_LABEL = 'e2e.admission-operator.io/workload';
export const PROFILED_LABEL = 'e2e.admission-operator.io/profiled';
export const POOL_LABEL = 'e2e.admission-operator.io/pool';
export const POOL = 'gpu';
export const SUFFIX = '-colocated';
const QUOTA_LABEL = 'quota.scheduling.koordinator.sh/name';
/** Every pod's request: the quota's max is `fit` times this. */
export const REQUEST_MILLICPU = 100;
const NO_SUCH_NODE = { 'e2e.admission-operator.io/no-such-node': 'true' };
/** No scheduler has this name: the Pending pods cost the node's scheduler nothing. */
const NO_SCHEDULER = 'e2e-no-such-scheduler';
const MESSAGE_LIMIT = 400;

export interface CreateOutcome {
  /** The pod's labels as stored (admitted), or undefined (refused). */
  labels: Record<string, string> | undefined;
  /** The refusal's message (status 4xx), bounded. */
  refusal: string | undefined;
  /** The API server's Warning headers. */
  warnings: string[];
}

export interface WorkloadSummary {
  created: number;
  refused: number;
  /** Admitted pods that got the profile's label. */
  profiled: number;
  /** Admitted pods whose pool label carries the suffix once, and more than once. */
  suffixedOnce: number;
  suffixedTwice: number;
  /** Admitted pods whose pool label is neither its own value nor suffixed once or more. */
  otherPool: number;
}

export function quotaManifest(namespace: string, name: string, fit: number): string {
  return [
    'apiVersion: scheduling.sigs.k8s.io/v1alpha1',
    'kind: ElasticQuota',
    `metadata: {name: ${name}, namespace: ${namespace}}`,
    `spec: {min: {cpu: "0"}, max: {cpu: "${fit * REQUEST_MILLICPU}m"}}`,
    '',
  ].join('\n');
}

/** The profile: half the workload's pods, a label and a suffix on the pool label. */
export function profileManifest(name: string): string {
  return [
    'apiVersion: config.koordinator.sh/v1alpha1',
    'kind: ClusterColocationProfile',
    `metadata: {name: ${name}}`,
    'spec:',
    `  namespaceSelector: {matchLabels: {${MIGRATION_NAMESPACE_LABEL}: "true"}}`,
    `  selector: {matchLabels: {${WORKLOAD_LABEL}: "true"}}`,
    '  probability: "50%"',
    `  labels: {${PROFILED_LABEL}: "true"}`,
    `  labelSuffixes: {${POOL_LABEL}: "${SUFFIX}"}`,
    '',
  ].join('\n');
}

/** A workload pod counted against `quota`; `cpu` overrides its request (a probe far past any quota). */
export function workloadPod(quota: string, cpu = `${REQUEST_MILLICPU}m`): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: 'migration-',
      labels: { [QUOTA_LABEL]: quota, [WORKLOAD_LABEL]: 'true', [POOL_LABEL]: POOL },
    },
    spec: {
      schedulerName: NO_SCHEDULER,
      nodeSelector: NO_SUCH_NODE,
      containers: [{ name: 'main', image: 'registry.invalid/app:1', resources: { requests: { cpu } } }],
    },
  };
}

/** Creates objects through the API server with the kubeconfig's credentials, keeping each answer's warnings. */
export class WarningClient {
  private constructor(
    private readonly server: URL,
    private readonly agent: Agent,
  ) {}

  static async of(kubeConfig: KubeConfig): Promise<WarningClient> {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig names no cluster');
    const options: { ca?: unknown; cert?: unknown; key?: unknown } = {};
    await kubeConfig.applyToHTTPSOptions(options as Parameters<KubeConfig['applyToHTTPSOptions']>[0]);
    const agent = new Agent({
      keepAlive: true,
      maxSockets: 16,
      ca: options.ca as string | Buffer | undefined,
      cert: options.cert as string | Buffer | undefined,
      key: options.key as string | Buffer | undefined,
    });
    return new WarningClient(new URL(cluster.server), agent);
  }

  close(): void {
    this.agent.destroy();
  }

  /** POSTs `body` to `path` (with `?dryRun=All` when `dryRun`). */
  create(path: string, body: object, dryRun = false): Promise<CreateOutcome> {
    const url = new URL(path + (dryRun ? '?dryRun=All' : ''), this.server);
    const payload = JSON.stringify(body);
    return new Promise((resolvePromise, reject) => {
      const call = request(
        url,
        {
          method: 'POST',
          agent: this.agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
          timeout: 60_000,
        },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => {
            if (text.length < 1 << 20) text += chunk;
          });
          response.on('end', () => {
            const warnings = ([] as string[]).concat(response.headers.warning ?? []);
            let parsed: { metadata?: { labels?: Record<string, string> }; message?: unknown } = {};
            try {
              parsed = JSON.parse(text) as typeof parsed;
            } catch {
              // A body that is not JSON is reported as the refusal's text below.
            }
            const status = response.statusCode ?? 0;
            if (status >= 200 && status < 300) {
              resolvePromise({ labels: parsed.metadata?.labels ?? {}, refusal: undefined, warnings });
            } else if (status >= 400 && status < 500) {
              const message = typeof parsed.message === 'string' ? parsed.message : text;
              resolvePromise({ labels: undefined, refusal: message.slice(0, MESSAGE_LIMIT), warnings });
            } else {
              reject(new Error(`POST ${path} answered ${status}: ${text.slice(0, MESSAGE_LIMIT)}`));
            }
          });
        },
      );
      call.on('timeout', () => call.destroy(new Error(`POST ${path} timed out`)));
      call.on('error', reject);
      call.end(payload);
    });
  }
}

/** Creates `count` workload pods into `quota`, `concurrency` at a time. */
export async function createWorkload(
  client: WarningClient,
  namespace: string,
  quota: string,
  count: number,
  concurrency: number,
): Promise<CreateOutcome[]> {
  const outcomes: CreateOutcome[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      next += 1;
      outcomes.push(await client.create(`/api/v1/namespaces/${namespace}/pods`, workloadPod(quota)));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return outcomes;
}

/** Counts what the outcomes show: admitted, refused, profiled, suffixed once or more. */
export function summarize(outcomes: readonly CreateOutcome[]): WorkloadSummary {
  const summary: WorkloadSummary = {
    created: 0,
    refused: 0,
    profiled: 0,
    suffixedOnce: 0,
    suffixedTwice: 0,
    otherPool: 0,
  };
  for (const { labels } of outcomes) {
    if (!labels) {
      summary.refused += 1;
      continue;
    }
    summary.created += 1;
    if (labels[PROFILED_LABEL] === 'true') summary.profiled += 1;
    const pool = labels[POOL_LABEL] ?? '';
    if (pool === POOL) continue;
    if (pool === POOL + SUFFIX) summary.suffixedOnce += 1;
    else if (pool.startsWith(POOL + SUFFIX + SUFFIX)) summary.suffixedTwice += 1;
    else summary.otherPool += 1;
  }
  return summary;
}
