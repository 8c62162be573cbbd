/**
 * The no-op webhook reference of the quota-burst bench: as many processes of
 * noop-webhook-server.ts as the operator has replicas, behind a balancer of their own, registered
 * for the same number and kinds of calls a burst's pod meets from the operator, for pods carrying
 * NOOP_LABEL in one namespace. Its creates show what the API server's webhook latency reads on
 * this machine for webhooks that do nothing, in the same run: the part of ours no webhook could
 * avoid here.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import {
  AdmissionregistrationV1Api,
  type V1MutatingWebhook,
  type V1ValidatingWebhook,
} from '@kubernetes/client-node';
import { TcpBalancer } from '../harness/balancer.js';
import { clusterKubeConfig, waitFor } from '../harness/cluster.js';
import { localServingCertificate } from '../harness/allowing-server.js';
import { repoRoot } from '../../scripts/cluster/layout.js';

/** The pod label the no-op webhooks select. */
export const NOOP_LABEL = 'bench.admission-operator.local/noop-reference';
/** Both configurations' name, and the suffix of every webhook's. */
const CONFIGURATION = 'bench-noop-reference';
export const NOOP_WEBHOOK_NAMES = /\.noop-reference\.bench\.local$/;

/** One webhook call a pod meets at create: mutating ("admit", as the API server's metrics say) or validating. */
export type CallType = 'admit' | 'validating';

export interface NoopReference {
  /** Connections the balancer passed to the no-op servers, all told. */
  connections: () => number;
  pids: () => number[];
  close: () => Promise<void>;
}

async function startServer(
  certFile: string,
  keyFile: string,
): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'test/bench/noop-webhook-server.ts', certFile, keyFile],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  if (!child.stdout) throw new Error('the no-op server has no stdout');
  const lines = createInterface({ input: child.stdout });
  const [line] = (await Promise.race([
    once(lines, 'line'),
    once(child, 'exit').then(() => {
      throw new Error('the no-op webhook server exited before listening');
    }),
  ])) as [string];
  lines.close();
  child.stdout.resume();
  return { child, port: Number(line) };
}

export async function startNoopReference(
  servers: number,
  calls: readonly CallType[],
  namespace: string,
): Promise<NoopReference> {
  const dir = await mkdtemp(join(tmpdir(), 'noop-reference-'));
  const certificate = await localServingCertificate('noop-reference-ca');
  const certFile = join(dir, 'tls.crt');
  const keyFile = join(dir, 'tls.key');
  await writeFile(certFile, certificate.certificatePem);
  await writeFile(keyFile, certificate.privateKeyPem);
  const balancer = new TcpBalancer();
  const port = await balancer.listen();
  const children: ChildProcess[] = [];
  const api = (await clusterKubeConfig()).makeApiClient(AdmissionregistrationV1Api);
  const close = async (): Promise<void> => {
    await api.deleteMutatingWebhookConfiguration({ name: CONFIGURATION }).catch(() => undefined);
    await api.deleteValidatingWebhookConfiguration({ name: CONFIGURATION }).catch(() => undefined);
    for (const child of children) child.kill('SIGKILL');
    await balancer.close();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < servers; i++) {
      const server = await startServer(certFile, keyFile);
      children.push(server.child);
      balancer.add(server.port);
    }
    await waitFor('the no-op servers to be ready', () =>
      Promise.resolve(balancer.readyPorts().length === servers || undefined),
    );
    const common = (type: CallType, index: number) => ({
      name: `${type === 'admit' ? 'mutate' : 'validate'}-${index}.noop-reference.bench.local`,
      clientConfig: {
        url: `https://127.0.0.1:${port}/noop`,
        caBundle: Buffer.from(certificate.ca).toString('base64'),
      },
      rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }],
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
      objectSelector: { matchLabels: { [NOOP_LABEL]: 'true' } },
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      failurePolicy: 'Fail',
      timeoutSeconds: 10,
    });
    const mutating: V1MutatingWebhook[] = calls
      .map((type, index) => ({ type, index }))
      .filter(({ type }) => type === 'admit')
      .map(({ type, index }) => ({ ...common(type, index), reinvocationPolicy: 'Never' }));
    const validating: V1ValidatingWebhook[] = calls
      .map((type, index) => ({ type, index }))
      .filter(({ type }) => type === 'validating')
      .map(({ type, index }) => common(type, index));
    if (mutating.length > 0)
      await api.createMutatingWebhookConfiguration({
        body: { metadata: { name: CONFIGURATION }, webhooks: mutating },
      });
    if (validating.length > 0)
      await api.createValidatingWebhookConfiguration({
        body: { metadata: { name: CONFIGURATION }, webhooks: validating },
      });
  } catch (error) {
    await close();
    throw error;
  }
  return {
    connections: () => Object.values(balancer.stats().connections).reduce((sum, count) => sum + count, 0),
    pids: () => children.flatMap((child) => (child.pid === undefined ? [] : [child.pid])),
    close,
  };
}
