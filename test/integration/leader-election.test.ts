/**
 * Several replicas against the real API server: the admission-operator Lease names one
 * holder, only that replica writes the Secret and the configurations (whatever table the
 * others would write), a killed leader is replaced within a lease period and its successor
 * keeps rotating certificates. And a fresh install never publishes a failurePolicy=Fail
 * webhook before a replica can answer it.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  AdmissionregistrationV1Api,
  CoordinationV1Api,
  RbacAuthorizationV1Api,
  type V1ManagedFieldsEntry,
} from '@kubernetes/client-node';
import { freePorts } from '../../scripts/cluster/control-plane.js';
import {
  clusterKubeConfig,
  createPod,
  podReadyNamespace,
  testNamespace,
  uniqueSuffix,
  waitFor,
} from '../harness/cluster.js';
import {
  CONFIGURATION_NAME,
  deleteConfigurations,
  cleanConfigurationsAfter,
  httpGet,
  logsMatching,
  readSecret,
  secretValue,
  servedCertificate,
  startOperator,
  waitForPublishedSecret,
  type OperatorProcess,
} from '../harness/operator.js';

/** Short timings, so a takeover is seconds; the same ratios as the defaults (15 s / 10 s / 2 s). */
const LEASE_MS = 4000;
const LEASE_ARGS = [
  `--leader-elect-lease-duration=${LEASE_MS}ms`,
  '--leader-elect-renew-deadline=3s',
  '--leader-elect-retry-period=500ms',
];
/** Serving certificates renewed every 10 s. */
const ROTATION_ARGS = ['--cert-lifetime=20s', '--cert-renew-before=10s'];
const WRITES = /created webhook configuration|repaired webhook configuration|wrote webhook-tls/;

async function apis(): Promise<{ admission: AdmissionregistrationV1Api; leases: CoordinationV1Api }> {
  const kc = await clusterKubeConfig();
  return {
    admission: kc.makeApiClient(AdmissionregistrationV1Api),
    leases: kc.makeApiClient(CoordinationV1Api),
  };
}

async function holder(namespace: string): Promise<string> {
  const { leases } = await apis();
  const lease = await leases.readNamespacedLease({ namespace, name: 'admission-operator' });
  return lease.spec?.holderIdentity ?? '';
}

async function configurations(): Promise<
  { kind: string; resourceVersion: string; webhooks: string[]; managers: string[] }[]
> {
  const { admission } = await apis();
  const managers = (fields: V1ManagedFieldsEntry[] | undefined): string[] => [
    ...new Set((fields ?? []).map((field) => field.manager ?? '?')),
  ];
  const mutating = await admission.readMutatingWebhookConfiguration({ name: CONFIGURATION_NAME });
  const validating = await admission.readValidatingWebhookConfiguration({ name: CONFIGURATION_NAME });
  return [mutating, validating].map((configuration) => ({
    kind: configuration.kind ?? '',
    resourceVersion: configuration.metadata?.resourceVersion ?? '',
    webhooks: (configuration.webhooks ?? []).map((webhook) => webhook.name),
    managers: managers(configuration.metadata?.managedFields),
  }));
}

const versions = async (): Promise<string> =>
  (await configurations()).map((configuration) => configuration.resourceVersion).join('/');

/** Waits until the configurations' resourceVersions stay put for `quietMs`; resolves with how long that took. */
async function settles(quietMs: number, timeoutMs: number): Promise<number> {
  const started = Date.now();
  let last = await versions();
  let since = Date.now();
  for (;;) {
    await new Promise((done) => setTimeout(done, 250));
    const now = await versions();
    if (now !== last) {
      last = now;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) {
      return since - started;
    }
    if (Date.now() - started > timeoutMs)
      throw new Error(`the configurations still change after ${timeoutMs} ms`);
  }
}

async function leaderGauge(operator: OperatorProcess): Promise<number> {
  const metrics = await httpGet(operator.metricsPort, '/metrics');
  const match = /^admission_leader (\d)/m.exec(metrics.body);
  return Number(match?.[1] ?? NaN);
}

