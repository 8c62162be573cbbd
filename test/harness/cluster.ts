/**
 * Access to the real local control plane for integration tests.
 *
 * Under `npm test` the runner has already started the shared cluster. A test file run on its
 * own starts it here if needed (and leaves it running for the next run).
 */
import { governedMetadata } from './governed-pod.js';
import { uniqueName } from './unique-name.js';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { TestContext } from 'node:test';
import { promisify } from 'node:util';
import {
  ApiextensionsV1Api,
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { applyYaml as applyYamlWith } from '../../operator/kube/apply.js';
import {
  logTails,
  startCluster,
  type ClusterState,
  type WebhookClient,
} from '../../scripts/cluster/control-plane.js';
import { binaries, kubeconfigPath, repoRoot } from '../../scripts/cluster/layout.js';

const execFileAsync = promisify(execFile);

let ready: Promise<KubeConfig> | undefined;
let started: ClusterState | undefined;

/** A KubeConfig for the local cluster's admin; fails loudly, with log tails, if it cannot start. */
export function clusterKubeConfig(): Promise<KubeConfig> {
  ready ??= (async () => {
    try {
      ({ state: started } = await startCluster((line) => {
        console.error(`[cluster] ${line}`);
      }));
    } catch (error) {
      throw new Error(
        `the local control plane did not start: ${(error as Error).message}\n${await logTails()}`,
        { cause: error },
      );
    }
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    return kc;
  })();
  return ready;
}

/** The client certificate the local API server presents to webhooks, and the CA that issued it. */
export async function webhookClient(): Promise<WebhookClient> {
  await clusterKubeConfig();
  const client = started?.webhookClient;
  if (!client) throw new Error('the local control plane presents no client certificate to webhooks');
  return client;
}

/** The operator's flags that verify callers as the local API server presents itself. */
export async function clientVerificationArgs(): Promise<string[]> {
  const client = await webhookClient();
  return [`--client-ca-file=${client.caFile}`, `--client-subject-names=${client.subject}`];
}

/** The local API server's webhook client certificate, to call the operator as it does. */
export async function apiServerClient(): Promise<{ cert: string; key: string }> {
  const client = await webhookClient();
  const [cert, key] = await Promise.all([
    readFile(client.certFile, 'utf8'),
    readFile(client.keyFile, 'utf8'),
  ]);
  return { cert, key };
}

export async function coreApi(): Promise<CoreV1Api> {
  return (await clusterKubeConfig()).makeApiClient(CoreV1Api);
}

export async function objectApi(): Promise<KubernetesObjectApi> {
  return KubernetesObjectApi.makeApiClient(await clusterKubeConfig());
}

/** A short random suffix for names that must not collide across tests and runs. */
export function uniqueSuffix(): string {
  return randomBytes(3).toString('hex');
}

/** Creates a namespace for this test alone and deletes it (without waiting) when the test ends. */
export async function testNamespace(t: TestContext, prefix = 'test'): Promise<string> {
  const core = await coreApi();
  const name = `${prefix}-${uniqueSuffix()}`;
  await core.createNamespace({
    body: { metadata: { name, labels: { 'admission-operator.test/owner': 'tests' } } },
  });
  t.after(async () => {
    await core.deleteNamespace({ name }).catch(() => undefined);
  });
  return name;
}

/**
 * Server-side applies every document of a YAML text (into `namespace` where the document
 * has none) and returns the objects as the API server stored them.
 */
export async function applyYaml(yamlText: string, namespace?: string): Promise<KubernetesObject[]> {
  return applyYamlWith(await clusterKubeConfig(), yamlText, 'admission-operator-tests', namespace);
}

/** Polls `probe` until it returns a value other than undefined/false, or fails with `description`. */
export async function waitFor<T>(
  description: string,
  probe: () => Promise<T | undefined | false>,
  { timeoutMs = 30_000, intervalMs = 100 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${description}${cause}`);
    }
    await new Promise((resolveTimer) => setTimeout(resolveTimer, intervalMs));
  }
}

/** Runs the project's own kubectl against the local cluster. Rejects with stderr on a non-zero exit. */
export async function kubectl(args: string[], input?: string): Promise<{ stdout: string; stderr: string }> {
  await clusterKubeConfig();
  const child = execFileAsync(binaries.kubectl, args, {
    env: { ...process.env, KUBECONFIG: kubeconfigPath },
    // A CRD's JSON can be megabytes (Kthena's ModelServing: 1.4 MB of YAML).
    maxBuffer: 64 * 2 ** 20,
  });
  if (input !== undefined) {
    child.child.stdin?.end(input);
  }
  return child;
}

/** The HTTP status code of a client-node ApiException, or undefined for any other error. */
export { statusOf as statusCode } from '../../operator/kube/errors.js';

/** Creates a namespace whose default ServiceAccount exists (pods can be created in it at once). */
export async function podReadyNamespace(t: TestContext, prefix = 'pods'): Promise<string> {
  const namespace = await testNamespace(t, prefix);
  const core = await coreApi();
  await waitFor('the default ServiceAccount', () =>
    core.readNamespacedServiceAccount({ namespace, name: 'default' }),
  );
  return namespace;
}

/**
 * Resolves once kube-controller-manager acts again: a new namespace gets its default ServiceAccount.
 * A test that restarts the API server leaves the controllers' informers backing off (the restarted
 * server refuses them until its RBAC has loaded, and client-go then waits up to 30 s between tries):
 * it waits for this before the next file on its cluster, which expects a cluster like a fresh one.
 */
export async function controllersServing(timeoutMs = 120_000): Promise<void> {
  const core = await coreApi();
  const name = `controllers-${uniqueSuffix()}`;
  await core.createNamespace({
    body: { metadata: { name, labels: { 'admission-operator.test/owner': 'tests' } } },
  });
  try {
    await waitFor(
      "kube-controller-manager to create a new namespace's default ServiceAccount",
      () => core.readNamespacedServiceAccount({ namespace: name, name: 'default' }),
      { timeoutMs, intervalMs: 250 },
    );
  } finally {
    await core.deleteNamespace({ name }).catch(() => undefined);
  }
}

/**
 * Creates a minimal pod (it stays Pending: there is no scheduler) that both pod webhooks are called
 * for (governed-pod.ts); rejects with the API server's error.
 */
export async function createPod(namespace: string, labels: Record<string, string> = {}): Promise<string> {
  const core = await coreApi();
  const pod = await core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name: uniqueName('probe-'), ...governedMetadata(labels) },
      spec: { containers: [{ name: 'main', image: 'registry.invalid/probe:1' }] },
    },
  });
  return pod.metadata?.name ?? '';
}

/** Applies the project's CRDs (file names under crds/ without .yaml) and waits until each is established. */
export async function installCrds(...paths: string[]): Promise<void> {
  const extensions = (await clusterKubeConfig()).makeApiClient(ApiextensionsV1Api);
  for (const path of paths) {
    // Under crds/, as <name>.yaml or <folder>/<name>.yaml.
    const name = basename(path);
    await applyYaml(await readFile(join(repoRoot, 'crds', `${path}.yaml`), 'utf8'));
    await waitFor(`${name} to be established`, async () => {
      const crd = await extensions.readCustomResourceDefinition({ name });
      return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    });
  }
}
