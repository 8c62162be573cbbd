/**
 * `npm run demo`: the product in two minutes on a laptop. Brings up the local control plane,
 * installs the CRDs, runs the operator (with certificate lifetimes of seconds), and shows a GPU
 * pod getting its class, a quota refusing a pod, a bad ModelBooster refused with Kthena's message, and
 * certificate rotations while pods keep being admitted, then a rolling restart of two replicas
 * behind one address while pods keep being created. Cleans up after itself.
 */
// First: an unsupported Node.js gets one line saying so, not a dependency's stack trace.
import './runtime/require-node.js';
import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AdmissionregistrationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  type V1Pod,
} from '@kubernetes/client-node';
import { pino } from 'pino';
import { parseOptions, type OperatorOptions } from '../operator/config/options.js';
import { applyFolder } from '../operator/kube/apply.js';
import { runOperator } from '../operator/operator.js';
import { TcpBalancer } from '../test/harness/balancer.js';
import { spawnOperator } from '../test/harness/operator.js';
import { podStream, Replicas } from '../test/harness/replicas.js';
import { messageOf } from '../operator/kube/errors.js';
import { freePorts, startCluster, stopCluster } from './cluster/control-plane.js';
import { kubeconfigPath, repoRoot } from './cluster/layout.js';

const say = (line = ''): void => {
  console.log(line);
};

async function retry<T>(what: string, attempt: () => Promise<T>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`${what}: ${messageOf(error)}`, { cause: error });
      await sleep(200);
    }
  }
}

function pod(name: string, resources: Record<string, string>, labels: Record<string, string> = {}): V1Pod {
  return {
    metadata: { name, labels },
    spec: {
      containers: [{ name: 'main', image: 'registry.invalid/demo:1', resources: { limits: resources } }],
    },
  };
}

