/**
 * The chart as cluster admins install it, on the local cluster's node: the image built and
 * imported into the node's containerd, `helm upgrade --install`, the chart's pods Running and
 * Ready by the kubelet's own probes, and every admission made by the API server through the
 * chart's Service (the configurations are in service mode: no URL reaches the pods any other way).
 *
 * Pods created here carry a nodeSelector no node has, so they stay Pending: admission is what is
 * measured, and the 2-core node runs only the operator.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AdmissionregistrationV1Api,
  AppsV1Api,
  DiscoveryV1Api,
  ApiextensionsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  PolicyV1Api,
  type V1Pod,
} from '@kubernetes/client-node';
import { ensureHelm } from '../../scripts/cluster/binaries.js';
import { kubeconfigPath, repoRoot } from '../../scripts/cluster/layout.js';
import { nodeNetwork } from '../../scripts/cluster/node-network.js';
import { containerPid } from '../../scripts/cluster/node.js';
import {
  buildAndLoadImage,
  helmUpgrade,
  releaseName,
  releaseNamespace,
} from '../../scripts/image/deploy-local.js';
import { clusterKubeConfig, kubectl, podReadyNamespace, waitFor } from '../harness/cluster.js';
import { readSecret, secretValue } from '../harness/operator.js';
import { PodStream, type FailedCreate } from './pod-stream.js';

const execFileAsync = promisify(execFile);
const UNSCHEDULABLE = { 'e2e.admission-operator.io/no-such-node': 'true' };
const QUOTA_LABEL = 'quota.scheduling.koordinator.sh/name';
/** The namespace label the blast-radius step excludes from every Fail webhook (value off). */
const ADMISSION_SWITCH = 'e2e.admission-operator.io/admission';
/** No scheduler has this name: pods that name it stay Pending without costing the node's scheduler. */
const NO_SCHEDULER = 'e2e-no-such-scheduler';

const log = (line: string): void => {
  console.error(`[e2e] ${line}`);
};

/** The operator's default --leader-elect-lease-duration, which the chart keeps. */
const LEASE_DURATION_MS = 15_000;
/** Creates in flight when a container is killed were sent at most this long before. */
const IN_FLIGHT_MS = 2_000;
/** Clients creating the step-6 latency pods at once: 2,000 creates one at a time took 20 s. */
const LATENCY_CLIENTS = 4;

/** The chart's pods; terminating ones too when `withTerminating`. */
async function chartPods(withTerminating = false): Promise<V1Pod[]> {
  const core = (await clusterKubeConfig()).makeApiClient(CoreV1Api);
  const list = await core.listNamespacedPod({
    namespace: releaseNamespace,
    labelSelector: `app.kubernetes.io/name=admission-operator,app.kubernetes.io/instance=${releaseName}`,
  });
  return list.items.filter((pod) => withTerminating || !pod.metadata?.deletionTimestamp);
}

async function leaseHolder(): Promise<string> {
  const lease = await (
    await clusterKubeConfig()
  )
    .makeApiClient(CoordinationV1Api)
    .readNamespacedLease({ namespace: releaseNamespace, name: 'admission-operator' });
  return lease.spec?.holderIdentity ?? '';
}

/** Waits until only `count` chart pods exist (terminating ones gone) and all are Ready. */
async function settled(count: number): Promise<V1Pod[]> {
  await waitFor('terminating chart pods to be gone', async () => (await chartPods(true)).length === count, {
    timeoutMs: 120_000,
    intervalMs: 250,
  });
  return readyPods(count);
}

function describeFailures(failures: FailedCreate[], since: number): string {
  return failures
    .slice(0, 5)
    .map((failure) => `+${((failure.at - since) / 1000).toFixed(1)} s: ${failure.message}`)
    .join('\n');
}

