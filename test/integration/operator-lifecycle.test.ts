/**
 * The operator as `npm start` runs it, against the real API server: it issues its certificate,
 * writes both configurations with its CA, is called over TLS, repairs drift, survives a broken
 * Secret, never blocks its own namespace or kube-system while stopped, and keeps its CA across
 * restarts.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  AdmissionregistrationV1Api,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { MAX_BODY_BYTES } from '../../webhook/server/read-body.js';
import { createCertificateAuthority, issueCertificate } from '../../operator/certificates/x509.js';
import {
  clusterKubeConfig,
  createPod,
  kubectl,
  podReadyNamespace,
  testNamespace,
  waitFor,
} from '../harness/cluster.js';
import {
  CONFIGURATION_NAME,
  cleanConfigurationsAfter,
  freshOperator,
  httpGet,
  httpsCall,
  httpsGet,
  logsMatching,
  publishedBundles,
  readSecret,
  secretValue,
  servedCertificate,
  startOperator,
  waitForPublishedSecret,
  type OperatorProcess,
} from '../harness/operator.js';

async function apis(): Promise<{ core: CoreV1Api; admission: AdmissionregistrationV1Api }> {
  const kc = await clusterKubeConfig();
  return { core: kc.makeApiClient(CoreV1Api), admission: kc.makeApiClient(AdmissionregistrationV1Api) };
}

async function waitReady(operator: OperatorProcess, ca: string): Promise<void> {
  await waitFor(
    '/readyz to answer 200',
    async () => (await httpsGet(operator.port, '/readyz', ca)).status === 200,
    {
      timeoutMs: 20_000,
    },
  );
}

/** The API server admits a pod through our webhooks (it called us over TLS with our caBundle). */
async function admitsPods(operator: OperatorProcess, namespace: string): Promise<void> {
  const name = await waitFor('a pod to be admitted', () => createPod(namespace), { timeoutMs: 20_000 });
  await waitFor('the operator to log its decision on the pod', () =>
    Promise.resolve(
      logsMatching(operator, /admission decision/).some(
        (line) =>
          line.object === `${namespace}/${name}` && line.webhook === 'validate-pod.admission-operator.io',
      ),
    ),
  );
}