describe('leader election', () => {
  it('one holder writes its own table; the others only serve; a killed leader is replaced within a lease period and rotation goes on', async (t) => {
    cleanConfigurationsAfter(t);
    await deleteConfigurations();
    const namespace = await testNamespace(t, 'op');
    const [portA, portB] = (await freePorts(2)) as [number, number];
    const a = await startOperator(t, {
      namespace,
      port: portA,
      webhookPort: portA,
      args: [...LEASE_ARGS, ...ROTATION_ARGS],
      env: { POD_NAME: 'replica-a' },
    });
    await waitFor(
      'replica-a to hold the lease',
      async () => (await holder(namespace)).startsWith('replica-a_'),
      {
        timeoutMs: 30_000,
      },
    );
    // The other replica's table lacks validate-node: were it to write, the configurations would flip.
    const b = await startOperator(t, {
      namespace,
      port: portB,
      webhookPort: portA,
      args: [...LEASE_ARGS, ...ROTATION_ARGS, '--feature-gates=NodeValidatingWebhook=false'],
      env: { POD_NAME: 'replica-b' },
    });
    const secret = await waitForPublishedSecret(namespace, 30_000);
    const ca = new X509Certificate(secretValue(secret, 'ca.crt'));
    await waitFor('replica-b to serve a certificate from the Secret', async () => {
      const served = await servedCertificate(b.port);
      return served.checkIssued(ca) && served.verify(ca.publicKey);
    });

    const settledAfter = await settles(5000, 30_000);
    t.diagnostic(`two replicas: the configurations settled ${settledAfter} ms after both were serving`);
    assert.ok((await holder(namespace)).startsWith('replica-a_'));
    for (const configuration of await configurations()) {
      assert.deepEqual(configuration.managers, ['admission-operator'], configuration.kind);
    }
    const validating = (await configurations()).find((c) => c.kind === 'ValidatingWebhookConfiguration');
    assert.ok(validating?.webhooks.includes('validate-node.admission-operator.io'), "the leader's table");
    assert.deepEqual(
      [...new Set((await readSecret(namespace))?.metadata?.managedFields?.map((field) => field.manager))],
      ['admission-operator'],
    );
    assert.equal(await leaderGauge(a), 1);
    assert.equal(await leaderGauge(b), 0);
    assert.deepEqual(
      logsMatching(b, WRITES).map((line) => line.msg),
      [],
      'the follower wrote nothing',
    );
    assert.equal(logsMatching(b, /became the leader/).length, 0);

    // The leader dies without a word: the lease must expire before replica-b may take it.
    const servingBefore = new X509Certificate(secretValue(await readSecret(namespace), 'tls.crt'))
      .serialNumber;
    await a.stop('SIGKILL');
    const killedAt = Date.now();
    await waitFor(
      'replica-b to take the lease',
      async () => (await holder(namespace)).startsWith('replica-b_'),
      {
        timeoutMs: LEASE_MS + 15_000,
        intervalMs: 50,
      },
    );
    const takeover = Date.now() - killedAt;
    t.diagnostic(
      `replica-b took the lease ${takeover} ms after the leader was killed (lease ${LEASE_MS} ms)`,
    );
    assert.ok(takeover <= LEASE_MS + 3000, `took ${takeover} ms`);
    await waitFor('admission_leader 1 on replica-b', async () => (await leaderGauge(b)) === 1);
    assert.equal(logsMatching(b, /became the leader/).length, 1);

    // Now its table is the one written, once, and then nothing changes.
    await waitFor(
      "replica-b's table in the configurations",
      async () =>
        !(await configurations())
          .find((c) => c.kind === 'ValidatingWebhookConfiguration')
          ?.webhooks.includes('validate-node.admission-operator.io'),
      { timeoutMs: 20_000 },
    );
    await settles(5000, 30_000);
    for (const configuration of await configurations()) {
      assert.deepEqual(configuration.managers, ['admission-operator'], configuration.kind);
    }

    // And it keeps rotating: a serving certificate issued after the takeover, served by it.
    const rotated = await waitFor(
      'a serving certificate issued by the new leader',
      async () => {
        const pem = secretValue(await readSecret(namespace), 'tls.crt');
        const serial = pem ? new X509Certificate(pem).serialNumber : servingBefore;
        return serial !== servingBefore && logsMatching(b, /wrote webhook-tls/).length > 0
          ? serial
          : undefined;
      },
      { timeoutMs: 40_000, intervalMs: 250 },
    );
    await waitFor(
      'replica-b to serve it',
      async () => (await servedCertificate(b.port)).serialNumber === rotated,
    );
    assert.equal(b.child.exitCode, null);
  });

  it('hands the lease over at once when the leader stops cleanly', async (t) => {
    cleanConfigurationsAfter(t);
    await deleteConfigurations();
    const namespace = await testNamespace(t, 'op');
    const [portA, portB] = (await freePorts(2)) as [number, number];
    // Default timings: without the release, the successor would wait 15 s.
    const a = await startOperator(t, {
      namespace,
      port: portA,
      webhookPort: portA,
      env: { POD_NAME: 'replica-a' },
    });
    await waitFor(
      'replica-a to hold the lease',
      async () => (await holder(namespace)).startsWith('replica-a_'),
      {
        timeoutMs: 30_000,
      },
    );
    const b = await startOperator(t, {
      namespace,
      port: portB,
      webhookPort: portA,
      env: { POD_NAME: 'replica-b' },
    });
    await waitForPublishedSecret(namespace, 30_000);
    await waitFor('replica-b to serve', () => servedCertificate(b.port));
    const stoppedAt = Date.now();
    assert.equal(await a.stop('SIGTERM'), 0);
    await waitFor(
      'replica-b to take the lease',
      async () => (await holder(namespace)).startsWith('replica-b_'),
      {
        timeoutMs: 12_000,
        intervalMs: 50,
      },
    );
    const handover = Date.now() - stoppedAt;
    t.diagnostic(`lease handed over ${handover} ms after SIGTERM (lease 15 s, retry 2 s)`);
    assert.equal(logsMatching(a, /released the lease/).length, 1);
  });

  it('publishes no configuration before it can answer: pod creates from the first moment never fail', async (t) => {
    cleanConfigurationsAfter(t);
    await deleteConfigurations();
    const namespace = await testNamespace(t, 'op');
    const workload = await podReadyNamespace(t);
    const failures: string[] = [];
    let created = 0;
    let stop = false;
    const worker = async (): Promise<void> => {
      while (!stop) {
        try {
          await createPod(workload);
          created++;
        } catch (error) {
          failures.push(String((error as { body?: unknown }).body ?? error));
        }
      }
    };
    const running = [worker(), worker()];
    const operator = await startOperator(t, { namespace });
    await waitForPublishedSecret(namespace, 30_000);
    // Until pods are admitted through the webhooks, and a little longer.
    await waitFor('a pod admitted through the webhooks', () =>
      Promise.resolve(logsMatching(operator, /admission decision/).length > 0),
    );
    await new Promise((done) => setTimeout(done, 1000));
    stop = true;
    await Promise.all(running);
    t.diagnostic(
      `${created} pods created from the operator's start until it admitted them; ${failures.length} failed`,
    );
    assert.deepEqual(failures.slice(0, 3), []);
    assert.ok(created > 0);
  });

  it('settles when the live configurations have an owner reference but its own owner ClusterRole is missing', async (t) => {
    cleanConfigurationsAfter(t);
    await deleteConfigurations();
    const kc = await clusterKubeConfig();
    const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    const { admission } = await apis();
    // An earlier install's owner, still present (so the garbage collector leaves the objects alone).
    const earlier = await rbac.createClusterRole({
      body: { metadata: { name: `ao-earlier-${uniqueSuffix()}` } },
    });
    t.after(async () => {
      await rbac.deleteClusterRole({ name: earlier.metadata?.name ?? '' }).catch(() => undefined);
    });
    const ownerReferences = [
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        name: earlier.metadata?.name ?? '',
        uid: earlier.metadata?.uid ?? '',
      },
    ];
    await admission.createValidatingWebhookConfiguration({
      body: { metadata: { name: CONFIGURATION_NAME, ownerReferences } },
    });
    await admission.createMutatingWebhookConfiguration({
      body: { metadata: { name: CONFIGURATION_NAME, ownerReferences } },
    });
    const namespace = await testNamespace(t, 'op');
    const operator = await startOperator(t, {
      namespace,
      args: [`--owner-cluster-role=missing-${uniqueSuffix()}`],
    });
    await waitForPublishedSecret(namespace, 30_000);
    const settledAfter = await settles(4000, 30_000);
    t.diagnostic(`settled ${settledAfter} ms after the configurations were published`);
    const repairs = logsMatching(operator, /repaired webhook configuration/).length;
    assert.ok(repairs <= 2, `${repairs} repairs`);
    assert.deepEqual(logsMatching(operator, /another writer/), []);
  });
});
