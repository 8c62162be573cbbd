/**
 * The narrowed webhook configurations on the real API server (docs/design.md, "Blast radius"): a
 * pod no rule can affect is never sent to us; the configurations follow a new profile, a
 * relabelled namespace and a new quota; bursts of changes are a handful of writes; and the API
 * server accepts what is written for 10,000 namespaces and 1,000 profiles. How fast they follow
 * is measured in `npm run bench -- narrowing`, not asserted here.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  AdmissionregistrationV1Api,
  CoreV1Api,
  type V1Pod,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { desiredMutating, desiredValidating } from '../../operator/webhooks/desired-configurations.js';
import { FOLLOW_INTERVAL_MS } from '../../operator/webhooks/configuration-reconciler.js';
import { narrowWebhooks } from '../../webhook/narrowing/narrow-webhooks.js';
import {
  clusterKubeConfig,
  createPod,
  installCrds,
  kubectl,
  podReadyNamespace,
  uniqueSuffix,
  waitFor,
} from '../harness/cluster.js';
import { CONFIGURATION_NAME, freshOperator, httpGet, type OperatorProcess } from '../harness/operator.js';
import { BOUNDED_SCALE, scaleState } from '../harness/narrowing-scale.js';
import { defaultWebhooks } from '../harness/table-context.js';

/** The sum of a counter's series whose labels include all of `labels`. */
async function counter(
  operator: OperatorProcess,
  name: string,
  labels: Record<string, string>,
): Promise<number> {
  const text = (await httpGet(operator.metricsPort, '/metrics')).body;
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (!Object.entries(labels).every(([key, value]) => line.includes(`${key}="${value}"`))) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

const decisions = (operator: OperatorProcess, webhook: string): Promise<number> =>
  counter(operator, 'admission_decisions_total', { webhook: `${webhook}.admission-operator.io` });

const follows = (operator: OperatorProcess): Promise<number> =>
  counter(operator, 'admission_webhook_configuration_writes_total', { action: 'follow' });

async function configurationsText(): Promise<string> {
  const api = (await clusterKubeConfig()).makeApiClient(AdmissionregistrationV1Api);
  return JSON.stringify([
    await api.readMutatingWebhookConfiguration({ name: CONFIGURATION_NAME }),
    await api.readValidatingWebhookConfiguration({ name: CONFIGURATION_NAME }),
  ]);
}

/** The follow writes so far, once none has come for two seconds (earlier tests' objects may still be going). */
async function quietFollows(operator: OperatorProcess): Promise<number> {
  let last = await follows(operator);
  let quietSince = Date.now();
  return waitFor(
    'the configurations to stop following for two seconds',
    async () => {
      const now = await follows(operator);
      if (now !== last) {
        last = now;
        quietSince = Date.now();
      }
      return Date.now() - quietSince >= 2000 ? now : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 200 },
  );
}

const plainPod = (name: string, cpu = '100m'): V1Pod => ({
  metadata: { name },
  spec: { containers: [{ name: 'main', image: 'registry.invalid/app:1', resources: { requests: { cpu } } }] },
});

describe('narrowed webhook configurations', () => {
  it('send no plain pod to our webhooks, and a governed one to each once', async (t) => {
    const { operator } = await freshOperator(t);
    const namespace = await podReadyNamespace(t, 'plain');
    const core = (await clusterKubeConfig()).makeApiClient(CoreV1Api);
    // Both pod webhooks are narrowed: each carries the condition.
    assert.match(await configurationsText(), /could-be-affected/);
    const before = [await decisions(operator, 'mutate-pod'), await decisions(operator, 'validate-pod')];
    for (let i = 0; i < 20; i++) await core.createNamespacedPod({ namespace, body: plainPod(`plain-${i}`) });
    assert.deepEqual(
      [await decisions(operator, 'mutate-pod'), await decisions(operator, 'validate-pod')],
      before,
    );
    // The conditions' cost grows with the containers: a pod of 1,000 containers asking for ten
    // resources each is still judged by them, not refused for their cost.
    const requests = Object.fromEntries(
      Array.from({ length: 10 }, (_, r) => [`example.com/resource-${r}`, '1']),
    );
    const wide: V1Pod = {
      metadata: { name: 'wide' },
      spec: {
        containers: Array.from({ length: 1000 }, (_, i) => ({
          name: `c${i}`,
          image: 'registry.invalid/app:1',
          // Extended resources: the API server wants their limits, equal to the requests.
          resources: { requests, limits: requests },
        })),
      },
    };
    await core.createNamespacedPod({ namespace, body: wide, dryRun: 'All' });
    await createPod(namespace);
    assert.deepEqual(
      [await decisions(operator, 'mutate-pod'), await decisions(operator, 'validate-pod')],
      before.map((count) => count + 1),
    );
  });

  it('follow a new profile, and a namespace relabelled afterwards without naming it', async (t) => {
    await installCrds('clustercolocationprofiles.config.koordinator.sh');
    const suffix = uniqueSuffix();
    const profile = `blast-${suffix}`;
    t.after(async () => {
      await kubectl(['delete', 'clustercolocationprofile', profile, '--ignore-not-found']);
    });
    await freshOperator(t);
    const namespace = await podReadyNamespace(t, 'relabel');
    const core = (await clusterKubeConfig()).makeApiClient(CoreV1Api);
    const labelKey = 'blast.admission-operator.io/colocate';
    await kubectl(
      ['create', '-f', '-'],
      [
        'apiVersion: config.koordinator.sh/v1alpha1',
        'kind: ClusterColocationProfile',
        `metadata: {name: ${profile}}`,
        'spec:',
        `  namespaceSelector: {matchLabels: {${labelKey}: "${suffix}"}}`,
        '  labels: {colocated: "true"}',
        '',
      ].join('\n'),
    );
    const created = Date.now();
    await waitFor('the configuration to follow the profile', async () =>
      (await configurationsText()).includes(suffix) ? true : undefined,
    );
    t.diagnostic(
      `the profile's namespace selector was written ${Date.now() - created} ms after it was created`,
    );
    await core.createNamespacedPod({ namespace, body: plainPod('before') });
    await kubectl(['label', 'namespace', namespace, `${labelKey}=${suffix}`]);
    // The API server reads the namespace's labels itself: the next pod is sent and gets the profile.
    const labelled = await waitFor('a pod of the relabelled namespace to get the profile', async () => {
      const name = `after-${uniqueSuffix()}`;
      const pod = await core.createNamespacedPod({ namespace, body: plainPod(name) });
      return pod.metadata?.labels?.colocated === 'true' ? pod : undefined;
    });
    assert.ok(labelled.metadata?.name);
    const before = await core.readNamespacedPod({ namespace, name: 'before' });
    assert.equal(before.metadata?.labels?.colocated, undefined, 'a pod created before is left as it was');
    // Nothing of the namespace is in the configurations: its labels are read by the API server.
    assert.ok(
      !(await configurationsText()).includes(namespace),
      'the namespace is not named in the configurations',
    );
  });

  it('follow a new quota: the pods of its namespace are checked from then on', async (t) => {
    await installCrds('elasticquotas.scheduling.sigs.k8s.io');
    await freshOperator(t);
    const namespace = await podReadyNamespace(t, 'quota');
    const core = (await clusterKubeConfig()).makeApiClient(CoreV1Api);
    // Plain pods there are not checked yet: no quota governs the namespace.
    await core.createNamespacedPod({ namespace, body: plainPod('unchecked', '2') });
    await kubectl(
      ['apply', '-f', '-'],
      [
        'apiVersion: scheduling.sigs.k8s.io/v1alpha1',
        'kind: ElasticQuota',
        `metadata: {name: ${namespace}, namespace: ${namespace}}`,
        'spec: {min: {cpu: "0"}, max: {cpu: "1"}}',
        '',
      ].join('\n'),
    );
    await waitFor('the configuration to follow the quota', async () =>
      (await configurationsText()).includes(`'${namespace}'`) ? true : undefined,
    );
    // The API server sees the rewritten configuration a moment after it is written.
    const refusal = await waitFor(
      'a pod past the quota to be refused',
      async () => {
        try {
          await core.createNamespacedPod({ namespace, body: plainPod(`big-${uniqueSuffix()}`, '2') });
          return undefined;
        } catch (error) {
          return String((error as { body?: unknown }).body ?? error);
        }
      },
      { timeoutMs: 10_000 },
    );
    assert.match(refusal, /exceeded quota/);
  });

  it('write a burst of changes in a handful of writes: namespace labels in none, quotas at most every interval', async (t) => {
    await installCrds('elasticquotas.scheduling.sigs.k8s.io');
    const { operator } = await freshOperator(t);
    const namespace = await podReadyNamespace(t, 'burst');
    const core = (await clusterKubeConfig()).makeApiClient(CoreV1Api);
    const namespaces = await Promise.all(Array.from({ length: 10 }, () => podReadyNamespace(t, 'burst-ns')));
    let writes = await quietFollows(operator);
    const patch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    for (let round = 0; round < 100; round++) {
      await Promise.all(
        namespaces.map((name) =>
          core.patchNamespace(
            { name, body: { metadata: { labels: { 'blast.admission-operator.io/round': String(round) } } } },
            patch,
          ),
        ),
      );
    }
    // Let a follow that would come from them come.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    // Namespace labels are no input of the configurations; a leftover of an earlier test (a quota
    // going with its namespace) may still move them once meanwhile.
    const labelWrites = (await follows(operator)) - writes;
    t.diagnostic(`1,000 namespace label changes: ${labelWrites} writes of the configurations`);
    assert.ok(labelWrites <= 1, `${labelWrites} writes for 1,000 namespace label changes`);

    writes = await follows(operator);
    const started = Date.now();
    const quotas = Array.from({ length: 300 }, (_, i) => i);
    for (let i = 0; i < quotas.length; i += 20) {
      await kubectl(
        ['apply', '-f', '-'],
        quotas
          .slice(i, i + 20)
          .map((index) =>
            [
              'apiVersion: scheduling.sigs.k8s.io/v1alpha1',
              'kind: ElasticQuota',
              `metadata: {name: burst-${index}-${namespace}, namespace: ${namespace}, annotations: {quota.scheduling.koordinator.sh/namespaces: '["burst-${index}-${namespace}"]'}}`,
              'spec: {min: {cpu: "0"}, max: {cpu: "1"}}',
            ].join('\n'),
          )
          .join('\n---\n'),
      );
    }
    await waitFor('the configuration to list the last bound namespace', async () =>
      (await configurationsText()).includes(`burst-299-${namespace}`) ? true : undefined,
    );
    const seconds = (Date.now() - started) / 1000;
    const burstWrites = (await follows(operator)) - writes;
    t.diagnostic(`300 quotas in ${seconds.toFixed(1)} s: ${burstWrites} writes of the configurations`);
    // Each configuration is written at most once per interval, plus the first write.
    assert.ok(
      burstWrites <= 2 * (Math.floor((seconds * 1000) / FOLLOW_INTERVAL_MS) + 1),
      `${burstWrites} writes in ${seconds.toFixed(1)} s`,
    );
    // Coalesced: a write per change is caught at any speed. (Fewer than 30 held on a quiet machine, where
    // the 300 applies take about 10 s; a cold CI run, its builds beside it, took 33.9 s and wrote 48 times,
    // within the interval's bound above.)
    assert.ok(burstWrites <= 300 / 3, `${burstWrites} writes for 300 changes`);
  });

  it('are accepted by the API server at 10,000 namespaces with a quota each and 1,000 profiles', async () => {
    const api = (await clusterKubeConfig()).makeApiClient(AdmissionregistrationV1Api);
    const entries = narrowWebhooks(defaultWebhooks(), scaleState(BOUNDED_SCALE));
    const ca = '-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\n';
    const endpoint = { mode: 'url', host: '127.0.0.1', port: 1 } as const;
    const named = <T extends { metadata?: { name?: string } }>(configuration: T): T => ({
      ...configuration,
      metadata: { ...configuration.metadata, name: 'admission-operator-scale-check' },
    });
    // A server-side dry run: validated (every selector, every CEL condition compiled), never stored.
    await api.createMutatingWebhookConfiguration({
      body: named(desiredMutating(entries, endpoint, ca)),
      dryRun: 'All',
    });
    await api.createValidatingWebhookConfiguration({
      body: named(desiredValidating(entries, endpoint, ca)),
      dryRun: 'All',
    });
  });
});