describe('operator lifecycle', () => {
  it('issues its Secret, publishes its CA in both configurations, serves /readyz and is called over TLS', async (t) => {
    cleanConfigurationsAfter(t);
    const namespace = await testNamespace(t, 'op');
    const workload = await podReadyNamespace(t);
    const started = Date.now();
    const operator = await startOperator(t, { namespace });
    const secret = await waitForPublishedSecret(namespace);
    t.diagnostic(
      `Secret and both configurations published ${Date.now() - started} ms after the process started`,
    );

    assert.equal(secret.type, 'kubernetes.io/tls');
    assert.equal(secret.metadata?.labels?.['app.kubernetes.io/managed-by'], 'admission-operator');
    for (const key of ['tls.crt', 'tls.key', 'ca.crt', 'ca.key']) assert.ok(secretValue(secret, key), key);
    const ca = secretValue(secret, 'ca.crt');
    const leaf = new X509Certificate(secretValue(secret, 'tls.crt'));
    assert.ok(leaf.verify(new X509Certificate(ca).publicKey));
    assert.equal(leaf.checkIP('127.0.0.1'), '127.0.0.1');
    assert.equal(
      leaf.checkHost(`admission-operator.${namespace}.svc`),
      `admission-operator.${namespace}.svc`,
    );

    await waitReady(operator, ca);
    const ready = await httpsGet(operator.port, '/readyz', ca);
    assert.match(ready.body, /verifies against the published caBundle/);
    await admitsPods(operator, workload);

    const metrics = await httpGet(operator.metricsPort, '/metrics');
    assert.match(
      metrics.body,
      /admission_decisions_total\{webhook="validate-pod\.admission-operator\.io",outcome="allowed",enforcement="deny"\}/,
    );
    assert.match(metrics.body, /admission_certificate_not_after_seconds\{certificate="serving"/);
  });

  it('repairs a garbage, empty or old caBundle, an edited rule, a removed entry and a deleted configuration', async (t) => {
    const { operator, secret } = await freshOperator(t);
    const ca = secretValue(secret, 'ca.crt');
    const { admission } = await apis();
    const oldCa = (await createCertificateAuthority({ commonName: 'old-ca', lifetimeMs: 3600_000 }))
      .certificatePem;

    const damages: [string, () => Promise<unknown>][] = [
      [
        'garbage caBundle',
        () => patchValidating(admission, [replace('/webhooks/0/clientConfig/caBundle', 'Z2FyYmFnZQ==')]),
      ],
      [
        'empty caBundle',
        () => patchValidating(admission, [replace('/webhooks/1/clientConfig/caBundle', '')]),
      ],
      [
        'an old CA',
        () =>
          patchMutating(admission, [
            replace('/webhooks/0/clientConfig/caBundle', Buffer.from(oldCa).toString('base64')),
          ]),
      ],
      [
        'an edited rule',
        () => patchValidating(admission, [replace('/webhooks/0/rules/0/operations', ['DELETE'])]),
      ],
      ['a removed entry', () => patchMutating(admission, [{ op: 'remove', path: '/webhooks/0' }])],
      [
        'a deleted configuration',
        () => admission.deleteValidatingWebhookConfiguration({ name: CONFIGURATION_NAME }),
      ],
    ];
    for (const [damage, apply] of damages) {
      const before = await admission.readValidatingWebhookConfiguration({ name: CONFIGURATION_NAME });
      const expectedCount = before.webhooks?.length ?? 0;
      await apply();
      const started = Date.now();
      await waitFor(`repair of ${damage}`, async () => {
        const bundles = await publishedBundles();
        if (!bundles.every((bundle) => bundle === ca)) return false;
        const validating = await admission.readValidatingWebhookConfiguration({ name: CONFIGURATION_NAME });
        const mutating = await admission.readMutatingWebhookConfiguration({ name: CONFIGURATION_NAME });
        return (
          validating.webhooks?.length === expectedCount &&
          (mutating.webhooks?.length ?? 0) > 0 &&
          validating.webhooks[0]?.rules?.[0]?.operations?.join(',') !== 'DELETE'
        );
      });
      t.diagnostic(`${damage}: repaired in ${Date.now() - started} ms`);
    }
    assert.equal(operator.child.exitCode, null, 'the operator kept running');
  });

  it('answers a server-side apply from another field manager with one repair, not a fight loop', async (t) => {
    const { operator, secret } = await freshOperator(t);
    const ca = secretValue(secret, 'ca.crt');
    const { admission } = await apis();
    const current = await admission.readValidatingWebhookConfiguration({ name: CONFIGURATION_NAME });
    const firstWebhook = current.webhooks![0]!;
    const repairsBefore = logsMatching(operator, /repaired webhook configuration/).length;

    await admission.patchValidatingWebhookConfiguration(
      {
        name: CONFIGURATION_NAME,
        fieldManager: 'helm',
        force: true,
        body: {
          apiVersion: 'admissionregistration.k8s.io/v1',
          kind: 'ValidatingWebhookConfiguration',
          metadata: { name: CONFIGURATION_NAME },
          webhooks: [
            {
              name: firstWebhook.name,
              admissionReviewVersions: ['v1'],
              sideEffects: 'None',
              clientConfig: {
                ...firstWebhook.clientConfig,
                caBundle: Buffer.from('stale').toString('base64'),
              },
            },
          ],
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
    );
    await waitFor('the repair', async () => (await publishedBundles()).every((bundle) => bundle === ca));
    await new Promise((done) => setTimeout(done, 3000));
    const repairs = logsMatching(operator, /repaired webhook configuration/).length - repairsBefore;
    assert.equal(repairs, 1, `expected one repair, saw ${repairs}`);
  });

  it('regenerates a deleted, emptied, mis-keyed, mistyped or garbage Secret, and admissions recover', async (t) => {
    const { operator, namespace } = await freshOperator(t);
    const workload = await podReadyNamespace(t);
    const { core } = await apis();
    const replacements: [string, Record<string, string>, string][] = [
      ['empty', {}, 'Opaque'],
      ['wrong keys', { 'cert.txt': 'x', 'key.txt': 'y' }, 'Opaque'],
      ['wrong type', { 'tls.crt': 'x', 'tls.key': 'y' }, 'Opaque'],
      [
        'garbage PEM',
        { 'tls.crt': 'garbage', 'tls.key': 'garbage', 'ca.crt': 'garbage' },
        'kubernetes.io/tls',
      ],
    ];
    const cases: [string, () => Promise<unknown>][] = [
      ['deleted', () => core.deleteNamespacedSecret({ namespace, name: 'webhook-tls' })],
      ...replacements.map(([label, data, type]): [string, () => Promise<unknown>] => [
        `replaced by one that is ${label}`,
        async () => {
          // The type of a Secret cannot change, so it is deleted and created again; the operator
          // may regenerate it in between (409 on create), in which case the damage is tried again.
          for (let attempt = 1; ; attempt++) {
            await core.deleteNamespacedSecret({ namespace, name: 'webhook-tls' });
            try {
              await core.createNamespacedSecret({
                namespace,
                body: {
                  metadata: { name: 'webhook-tls' },
                  type,
                  data: Object.fromEntries(
                    Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
                  ),
                },
              });
              return;
            } catch (error) {
              if ((error as { code?: number }).code !== 409 || attempt >= 10) throw error;
            }
          }
        },
      ]),
    ];
    for (const [label, damage] of cases) {
      await damage();
      const started = Date.now();
      const secret = await waitForPublishedSecret(namespace);
      assert.equal(secret.type, 'kubernetes.io/tls', label);
      await admitsPods(operator, workload);
      t.diagnostic(`${label}: regenerated and admitting again after ${Date.now() - started} ms`);
    }
    assert.equal(operator.child.exitCode, null, 'no crash');
  });

  it('presents a new serving certificate to new handshakes right after a rotation', async (t) => {
    const {
      operator,
      namespace,
      secret: before,
    } = await freshOperator(t, { args: ['--cert-lifetime=20s', '--cert-renew-before=12s'] });
    const oldSerial = new X509Certificate(secretValue(before, 'tls.crt')).serialNumber;
    const rotated = await waitFor(
      'a renewed serving certificate in the Secret',
      async () => {
        const pem = secretValue(await readSecret(namespace), 'tls.crt');
        return pem && new X509Certificate(pem).serialNumber !== oldSerial
          ? new X509Certificate(pem)
          : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 20 },
    );
    const written = Date.now();
    await waitFor(
      'the server to present it',
      async () => (await servedCertificate(operator.port)).serialNumber === rotated.serialNumber,
      { intervalMs: 20 },
    );
    t.diagnostic(`new serial served ${Date.now() - written} ms after the Secret changed`);
  });

  it('never blocks its own namespace or kube-system while stopped, and keeps its configurations', async (t) => {
    cleanConfigurationsAfter(t);
    const namespace = await podReadyNamespace(t, 'op');
    const workload = await podReadyNamespace(t);
    const operator = await startOperator(t, { namespace });
    await waitForPublishedSecret(namespace);
    await admitsPods(operator, workload);
    assert.equal(await operator.stop('SIGTERM'), 0, 'SIGTERM exits cleanly');

    const { admission, core } = await apis();
    await admission.readValidatingWebhookConfiguration({ name: CONFIGURATION_NAME });
    await admission.readMutatingWebhookConfiguration({ name: CONFIGURATION_NAME });
    await createPod(namespace);
    const systemPod = await createPod('kube-system', { 'admission-operator.test/owner': 'tests' });
    await core.deleteNamespacedPod({ namespace: 'kube-system', name: systemPod });
    await assert.rejects(createPod(workload), (error: unknown) => {
      assert.match(String((error as { body?: unknown }).body), /failed calling webhook/);
      return true;
    });
  });

  it('keeps the same CA and bundle across 20 restarts', async (t) => {
    cleanConfigurationsAfter(t);
    const namespace = await testNamespace(t, 'op');
    const first = await startOperator(t, { namespace });
    const secret = await waitForPublishedSecret(namespace);
    const ca = secretValue(secret, 'ca.crt');
    await waitReady(first, ca);
    await first.stop();
    for (let restart = 1; restart <= 20; restart++) {
      const operator = await startOperator(t, { namespace });
      await waitReady(operator, ca);
      assert.equal(await operator.stop(), 0);
      assert.equal(
        secretValue(await readSecret(namespace), 'ca.crt'),
        ca,
        `CA changed at restart ${restart}`,
      );
      assert.ok(
        (await publishedBundles()).every((bundle) => bundle === ca),
        `bundle changed at restart ${restart}`,
      );
    }
  });

  it("migrates an Opaque Secret in Koordinator's layout, keeping its CA and serving certificate", async (t) => {
    cleanConfigurationsAfter(t);
    const namespace = await testNamespace(t, 'op');
    const ca = await createCertificateAuthority({
      commonName: 'koordinator-webhook-ca',
      // Longer than the default renew-before (one year), so the CA is kept rather than rotated.
      lifetimeMs: 5 * 365 * 86_400_000,
    });
    const leaf = await issueCertificate(
      {
        commonName: `admission-operator.${namespace}.svc`,
        usage: 'server',
        lifetimeMs: 300 * 86_400_000,
        dnsNames: [
          `admission-operator.${namespace}.svc`,
          `admission-operator.${namespace}.svc.cluster.local`,
          'localhost',
        ],
        ipAddresses: ['127.0.0.1'],
      },
      ca,
    );
    const { core } = await apis();
    const b64 = (text: string): string => Buffer.from(text).toString('base64');
    await core.createNamespacedSecret({
      namespace,
      body: {
        metadata: { name: 'webhook-tls' },
        type: 'Opaque',
        data: {
          'ca-cert.pem': b64(ca.certificatePem),
          'ca-key.pem': b64(ca.privateKeyPem),
          'cert.pem': b64(leaf.certificatePem),
          'key.pem': b64(leaf.privateKeyPem),
        },
      },
    });
    const operator = await startOperator(t, { namespace });
    const migrated = await waitForPublishedSecret(namespace);
    assert.equal(migrated.type, 'kubernetes.io/tls');
    assert.equal(secretValue(migrated, 'ca.crt'), ca.certificatePem);
    assert.equal(secretValue(migrated, 'tls.crt'), leaf.certificatePem);
    assert.equal(
      (await servedCertificate(operator.port)).serialNumber,
      new X509Certificate(leaf.certificatePem).serialNumber,
    );
  });

  for (const [label, offsetMs] of [
    ['five minutes ahead', 300_000],
    ['five minutes behind', -300_000],
  ] as const) {
    it(`works with its clock ${label}`, async (t) => {
      cleanConfigurationsAfter(t);
      const namespace = await testNamespace(t, 'op');
      const workload = await podReadyNamespace(t);
      const operator = await startOperator(t, { namespace, clockOffsetMs: offsetMs });
      const secret = await waitForPublishedSecret(namespace);
      // The CA was issued on the skewed clock (notBefore lies an hour before its "now").
      const issuedAt = Date.parse(new X509Certificate(secretValue(secret, 'ca.crt')).validFrom) + 3600_000;
      const skew = issuedAt - Date.now();
      assert.ok(Math.abs(skew - offsetMs) < 60_000, `issued ${skew} ms from our clock, wanted ${offsetMs}`);
      await waitReady(operator, secretValue(secret, 'ca.crt'));
      await admitsPods(operator, workload);
    });
  }

  it('renews within a minute when the renewal moment passed while it was suspended', async (t) => {
    const { operator, namespace, secret } = await freshOperator(t, {
      args: ['--cert-lifetime=30s', '--cert-renew-before=20s'],
    });
    const serial = new X509Certificate(secretValue(secret, 'tls.crt')).serialNumber;
    operator.child.kill('SIGSTOP');
    await new Promise((done) => setTimeout(done, 12_000));
    operator.child.kill('SIGCONT');
    const resumed = Date.now();
    await waitFor(
      'a renewed serving certificate',
      async () =>
        new X509Certificate(secretValue(await readSecret(namespace), 'tls.crt')).serialNumber !== serial,
      { timeoutMs: 60_000 },
    );
    t.diagnostic(`renewed ${Date.now() - resumed} ms after resuming`);
  });

  it('reports ready only once a handshake verifies against the published caBundle', async (t) => {
    cleanConfigurationsAfter(t);
    const namespace = await testNamespace(t, 'op');
    const operator = await startOperator(t, { namespace });
    const firstReady = await waitFor(
      '/readyz to answer 200',
      async () => {
        const bundles = await publishedBundles().catch(() => []);
        const reply = await httpsCall(operator.port, '/readyz');
        return reply.status === 200 ? { reply, bundles } : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 20 },
    );
    const report = JSON.parse(firstReady.reply.body) as { checks: Record<string, { ok: boolean }> };
    assert.equal(report.checks.handshake?.ok, true);
    // Whatever the API server held just before: the certificate served now verifies against it.
    const bundle = (await publishedBundles())[0] ?? '';
    assert.equal((await httpsGet(operator.port, '/healthz', bundle)).status, 200);
  });

  it('says what is wrong with a bad request over TLS and keeps serving', async (t) => {
    cleanConfigurationsAfter(t);
    const namespace = await testNamespace(t, 'op');
    const operator = await startOperator(t, { namespace });
    const ca = secretValue(await waitForPublishedSecret(namespace), 'ca.crt');
    const { stdout } = await kubectl(['version', '--client']);
    assert.match(stdout, /Client Version/);
    const post = (body: string, contentType: string): Promise<{ status: number; body: string }> =>
      httpsCall(operator.port, '/validate-pod', { ca, method: 'POST', body, contentType, asApiServer: true });
    const notJson = await post('{nope', 'application/json');
    assert.equal(notJson.status, 400);
    assert.match(notJson.body, /not valid JSON/);
    const wrongType = await post('{}', 'text/plain');
    assert.equal(wrongType.status, 415);
    const tooLarge = await post(' '.repeat(MAX_BODY_BYTES + 1), 'application/json');
    assert.equal(tooLarge.status, 413);
    assert.equal((await httpsGet(operator.port, '/healthz', ca)).status, 200);
  });
});

function replace(path: string, value: unknown): { op: 'replace'; path: string; value: unknown } {
  return { op: 'replace', path, value };
}

const jsonPatchOptions = (): ReturnType<typeof setHeaderOptions> =>
  setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);

async function patchValidating(api: AdmissionregistrationV1Api, body: object[]): Promise<unknown> {
  return api.patchValidatingWebhookConfiguration({ name: CONFIGURATION_NAME, body }, jsonPatchOptions());
}

async function patchMutating(api: AdmissionregistrationV1Api, body: object[]): Promise<unknown> {
  return api.patchMutatingWebhookConfiguration({ name: CONFIGURATION_NAME, body }, jsonPatchOptions());
}