async function main(): Promise<void> {
  say('== admission-operator demo ==\n');
  const { startedNow, state } = await startCluster((line) => {
    say(`  [cluster] ${line}`);
  });
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const admission = kc.makeApiClient(AdmissionregistrationV1Api);
  const suffix = Date.now().toString(36);
  const namespaces = {
    operator: `demo-system-${suffix}`,
    replicas: `demo-replicas-${suffix}`,
    gpu: `demo-gpu-${suffix}`,
    quota: `demo-quota-${suffix}`,
  };
  let stopOperator: (() => Promise<void>) | undefined;
  const balancer = new TcpBalancer();
  let replicas: Replicas | undefined;

  try {
    say(
      `\n1. Installing the CRDs: ${(await applyFolder(kc, join(repoRoot, 'crds'), 'admission-operator-demo')).join(', ')}`,
    );
    for (const name of Object.values(namespaces)) {
      const labels: Record<string, string> =
        name === namespaces.gpu ? { 'tenant.kubenexus.io/tier': 'bronze' } : {};
      await core.createNamespace({ body: { metadata: { name, labels } } });
    }

    const [port] = await freePorts(1);
    const parsed = parseOptions(
      [
        `--namespace=${namespaces.operator}`,
        `--port=${port}`,
        '--bind-address=127.0.0.1',
        '--cert-lifetime=8s',
        '--cert-renew-before=4s',
        '--bundle-propagation=1s',
        // As `npm start` does: only the API server, by its client certificate, gets an answer.
        ...(state.webhookClient
          ? [
              `--client-ca-file=${state.webhookClient.caFile}`,
              `--client-subject-names=${state.webhookClient.subject}`,
            ]
          : []),
      ],
      {},
    );
    const options = (parsed as { options: OperatorOptions }).options;
    const operator = await runOperator(
      options,
      kc,
      { mode: 'url', host: '127.0.0.1', port: port ?? 0 },
      pino({ level: process.env.DEMO_LOG_LEVEL ?? 'silent' }),
    );
    stopOperator = operator.stop;
    say(
      `2. The operator runs on https://127.0.0.1:${port}; it issued Secret ${namespaces.operator}/webhook-tls`,
    );
    say('   and wrote both admission-operator webhook configurations with its own CA.');

    say('\n3. GPU classes: a pod asking for nvidia.com/gpu in a namespace of tier "bronze"');
    const gpuPod = await retry('GPU pod', async () => {
      const created = await core.createNamespacedPod({
        namespace: namespaces.gpu,
        body: pod(`gpu-${Date.now().toString(36)}`, { 'nvidia.com/gpu': '1' }),
      });
      if (!created.spec?.nodeSelector) throw new Error('the tier label has not reached the operator yet');
      return created;
    });
    say(
      `   → nodeSelector ${JSON.stringify(gpuPod.spec?.nodeSelector)} (the autoscaler grows the l4 pool only)`,
    );

    say('\n4. Quotas: ElasticQuota "team" allows 1 CPU; two pods of 1 CPU each');
    await custom.createNamespacedCustomObject({
      group: 'scheduling.sigs.k8s.io',
      version: 'v1alpha1',
      namespace: namespaces.quota,
      plural: 'elasticquotas',
      body: {
        apiVersion: 'scheduling.sigs.k8s.io/v1alpha1',
        kind: 'ElasticQuota',
        metadata: {
          name: `team-${suffix}`,
          annotations: { 'quota.scheduling.koordinator.sh/namespaces': JSON.stringify([namespaces.quota]) },
        },
        spec: { max: { cpu: '1' } },
      },
    });
    await retry('the default ServiceAccount', () =>
      core.readNamespacedServiceAccount({ namespace: namespaces.quota, name: 'default' }),
    );
    await retry('first pod', () =>
      core.createNamespacedPod({ namespace: namespaces.quota, body: pod('first', { cpu: '1' }) }),
    );
    say('   → the first pod is admitted');
    try {
      await core.createNamespacedPod({ namespace: namespaces.quota, body: pod('second', { cpu: '1' }) });
      say('   → unexpectedly, the second pod was admitted');
    } catch (error) {
      say(`   → the second is refused: ${messageOf(error)}`);
    }

    say(
      '\n5. Models (Kthena v1.0.0): a vLLM ModelBooster with a prefill and a decode worker instead of one server',
    );
    try {
      await custom.createNamespacedCustomObject({
        group: 'workload.serving.volcano.sh',
        version: 'v1alpha1',
        namespace: namespaces.quota,
        plural: 'modelboosters',
        body: {
          apiVersion: 'workload.serving.volcano.sh/v1alpha1',
          kind: 'ModelBooster',
          metadata: { name: 'qwen' },
          spec: {
            backend: {
              name: 'b0',
              type: 'vLLM',
              modelURI: 'hf://Qwen/Qwen2.5-0.5B-Instruct',
              replicas: 1,
              workers: [
                { type: 'prefill', image: 'vllm/vllm-openai:v0.10.0' },
                { type: 'decode', image: 'vllm/vllm-openai:v0.10.0' },
              ],
            },
          },
        },
      });
      say('   → unexpectedly admitted');
    } catch (error) {
      say(`   → refused:\n${messageOf(error).replace(/^/gm, '     ')}`);
    }

    say('\n6. Certificate rotation: serving certificates live 8 s; pods are created for 20 s meanwhile');
    const serials = new Set<string>();
    let created = 0;
    let failed = 0;
    const until = Date.now() + 20_000;
    while (Date.now() < until) {
      try {
        await core.createNamespacedPod({
          namespace: namespaces.gpu,
          body: pod(`load-${created + failed}`, { cpu: '10m' }),
        });
        created++;
      } catch (error) {
        failed++;
        say(`   ! ${messageOf(error)}`);
      }
      const secret = await core.readNamespacedSecret({ namespace: namespaces.operator, name: 'webhook-tls' });
      const pem = Buffer.from(secret.data?.['tls.crt'] ?? '', 'base64').toString('utf8');
      if (pem) serials.add(new X509Certificate(pem).serialNumber.slice(0, 8));
      await sleep(100);
    }
    say(
      `   → ${serials.size} serving certificates used (${[...serials].join(', ')}); ${created} pods admitted, ${failed} failed`,
    );

    say(
      '\n7. Two replicas behind one address (a balancer standing in for the Service), restarted one at a time',
    );
    await operator.stop();
    stopOperator = undefined;
    await balancer.listen();
    replicas = new Replicas(balancer, spawnOperator, {
      namespace: namespaces.replicas,
      shutdownDelay: '5s',
      args: ['--log-level=warn'],
    });
    const first = await replicas.add();
    await replicas.inService(first);
    await replicas.inService(await replicas.add());
    say(
      `   replicas on ports ${replicas.members.map((r) => r.port).join(' and ')}, the API server calls ${balancer.port}`,
    );
    const stream = podStream(namespaces.gpu, 20);
    for (let index = 0; index < 2; index++) {
      const old = replicas.members[index]?.port;
      const { replica } = await replicas.restart(index);
      say(
        `   → replica ${old} drained (SIGTERM: not ready at once, serving 5 s more) and replaced by ${replica.port}`,
      );
    }
    const attempts = await stream.stop();
    const failedCreates = attempts.filter((attempt) => attempt.error !== undefined);
    say(
      `   → ${attempts.length - failedCreates.length} pods admitted during the rolling restart, ${failedCreates.length} failed`,
    );
    for (const attempt of failedCreates.slice(0, 3)) say(`   ! ${attempt.error ?? ''}`);
  } finally {
    say('\n8. Cleaning up');
    await stopOperator?.();
    await Promise.all((replicas?.members ?? []).map((replica) => replica.stop('SIGKILL')));
    await balancer.close();
    for (const name of Object.values(namespaces)) await core.deleteNamespace({ name }).catch(() => undefined);
    await admission.deleteMutatingWebhookConfiguration({ name: 'admission-operator' }).catch(() => undefined);
    await admission
      .deleteValidatingWebhookConfiguration({ name: 'admission-operator' })
      .catch(() => undefined);
    if (startedNow) await stopCluster(() => undefined);
    say('   done');
  }
}

await main();