function isReady(pod: V1Pod): boolean {
  return (
    pod.status?.phase === 'Running' &&
    (pod.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')
  );
}

async function uninstall(): Promise<void> {
  await execFileAsync(await ensureHelm(), [
    'uninstall',
    releaseName,
    '-n',
    releaseNamespace,
    '--wait',
    `--kubeconfig=${kubeconfigPath}`,
  ]).catch(() => undefined);
}

/** Counts the creates that should have been admitted and were not, with their messages. */
class FailedAdmissions {
  readonly messages: string[] = [];
  async admitted<T>(what: string, create: () => Promise<T>): Promise<T | undefined> {
    try {
      return await create();
    } catch (error) {
      this.messages.push(`${what}: ${String((error as { body?: unknown }).body ?? error)}`.slice(0, 500));
      return undefined;
    }
  }
}

/** Waits until the chart's pods are `count`, all Running and Ready, none terminating. */
function readyPods(count: number, timeoutMs = 180_000): Promise<V1Pod[]> {
  return waitFor(
    `${count} chart pod(s) Running and Ready`,
    async () => {
      const current = await chartPods();
      return current.length === count && current.every(isReady) ? current : undefined;
    },
    { timeoutMs, intervalMs: 250 },
  );
}

/** The containerd ID of the pod's operator container. */
function containerIdOf(pod: V1Pod | undefined): string {
  return (pod?.status?.containerStatuses?.[0]?.containerID ?? '').replace(/^containerd:\/\//, '');
}

/** What every chart replica has decided so far on the pod webhooks (its metrics, through the API server). */
async function ourDecisions(): Promise<number> {
  let sum = 0;
  for (const pod of await chartPods()) {
    const { stdout } = await kubectl([
      'get',
      '--raw',
      `/api/v1/namespaces/${releaseNamespace}/pods/${pod.metadata?.name ?? ''}:8080/proxy/metrics`,
    ]);
    for (const line of stdout.split('\n')) {
      if (!line.startsWith('admission_decisions_total{')) continue;
      if (!/webhook="(mutate-pod|validate-pod|mutate-pod-gpu-class)\.admission-operator\.io"/.test(line))
        continue;
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return sum;
}

async function podLogs(name: string): Promise<string> {
  return (await kubectl(['logs', '-n', releaseNamespace, name, '--tail=-1'])).stdout;
}

describe('the chart on the local node', () => {
  let tag = '';
  before(async () => {
    tag = await buildAndLoadImage(log);
  });
  after(uninstall);

  it('step 1: two replicas Ready by their probes, one leader, service-mode configurations with the Secret’s CA, admission through the Service', async (t) => {
    const kc = await clusterKubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    const installStarted = Date.now();
    await helmUpgrade(tag, ['--set', 'replicaCount=2'], false);
    const pods = await readyPods(2);
    const installToReady = (Date.now() - installStarted) / 1000;
    log(`helm install to both pods Ready: ${installToReady.toFixed(1)} s`);

    // Ready by the kubelet's probes: the containers declare them, run on the node, and report ready.
    for (const pod of pods) {
      assert.equal(pod.spec?.nodeName, nodeNetwork.nodeName);
      assert.ok(pod.status?.podIP?.startsWith('10.244.0.'), `${pod.metadata?.name} has a pod address`);
      const container = pod.spec?.containers[0];
      assert.equal(container?.readinessProbe?.httpGet?.path, '/readyz');
      assert.equal(container?.image, `localhost/admission-operator:${tag}`);
      assert.equal(pod.status?.containerStatuses?.[0]?.ready, true);
    }
    const names = pods.map((pod) => pod.metadata?.name ?? '');

    // The image runs the project's Node: the entry point's own process, run with --version.
    const pinnedNode = (
      await execFileAsync(join(repoRoot, 'scripts/runtime/install-node.sh'), ['--version'])
    ).stdout.trim();
    const entryPid = await containerPid(containerIdOf(pods[0]));
    const entryArgs = (await readFile(`/proc/${entryPid}/cmdline`, 'utf8')).split('\0');
    assert.equal(entryArgs[0], 'node', `the entry point runs node (${entryArgs.join(' ')})`);
    const imageNode = (await execFileAsync(`/proc/${entryPid}/exe`, ['--version'])).stdout.trim();
    assert.equal(imageNode, `v${pinnedNode}`, 'the image runs the pinned Node');
    log(`node in the image: ${imageNode}`);

    const coordination = kc.makeApiClient(CoordinationV1Api);
    const holder = await waitFor('a Lease holder', async () => {
      const lease = await coordination.readNamespacedLease({
        namespace: releaseNamespace,
        name: 'admission-operator',
      });
      return lease.spec?.holderIdentity;
    });
    assert.ok(
      names.some((name) => holder.startsWith(`${name}_`) || holder === name),
      `the Lease holder ${holder} is one of ${names.join(', ')}`,
    );

    const registration = kc.makeApiClient(AdmissionregistrationV1Api);
    const ca = secretValue(await readSecret(releaseNamespace), 'ca.crt');
    assert.match(ca, /BEGIN CERTIFICATE/);
    const configurations = await waitFor('both configurations', async () => [
      await registration.readMutatingWebhookConfiguration({ name: 'admission-operator' }),
      await registration.readValidatingWebhookConfiguration({ name: 'admission-operator' }),
    ]);
    for (const configuration of configurations) {
      for (const webhook of configuration.webhooks ?? []) {
        assert.equal(webhook.clientConfig.url, undefined, `${webhook.name} has no URL`);
        assert.equal(webhook.clientConfig.service?.namespace, releaseNamespace);
        assert.equal(webhook.clientConfig.service?.name, releaseName);
        assert.equal(
          Buffer.from(webhook.clientConfig.caBundle ?? '', 'base64').toString('utf8'),
          ca,
          `${webhook.name} trusts the Secret's CA`,
        );
      }
    }

    const failed = new FailedAdmissions();

    // A GPU pod in a gold-tier namespace gets its class.
    const gpuNamespace = await podReadyNamespace(t, 'e2e-gpu');
    await kubectl(['label', 'namespace', gpuNamespace, 'tenant.kubenexus.io/tier=gold']);
    const gpuPod = await failed.admitted('GPU pod', () =>
      core.createNamespacedPod({
        namespace: gpuNamespace,
        body: {
          metadata: { name: 'trainer' },
          spec: {
            nodeSelector: UNSCHEDULABLE,
            containers: [
              {
                name: 'main',
                image: 'registry.invalid/cuda:1',
                resources: { limits: { 'nvidia.com/gpu': '1' } },
              },
            ],
          },
        },
      }),
    );
    assert.equal(gpuPod?.spec?.nodeSelector?.['gpu.nvidia.com/class'], 'h100');

    // A pod over its ElasticQuota is refused with Koordinator's message.
    const quotaNamespace = await podReadyNamespace(t, 'e2e-quota');
    await kubectl(
      ['apply', '-f', '-'],
      [
        'apiVersion: scheduling.sigs.k8s.io/v1alpha1',
        'kind: ElasticQuota',
        'metadata:',
        '  name: small',
        `  namespace: ${quotaNamespace}`,
        'spec:',
        '  min: {cpu: "0"}',
        '  max: {cpu: "1"}',
        '',
      ].join('\n'),
    );
    const quotaPod = {
      metadata: { generateName: 'worker-', labels: { [QUOTA_LABEL]: 'small' } },
      spec: {
        nodeSelector: UNSCHEDULABLE,
        containers: [
          { name: 'main', image: 'registry.invalid/app:1', resources: { requests: { cpu: '500m' } } },
        ],
      },
    };
    // The replicas learn of the new quota from their watches; until then it is an unknown quota.
    await waitFor('the quota to be known to the leader', () =>
      core.createNamespacedPod({ namespace: quotaNamespace, body: quotaPod }),
    );
    await failed.admitted('pod within quota', () =>
      core.createNamespacedPod({ namespace: quotaNamespace, body: quotaPod }),
    );
    await assert.rejects(
      core.createNamespacedPod({ namespace: quotaNamespace, body: quotaPod }),
      (error: unknown) => {
        assert.match(
          String((error as { body?: unknown }).body),
          new RegExp(
            `exceeded quota: ${quotaNamespace}/small, requested: cpu=500m, used: cpu=1, limited: cpu=1`,
          ),
        );
        return true;
      },
    );

    // A bad ModelBooster is refused with Kthena's message.
    const modelNamespace = await podReadyNamespace(t, 'e2e-model');
    // The project's bad ModelBooster (two workers for a vLLM backend), in a namespace of this test.
    const badModel = (
      await readFile(join(repoRoot, 'test', 'fixtures', 'admit', 'bad-modelbooster.yaml'), 'utf8')
    ).replace('namespace: team-a', `namespace: ${modelNamespace}`);
    await assert.rejects(kubectl(['apply', '-f', '-'], badModel), (error: { stderr?: string }) => {
      assert.match(
        error.stderr ?? '',
        /denied the request: validation failed:\n\s+- spec\.backend\.workers: Invalid value: 2: If backend type is 'vLLM', there must be exactly one worker/,
      );
      return true;
    });

    log(`step 1 failed admissions: ${failed.messages.length}`);
    assert.deepEqual(failed.messages, [], 'every create that should be admitted was');
  });

  it('step 1b: an attacker pod reaching the Service with forged reviews gets 401/403 and nothing else; the tenant keeps its quota', async (t) => {
    const kc = await clusterKubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    // The tenant: a 2-CPU quota with one real pod in it.
    const victim = await podReadyNamespace(t, 'e2e-victim');
    await kubectl(
      ['apply', '-f', '-'],
      `apiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: ElasticQuota\nmetadata: {name: team, namespace: ${victim}}\nspec: {min: {cpu: "0"}, max: {cpu: "2"}}\n`,
    );
    const tenantPod = {
      metadata: { generateName: 'worker-', labels: { [QUOTA_LABEL]: 'team' } },
      spec: {
        nodeSelector: UNSCHEDULABLE,
        containers: [
          { name: 'main', image: 'registry.invalid/app:1', resources: { requests: { cpu: '500m' } } },
        ],
      },
    };
    await waitFor('the quota to be known to the leader', () =>
      core.createNamespacedPod({ namespace: victim, body: tenantPod }),
    );

    // The attacker: a pod of another namespace, running node from the operator's own image (the
    // node has no other), POSTing forged reviews for a 1500m pod of the tenant to the Service.
    const attacker = await podReadyNamespace(t, 'attacker');
    const service = await core.readNamespacedService({ namespace: releaseNamespace, name: releaseName });
    const forged = JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: 'forged-1',
        kind: { group: '', version: 'v1', kind: 'Pod' },
        resource: { group: '', version: 'v1', resource: 'pods' },
        namespace: victim,
        name: 'forged-1',
        operation: 'CREATE',
        userInfo: { username: `system:serviceaccount:${attacker}:default` },
        object: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'forged-1', namespace: victim, labels: { [QUOTA_LABEL]: 'team' } },
          spec: { containers: [{ name: 'main', image: 'x', resources: { requests: { cpu: '1500m' } } }] },
        },
      },
    });
    // Each target gets five forged reviews, then a forged forward; the metrics target, its debug view.
    const script = `
      const https = require('node:https'), http = require('node:http');
      const call = (send, url, options, body) => new Promise((done) => {
        const req = send.request(url, { timeout: 5000, ...options }, (res) => {
          let text = ''; res.on('data', (c) => (text += c)); res.on('end', () => done({ status: res.statusCode, body: text }));
        });
        req.on('timeout', () => req.destroy(new Error('timeout')));
        req.on('error', (e) => done({ error: e.message }));
        req.end(body);
      });
      const post = (target, headers) => call(https, target + '/validate-pod',
        { method: 'POST', rejectUnauthorized: false, headers: { 'Content-Type': 'application/json', ...headers } }, process.env.REVIEW);
      (async () => {
        const answers = { forged: [], forwards: [], debug: [] };
        for (const target of process.env.ADMISSION.split(' ').filter(Boolean)) {
          for (let i = 0; i < 5; i++) answers.forged.push(await post(target, {}));
          answers.forwards.push(await post(target, { 'x-admission-forwarded': '1' }));
        }
        for (const target of process.env.METRICS.split(' ').filter(Boolean)) answers.debug.push(await call(http, target + '/elasticQuota', {}));
        console.log(JSON.stringify(answers));
      })();`;
    interface Answer {
      status?: number;
      body?: string;
      error?: string;
    }
    /** Runs the script in a pod of the attacker's namespace and returns what it printed. */
    const attack = async (
      name: string,
      hostNetwork: boolean,
      admission: string[],
      metrics: string[],
    ): Promise<Record<'forged' | 'forwards' | 'debug', Answer[]>> => {
      await core.createNamespacedPod({
        namespace: attacker,
        body: {
          metadata: { name },
          spec: {
            restartPolicy: 'Never',
            hostNetwork,
            containers: [
              {
                name: 'forger',
                image: `localhost/admission-operator:${tag}`,
                imagePullPolicy: 'Never',
                command: ['node', '-e', script],
                env: [
                  { name: 'ADMISSION', value: admission.join(' ') },
                  { name: 'METRICS', value: metrics.join(' ') },
                  { name: 'REVIEW', value: forged },
                ],
              },
            ],
          },
        },
      });
      await waitFor(
        `the attacker pod ${name} to finish`,
        async () => {
          const pod = await core.readNamespacedPod({ namespace: attacker, name });
          return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed' ? pod : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 500 },
      );
      const output = (await kubectl(['logs', '-n', attacker, name])).stdout.trim();
      log(`${name}'s answers: ${output.slice(0, 600)}`);
      return JSON.parse(output) as Record<'forged' | 'forwards' | 'debug', Answer[]>;
    };
    // From the pod network, every endpoint of the Service (the pods the Service sends to). This
    // node routes nothing between pods through the host (IP forwarding stays off, see
    // docs/development.md), so a pod reaches a Service's address only from the host network: the
    // second attacker calls the Service's own address from there, through kube-proxy's rules.
    const endpoints = (await chartPods()).map((pod) => pod.status?.podIP ?? '');
    const fromPods = await attack(
      'forger',
      false,
      endpoints.map((ip) => `https://${ip}:9443`),
      endpoints.map((ip) => `http://${ip}:8080`),
    );
    const fromHost = await attack('forger-host', true, [`https://${service.spec?.clusterIP}:443`], []);
    for (const [from, answers] of [
      ['the pod network', fromPods],
      ['the Service address', fromHost],
    ] as const) {
      assert.deepEqual(
        answers.forged.map((answer) => answer.status),
        answers.forged.map(() => 401),
        `the forged reviews from ${from} reached the operator and were refused`,
      );
      for (const answer of answers.forged)
        assert.doesNotMatch(answer.body ?? '', /allowed|used|limited|quota|cpu/i);
      assert.ok(
        answers.forwards.every((answer) => answer.status === 403),
        `forged forwards from ${from} are refused`,
      );
    }
    assert.ok(
      fromPods.debug.length === 2 && fromPods.debug.every((answer) => answer.status === 403),
      'the quota debug view answers no pod',
    );

    // 7.5 CPUs of forged pods and not a millicore reserved: the tenant's pods fill its quota exactly.
    const failed = new FailedAdmissions();
    for (let i = 0; i < 3; i++)
      await failed.admitted('tenant pod', () =>
        core.createNamespacedPod({ namespace: victim, body: tenantPod }),
      );
    assert.deepEqual(failed.messages, [], 'no tenant pod refused because of forged calls');
    await assert.rejects(
      core.createNamespacedPod({ namespace: victim, body: tenantPod }),
      (error: unknown) => {
        assert.match(
          String((error as { body?: unknown }).body),
          /exceeded quota: .*used: cpu=2, limited: cpu=2/,
        );
        return true;
      },
    );
  });

  it('step 2: helm upgrade to an image with another tag while pods are created at 20/s: zero failed creates, the rollout finishes', async (t) => {
    const kc = await clusterKubeConfig();
    const loadNamespace = await podReadyNamespace(t, 'e2e-load');
    const otherTag = await buildAndLoadImage(log, `${tag}-b`);
    const stream = new PodStream(kc, loadNamespace);
    // A failed step must not leave the stream running (it would keep the test process alive).
    t.after(() => stream.stop());
    const started = Date.now();
    await sleep(3000);
    await helmUpgrade(otherTag, ['--reuse-values']);
    const pods = await settled(2);
    for (const pod of pods)
      assert.equal(pod.spec?.containers[0]?.image, `localhost/admission-operator:${otherTag}`);
    await sleep(2000);
    const result = await stream.stop();
    log(
      `step 2 (upgrade): ${result.created} pods created in ${result.seconds.toFixed(1)} s, ` +
        `${result.failures.length} failed creates`,
    );
    assert.ok(result.created > 0);
    assert.equal(result.failures.length, 0, describeFailures(result.failures, started));
  });

  it('step 3: graceful delete of the leader’s pod under load: zero failed creates and a new leader within a lease period; kill -9 of a replica fails creates only inside the endpoint-removal window', async (t) => {
    const kc = await clusterKubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    const loadNamespace = await podReadyNamespace(t, 'e2e-load');
    const pods = await settled(2);
    const holder = await waitFor('a Lease holder among the pods', async () => {
      const identity = await leaseHolder();
      return pods.find((pod) => identity.startsWith(`${pod.metadata?.name}_`));
    });
    const leaderName = holder.metadata?.name ?? '';

    const graceful = new PodStream(kc, loadNamespace);
    t.after(() => graceful.stop());
    const gracefulStarted = Date.now();
    await sleep(3000);
    const deletedAt = Date.now();
    await core.deleteNamespacedPod({ namespace: releaseNamespace, name: leaderName });
    await waitFor(
      'another pod to take the Lease over',
      async () => {
        const identity = await leaseHolder();
        return identity !== '' && !identity.startsWith(`${leaderName}_`);
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    const takeoverMs = Date.now() - deletedAt;
    await settled(2);
    await sleep(2000);
    const gracefulResult = await graceful.stop();
    log(
      `step 3 (graceful delete of the leader): new leader after ${(takeoverMs / 1000).toFixed(1)} s; ` +
        `${gracefulResult.created} pods created, ${gracefulResult.failures.length} failed creates`,
    );
    assert.equal(
      gracefulResult.failures.length,
      0,
      describeFailures(gracefulResult.failures, gracefulStarted),
    );
    assert.ok(takeoverMs <= LEASE_DURATION_MS, `a new leader within a lease period (${takeoverMs} ms)`);

    // kill -9 of a replica's container: the API server keeps calling it until the endpoint goes.
    const [victim] = await settled(2);
    const victimIp = victim?.status?.podIP ?? '';
    const pid = await containerPid(containerIdOf(victim));
    const discovery = kc.makeApiClient(DiscoveryV1Api);
    const killed = new PodStream(kc, loadNamespace);
    t.after(() => killed.stop());
    await sleep(3000);
    const killedAt = Date.now();
    process.kill(pid, 'SIGKILL');
    const removedAt = await waitFor(
      'the killed replica to leave the Service’s ready endpoints',
      async () => {
        const slices = await discovery.listNamespacedEndpointSlice({
          namespace: releaseNamespace,
          labelSelector: `kubernetes.io/service-name=${releaseName}`,
        });
        const stillReady = slices.items.some((slice) =>
          (slice.endpoints ?? []).some(
            (endpoint) => endpoint.addresses.includes(victimIp) && endpoint.conditions?.ready !== false,
          ),
        );
        return stillReady ? undefined : Date.now();
      },
      { timeoutMs: 60_000, intervalMs: 50 },
    );
    await settled(2);
    await sleep(2000);
    const killedResult = await killed.stop();
    const windowMs = removedAt - killedAt;
    const outside = killedResult.failures.filter(
      (failure) => failure.at < killedAt - IN_FLIGHT_MS || failure.at > removedAt,
    );
    log(
      `step 3 (kill -9 of a replica): endpoint-removal window ${windowMs} ms; ${killedResult.created} pods ` +
        `created, ${killedResult.failures.length} failed creates, ${outside.length} of them outside the window`,
    );
    assert.equal(outside.length, 0, describeFailures(outside, killedAt));
  });

  it('step 4: CA rotations through the chart’s short lifetimes under 20 creates/s: zero failed creates', async (t) => {
    const kc = await clusterKubeConfig();
    const loadNamespace = await podReadyNamespace(t, 'e2e-load');
    // A CA is made with the lifetime in force when it is made: a fresh release, whose Secret the
    // operator issues anew, takes the short lifetimes from its first CA on.
    await uninstall();
    // A replica still terminating would hold the Lease and put its remembered CA back.
    await waitFor('the chart’s pods to be gone', async () => (await chartPods(true)).length === 0, {
      timeoutMs: 120_000,
      intervalMs: 500,
    });
    await kc
      .makeApiClient(CoreV1Api)
      .deleteNamespacedSecret({ namespace: releaseNamespace, name: 'webhook-tls' })
      .catch(() => undefined);
    await helmUpgrade(tag, [
      '--set',
      'replicaCount=2',
      '--set',
      'certificates.caLifetime=40s,certificates.caRenewBefore=20s',
      '--set',
      'certificates.servingLifetime=20s,certificates.servingRenewBefore=10s',
    ]);
    await readyPods(2);
    const firstCa = secretValue(await readSecret(releaseNamespace), 'ca.crt');
    const stream = new PodStream(kc, loadNamespace);
    t.after(() => stream.stop());
    const started = Date.now();
    const served = new Set<string>();
    const signers = new Set<string>();
    // Two rotations: a new CA at 20 s and the serving certificate switched to it after the
    // bundle's propagation (10 s), then again 40 s in; the serving certificate renewed every 10 s.
    while (Date.now() - started < 55_000) {
      const secret = await readSecret(releaseNamespace);
      const leafPem = secretValue(secret, 'tls.crt');
      if (leafPem) {
        const leaf = new X509Certificate(leafPem);
        served.add(leaf.fingerprint256);
        const bundle = secretValue(secret, 'ca.crt').match(
          /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g,
        );
        const signer = (bundle ?? [])
          .map((pem) => new X509Certificate(pem))
          .find((ca) => leaf.verify(ca.publicKey));
        if (signer) signers.add(signer.fingerprint256);
      }
      await sleep(1000);
    }
    const result = await stream.stop();
    const lastCa = secretValue(await readSecret(releaseNamespace), 'ca.crt');
    log(
      `step 4 (CA rotation): ${result.created} pods created in ${result.seconds.toFixed(1)} s, ` +
        `${result.failures.length} failed creates; ${served.size} serving certificates from ${signers.size} CAs`,
    );
    assert.notEqual(lastCa, firstCa, 'the CA bundle changed');
    assert.ok(signers.size >= 2, `the serving certificates came from ${signers.size} CA(s)`);
    assert.ok(served.size >= 4, `${served.size} serving certificates in 55 s`);
    assert.ok(result.created > 0);
    assert.equal(result.failures.length, 0, describeFailures(result.failures, started));
  });

  it('step 5: the periodic audit, enabled through the chart, completes with no 403', async () => {
    // Not --reuse-values: the same upgrade takes the release back to the chart's lifetimes after step 4's.
    await helmUpgrade(tag, ['--set', 'replicaCount=2', '--set', 'audit.interval=5s']);
    const pods = await readyPods(2);
    const rolledOut = Date.now();
    const coordination = (await clusterKubeConfig()).makeApiClient(CoordinationV1Api);
    // The old leader's pod is gone; one of the new pods takes the Lease over.
    const leader = await waitFor(
      'a new pod to hold the Lease',
      async () => {
        const lease = await coordination.readNamespacedLease({
          namespace: releaseNamespace,
          name: 'admission-operator',
        });
        return pods.find((pod) => lease.spec?.holderIdentity?.startsWith(`${pod.metadata?.name}_`));
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    log(
      `a new pod held the Lease ${((Date.now() - rolledOut) / 1000).toFixed(1)} s after the rollout finished`,
    );
    const logs = await waitFor(
      'the leader to finish an audit',
      async () => {
        const text = await podLogs(leader.metadata!.name!);
        return text.includes('audit of existing objects finished') ? text : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
    assert.doesNotMatch(logs, /audit of existing objects failed/);
    // Where WatchList is off (1.30) every watch logs the API server's refusal of a streaming list,
    // whose message says "Forbidden" (a validation error, 422): not a lack of rights.
    const withoutListFallbacks = logs
      .split('\n')
      .filter((line) => !line.includes('"msg":"the API server refuses streaming lists; listing in pages"'));
    assert.doesNotMatch(withoutListFallbacks.join('\n'), /forbidden|"statusCode":403/i);
  });

  it('step 6: blast radius: with every replica stopped, the pods no rule governs are all created and only governed ones refused; an ungoverned pod never calls us', async (t) => {
    const kc = await clusterKubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    const apps = kc.makeApiClient(AppsV1Api);
    // The admin's own exclusion: namespaces labelled off are never sent (a namespace no webhook sees).
    await helmUpgrade(tag, [
      '--reuse-values',
      '--set-json',
      `webhooks.namespaceSelector={"matchExpressions":[{"key":"${ADMISSION_SWITCH}","operator":"NotIn","values":["off"]}]}`,
    ]);
    // The calls counted below are the listed replicas' decisions: wait out those the upgrade replaced
    // (a draining one still answers, and a reservation goes to the leader, which may be one of them).
    const current = await settled(2);
    await waitFor('the Lease held by a replica of this release', async () => {
      const identity = await leaseHolder();
      return current.some((pod) => identity.startsWith(`${pod.metadata?.name}_`)) || undefined;
    });
    const ns = async (prefix: string, labels: Record<string, string> = {}): Promise<string> => {
      const name = await podReadyNamespace(t, prefix);
      for (const [key, value] of Object.entries(labels))
        await kubectl(['label', 'namespace', name, `${key}=${value}`]);
      return name;
    };
    const unseen = await ns('e2e-unseen', { [ADMISSION_SWITCH]: 'off' });
    const plainNamespaces = [await ns('e2e-plain'), await ns('e2e-plain')];
    const daemonNamespace = await ns('e2e-daemon');
    const quotaNamespace = await ns('e2e-quota-ns');
    const profileNamespace = await ns('e2e-colo', { 'e2e.admission-operator.io/colocate': 'true' });
    const gpuNamespace = await ns('e2e-tier', { 'tenant.kubenexus.io/tier': 'gold' });
    const profile = `e2e-colocate-${Date.now().toString(36)}`;
    t.after(async () => {
      await kubectl(['delete', 'clustercolocationprofile', profile, '--ignore-not-found']);
    });
    await kubectl(
      ['apply', '-f', '-'],
      [
        'apiVersion: scheduling.sigs.k8s.io/v1alpha1',
        'kind: ElasticQuota',
        `metadata: {name: ${quotaNamespace}, namespace: ${quotaNamespace}}`,
        'spec: {min: {cpu: "0"}, max: {cpu: "100"}}',
        '---',
        'apiVersion: config.koordinator.sh/v1alpha1',
        'kind: ClusterColocationProfile',
        `metadata: {name: ${profile}}`,
        'spec:',
        '  namespaceSelector: {matchLabels: {e2e.admission-operator.io/colocate: "true"}}',
        '  selector: {matchLabels: {app: colo}}',
        '  labels: {colocated: "true"}',
        '',
      ].join('\n'),
    );
    await waitFor('the configurations to follow the quota and the profile', async () => {
      const registration = kc.makeApiClient(AdmissionregistrationV1Api);
      const text = JSON.stringify([
        await registration.readMutatingWebhookConfiguration({ name: 'admission-operator' }),
        await registration.readValidatingWebhookConfiguration({ name: 'admission-operator' }),
      ]);
      return text.includes(quotaNamespace) && text.includes('e2e.admission-operator.io/colocate')
        ? true
        : undefined;
    });

    // Pods stay Pending: no scheduler has this name, so the node's scheduler leaves them alone.
    const container = (resources: Record<string, Record<string, string>> = {}) => ({
      name: 'main',
      image: 'registry.invalid/app:1',
      resources,
    });
    const podSpec = (resources?: Record<string, Record<string, string>>) => ({
      schedulerName: NO_SCHEDULER,
      containers: [container(resources)],
    });
    /** The workload's direct creates: what each is, where, and whether a rule governs it. */
    const direct = (round: string) => [
      ...Array.from({ length: 5 }, (_, i) => ({
        what: 'quota namespace',
        governed: true,
        namespace: quotaNamespace,
        body: { metadata: { name: `q-${round}-${i}` }, spec: podSpec({ requests: { cpu: '100m' } }) },
      })),
      ...Array.from({ length: 5 }, (_, i) => ({
        what: 'profile',
        governed: true,
        namespace: profileNamespace,
        body: { metadata: { name: `c-${round}-${i}`, labels: { app: 'colo' } }, spec: podSpec() },
      })),
      ...Array.from({ length: 5 }, (_, i) => ({
        what: 'GPU, tiered namespace (GPU-class webhook: Ignore)',
        governed: false,
        namespace: gpuNamespace,
        body: { metadata: { name: `g-${round}-${i}` }, spec: podSpec({ limits: { 'nvidia.com/gpu': '1' } }) },
      })),
    ];
    const controllers = async (
      round: string,
    ): Promise<{ namespace: string; selector: string; replicas: number }[]> => {
      const labels = { app: `plain-${round}` };
      const template = { metadata: { labels }, spec: podSpec() };
      for (const namespace of plainNamespaces) {
        await apps.createNamespacedDeployment({
          namespace,
          body: {
            metadata: { name: `plain-${round}` },
            spec: { replicas: 5, selector: { matchLabels: labels }, template },
          },
        });
      }
      await apps.createNamespacedDaemonSet({
        namespace: daemonNamespace,
        body: { metadata: { name: `agent-${round}` }, spec: { selector: { matchLabels: labels }, template } },
      });
      return [
        ...plainNamespaces.map((namespace) => ({ namespace, selector: `app=plain-${round}`, replicas: 5 })),
        { namespace: daemonNamespace, selector: `app=plain-${round}`, replicas: 1 },
      ];
    };
    const created = async (
      expected: { namespace: string; selector: string; replicas: number }[],
    ): Promise<void> => {
      for (const { namespace, selector, replicas } of expected) {
        await waitFor(
          `${replicas} pod(s) of ${selector} in ${namespace}`,
          async () => {
            const pods = await core.listNamespacedPod({ namespace, labelSelector: selector });
            return pods.items.length === replicas ? true : undefined;
          },
          { timeoutMs: 60_000, intervalMs: 250 },
        );
      }
    };

    // The API server takes a rewritten configuration from its own watch of it, a moment after the
    // object changes: wait until it sends a governed pod of each kind (dry runs, which call webhooks).
    for (const [namespace, labels] of [
      [quotaNamespace, {}],
      [profileNamespace, { app: 'colo' }],
    ] as const) {
      await waitFor(`the API server to send a pod of ${namespace} to us`, async () => {
        const before = await ourDecisions();
        await core.createNamespacedPod({
          namespace,
          body: { metadata: { name: 'probe', labels }, spec: podSpec() },
          dryRun: 'All',
        });
        return (await ourDecisions()) > before ? true : undefined;
      });
    }
    // With the operator up: which creates call us.
    const upCalls: Record<string, number> = {};
    let creates = 0;
    let calling = 0;
    for (const item of direct('up')) {
      const before = await ourDecisions();
      await core.createNamespacedPod({ namespace: item.namespace, body: item.body });
      const calls = (await ourDecisions()) - before;
      upCalls[item.what] = (upCalls[item.what] ?? 0) + calls;
      creates += 1;
      if (calls > 0) calling += 1;
    }
    const beforeControllers = await ourDecisions();
    const upControllers = await controllers('up');
    await created(upControllers);
    const controllerPods = upControllers.reduce((sum, each) => sum + each.replicas, 0);
    assert.equal(
      (await ourDecisions()) - beforeControllers,
      0,
      'the Deployments’ and DaemonSet’s pods never called us',
    );
    creates += controllerPods;
    const colocated = await core.readNamespacedPod({ namespace: profileNamespace, name: 'c-up-0' });
    assert.equal(colocated.metadata?.labels?.colocated, 'true', 'the profile applied while we were up');
    log(
      `step 6: with the operator up, ${calling} of ${creates} creates of the mixed workload called us ` +
        `(${((100 * calling) / creates).toFixed(1)} %); calls by kind: ${JSON.stringify(upCalls)}, Deployments and DaemonSet 0`,
    );

    // 1,000 ungoverned creates, interleaved with creates in a namespace no webhook sees, by
    // LATENCY_CLIENTS clients at once (as a controller's workers create): both sides under the same load.
    const before = await ourDecisions();
    const plainLatency: number[] = [];
    const unseenLatency: number[] = [];
    const pairs = Array.from({ length: 1000 }, (_, i) => i);
    await Promise.all(
      Array.from({ length: LATENCY_CLIENTS }, async () => {
        for (let i = pairs.shift(); i !== undefined; i = pairs.shift()) {
          // Each first in turn, so neither gains from following the other.
          const pair = [
            [plainNamespaces[0] ?? '', plainLatency],
            [unseen, unseenLatency],
          ] as const;
          for (const [namespace, into] of i % 2 === 0 ? pair : [...pair].reverse()) {
            const started = performance.now();
            await core.createNamespacedPod({
              namespace,
              body: { metadata: { name: `lat-${i}` }, spec: podSpec() },
            });
            into.push(performance.now() - started);
          }
        }
      }),
    );
    const ungovernedCalls = (await ourDecisions()) - before;
    const p = (values: number[], q: number): number =>
      [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((q / 100) * values.length))] ??
      NaN;
    log(
      `step 6: 1,000 ungoverned creates made ${ungovernedCalls} calls to us; create latency p50 ${p(plainLatency, 50).toFixed(1)} ms ` +
        `against ${p(unseenLatency, 50).toFixed(1)} ms in a namespace no webhook sees (${(p(plainLatency, 50) / p(unseenLatency, 50)).toFixed(3)} ×), ` +
        `p99 ${p(plainLatency, 99).toFixed(1)} against ${p(unseenLatency, 99).toFixed(1)} ms (${(p(plainLatency, 99) / p(unseenLatency, 99)).toFixed(3)} ×)`,
    );
    assert.equal(ungovernedCalls, 0, 'an ungoverned pod makes no call to us');

    // Every replica stopped, the configurations left in place.
    await kubectl(['scale', 'deployment', releaseName, '-n', releaseNamespace, '--replicas=0']);
    await waitFor('every chart pod to be gone', async () => (await chartPods(true)).length === 0, {
      timeoutMs: 120_000,
      intervalMs: 500,
    });
    const refused: string[] = [];
    const unexpected: string[] = [];
    let admittedDown = 0;
    let attempted = 0;
    for (const item of direct('down')) {
      attempted += 1;
      try {
        await core.createNamespacedPod({ namespace: item.namespace, body: item.body });
        admittedDown += 1;
        if (item.governed) unexpected.push(`${item.what}: created while no replica answers`);
      } catch (error) {
        const message = String((error as { body?: unknown }).body ?? error);
        if (!item.governed) unexpected.push(`${item.what}: ${message.slice(0, 300)}`);
        else if (!/failed calling webhook/.test(message))
          unexpected.push(`${item.what}: ${message.slice(0, 300)}`);
        else refused.push(item.what);
      }
    }
    const downControllers = await controllers('down');
    await created(downControllers);
    attempted += controllerPods;
    admittedDown += controllerPods;
    log(
      `step 6: with every replica stopped, ${admittedDown} of ${attempted} creates succeeded, ${refused.length} refused ` +
        `with "failed calling webhook" (${[...new Set(refused)].join(', ')}); ${((100 * refused.length) / attempted).toFixed(1)} % of the workload's creates needed us`,
    );
    assert.deepEqual(unexpected, [], 'only governed pods are refused, and those with failed calling webhook');
    assert.equal(refused.length, 10, 'the quota namespace’s and the profile’s pods');

    await kubectl(['scale', 'deployment', releaseName, '-n', releaseNamespace, '--replicas=2']);
    await readyPods(2);
  });

  it('step 7: with replicaCount 1, evicting the pod is not blocked by a PodDisruptionBudget', async () => {
    await helmUpgrade(tag, ['--reuse-values', '--set', 'replicaCount=1']);
    const [pod] = await readyPods(1);
    const name = pod?.metadata?.name ?? '';
    const kc = await clusterKubeConfig();
    const budgets = await kc.makeApiClient(PolicyV1Api).listNamespacedPodDisruptionBudget({
      namespace: releaseNamespace,
    });
    assert.deepEqual(
      budgets.items.map((budget) => budget.metadata?.name),
      [],
      'no budget over a single replica',
    );
    // The Eviction API is what `kubectl drain` calls: it answers 429 when a budget forbids it.
    await kc.makeApiClient(CoreV1Api).createNamespacedPodEviction({
      namespace: releaseNamespace,
      name,
      body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: releaseNamespace } },
    });
    await readyPods(1);
  });

  it('step 8: helm uninstall leaves no pod and no webhook configuration, and keeps the CRDs', async () => {
    const kc = await clusterKubeConfig();
    await uninstall();
    await waitFor('the chart’s pods to be gone', async () => (await chartPods()).length === 0, {
      timeoutMs: 60_000,
      intervalMs: 500,
    });
    const registration = kc.makeApiClient(AdmissionregistrationV1Api);
    await waitFor(
      'the garbage collector to remove both configurations',
      async () => {
        const mutating = await registration.listMutatingWebhookConfiguration();
        const validating = await registration.listValidatingWebhookConfiguration();
        return ![...mutating.items, ...validating.items].some(
          (configuration) => configuration.metadata?.name === 'admission-operator',
        );
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    // This cluster had none of the CRDs: the release created them (deploy-local sets crds.enabled), and its keep
    // policy leaves them.
    const crds = await kc.makeApiClient(ApiextensionsV1Api).listCustomResourceDefinition();
    for (const name of [
      'elasticquotas.scheduling.sigs.k8s.io',
      'modelboosters.workload.serving.volcano.sh',
    ]) {
      const crd = crds.items.find((item) => item.metadata?.name === name);
      assert.ok(crd, `${name} is kept`);
      assert.equal(crd.metadata?.annotations?.['meta.helm.sh/release-name'], releaseName);
      assert.equal(crd.metadata?.annotations?.['helm.sh/resource-policy'], 'keep');
    }
  });
});
