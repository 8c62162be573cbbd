/**
 * `npm run bench -- narrowing`: the narrowed webhook configurations (docs/design.md, "Blast radius").
 *
 * In process: their bytes at 10,000 namespaces with a quota each and 1,000 profiles, and the time
 * to narrow that state. On the local control plane, with the operator running: how long after a
 * ClusterColocationProfile is created the configuration holds it, and a pod it selects is sent to
 * us, each against the reference measured in the same run, the time a watch takes to deliver the
 * profile to a client (what Koordinator's webhook waits for before it applies a new profile: its
 * informer lag); and the create latency of a pod no rule governs against a pod of a namespace no
 * webhook sees, interleaved.
 */
import { performance } from 'node:perf_hooks';
import type { TestContext } from 'node:test';
import {
  AdmissionregistrationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  Watch,
  type KubeConfig,
} from '@kubernetes/client-node';
import { desiredMutating, desiredValidating } from '../../operator/webhooks/desired-configurations.js';
import { narrowWebhooks } from '../../webhook/narrowing/narrow-webhooks.js';
import { FOLLOW_INTERVAL_MS } from '../../operator/webhooks/configuration-reconciler.js';
import { clusterKubeConfig, installCrds, waitFor } from '../harness/cluster.js';
import { BOUNDED_SCALE, scaleState } from '../harness/narrowing-scale.js';
import { defaultWebhooks } from '../harness/table-context.js';
import {
  CONFIGURATION_NAME,
  deleteConfigurations,
  startOperator,
  waitForPublishedSecret,
} from '../harness/operator.js';
import { inform, percentile, record } from './report.js';

const ROUNDS = 30;
const LATENCY_PAIRS = 1000;

export function benchNarrowingSize(): void {
  const webhooks = defaultWebhooks();
  const state = scaleState(BOUNDED_SCALE);
  const started = performance.now();
  const entries = narrowWebhooks(webhooks, state);
  const narrowMs = performance.now() - started;
  const endpoint = {
    mode: 'service',
    namespace: 'admission-system',
    name: 'admission-operator',
    port: 443,
  } as const;
  const ca = '-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\n';
  const bytes = (configuration: unknown): number => Buffer.byteLength(JSON.stringify(configuration));
  const scale = `${BOUNDED_SCALE.namespaces} namespaces with quotas, ${BOUNDED_SCALE.profiles} profiles`;
  // etcd keeps an object of up to 1.5 MiB; a quarter of it leaves room for everything else.
  record(
    `narrowing: MutatingWebhookConfiguration at ${scale}`,
    bytes(desiredMutating(entries, endpoint, ca)) / 1024,
    'KiB',
    384,
  );
  record(
    `narrowing: ValidatingWebhookConfiguration at ${scale}`,
    bytes(desiredValidating(entries, endpoint, ca)) / 1024,
    'KiB',
    384,
  );
  inform(
    'narrowing: the same, unnarrowed (reference)',
    bytes(desiredValidating(webhooks, endpoint, ca)) / 1024,
    'KiB',
  );
  inform(
    `narrowing: entries of /mutate-pod, /validate-pod`,
    entries.filter((e) => e.path.endsWith('-pod')).length,
    'count',
  );
  record(`narrowing: time to narrow that state`, narrowMs, 'ms', 200);
}

/** Resolves when a watch on the profiles delivers `name`, with the time it did. */
async function watchedAt(kc: KubeConfig, name: string, deadlineMs = 10_000): Promise<() => Promise<number>> {
  let seen: number | undefined;
  const request = await new Watch(kc).watch(
    '/apis/config.koordinator.sh/v1alpha1/clustercolocationprofiles',
    { fieldSelector: `metadata.name=${name}` },
    (type) => {
      if (type === 'ADDED') seen ??= performance.now();
    },
    () => undefined,
  );
  return async () => {
    await waitFor('the watch to deliver the profile', () => Promise.resolve(seen), {
      timeoutMs: deadlineMs,
      intervalMs: 2,
    });
    request.abort();
    return seen as number;
  };
}

export async function benchNarrowingCluster(): Promise<void> {
  await installCrds('clustercolocationprofiles.config.koordinator.sh');
  const kc = await clusterKubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const admission = kc.makeApiClient(AdmissionregistrationV1Api);
  const suffix = Date.now().toString(36);
  const operatorNamespace = `bench-narrow-${suffix}`;
  const workload = `bench-narrow-pods-${suffix}`;
  const unseen = `bench-narrow-unseen-${suffix}`;
  const afters: (() => Promise<unknown>)[] = [];
  const t = { after: (fn: () => Promise<unknown>) => afters.push(fn) } as unknown as TestContext;
  for (const name of [operatorNamespace, workload, unseen])
    await core.createNamespace({ body: { metadata: { name } } });
  const profiles: string[] = [];
  try {
    await deleteConfigurations();
    await startOperator(t, { namespace: operatorNamespace, args: [`--excluded-namespaces=${unseen}`] });
    await waitForPublishedSecret(operatorNamespace);
    await waitFor('the default ServiceAccounts', async () => {
      await core.readNamespacedServiceAccount({ namespace: workload, name: 'default' });
      return core.readNamespacedServiceAccount({ namespace: unseen, name: 'default' });
    });
    const informer: number[] = [];
    const written: number[] = [];
    const sent: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Changes one at a time: the last write is over FOLLOW_INTERVAL_MS ago, as for a change on its
      // own (changes in a burst wait for it, which is the coalescing).
      await new Promise((resolve) => setTimeout(resolve, FOLLOW_INTERVAL_MS + 200));
      const name = `bench-narrow-${suffix}-${round}`;
      const appLabel = `bench-${suffix}-${round}`;
      const watched = await watchedAt(kc, name);
      const configurationHolds = async (): Promise<boolean> => {
        const configuration = await admission.readMutatingWebhookConfiguration({ name: CONFIGURATION_NAME });
        return JSON.stringify(configuration.webhooks).includes(appLabel);
      };
      const created = performance.now();
      await custom.createClusterCustomObject({
        group: 'config.koordinator.sh',
        version: 'v1alpha1',
        plural: 'clustercolocationprofiles',
        body: {
          apiVersion: 'config.koordinator.sh/v1alpha1',
          kind: 'ClusterColocationProfile',
          metadata: { name },
          spec: { selector: { matchLabels: { app: appLabel } }, labels: { colocated: 'true' } },
        },
      });
      profiles.push(name);
      informer.push((await watched()) - created);
      await waitFor(
        'the configuration to hold the profile',
        async () => (await configurationHolds()) || undefined,
        {
          timeoutMs: 10_000,
          intervalMs: 5,
        },
      );
      written.push(performance.now() - created);
      // The first dry-run create the API server sends to us and that comes back with the profile applied.
      await waitFor(
        'a pod of the profile to be sent',
        async () => {
          const pod = await core.createNamespacedPod({
            namespace: workload,
            dryRun: 'All',
            body: {
              metadata: { generateName: 'p-', labels: { app: appLabel } },
              spec: { containers: [{ name: 'main', image: 'registry.invalid/app:1' }] },
            },
          });
          return pod.metadata?.labels?.colocated === 'true' || undefined;
        },
        { timeoutMs: 10_000, intervalMs: 5 },
      );
      sent.push(performance.now() - created);
    }
    const line = (label: string, values: number[], target?: number): void => {
      const sorted = [...values].sort((a, b) => a - b);
      for (const p of [50, 99]) {
        if (target === undefined) inform(`${label}, p${p}`, percentile(sorted, p), 'ms');
        else record(`${label}, p${p}`, percentile(sorted, p), 'ms', target);
      }
    };
    line('narrowing: a watch delivers a new profile (Koordinator’s informer lag)', informer);
    line('narrowing: profile created to configuration holding it', written, 1000);
    line('narrowing: profile created to a pod it selects sent to us', sent, 1500);
    const reference = [...informer].sort((a, b) => a - b);
    const window = [...written].sort((a, b) => a - b);
    inform(
      'narrowing: configuration holding it / informer lag, p50',
      percentile(window, 50) / percentile(reference, 50),
      '×',
    );

    // An ungoverned pod against a pod of a namespace no webhook sees, interleaved.
    const plain: number[] = [];
    const excluded: number[] = [];
    for (let i = 0; i < LATENCY_PAIRS; i++) {
      // Each first in turn, so neither gains from following the other.
      const pair = [
        [workload, plain],
        [unseen, excluded],
      ] as const;
      for (const [namespace, into] of i % 2 === 0 ? pair : [...pair].reverse()) {
        const started = performance.now();
        await core.createNamespacedPod({
          namespace,
          dryRun: 'All',
          body: {
            metadata: { generateName: 'p-' },
            spec: { containers: [{ name: 'main', image: 'registry.invalid/app:1' }] },
          },
        });
        into.push(performance.now() - started);
      }
    }
    const p = (values: number[], q: number): number =>
      percentile(
        [...values].sort((a, b) => a - b),
        q,
      );
    inform('narrowing: create of a pod no rule governs, p50', p(plain, 50), 'ms');
    inform('narrowing: create in a namespace no webhook sees (reference), p50', p(excluded, 50), 'ms');
    record('narrowing: ungoverned / unseen create latency, p50', p(plain, 50) / p(excluded, 50), '×', 1.05);
    record('narrowing: ungoverned / unseen create latency, p99', p(plain, 99) / p(excluded, 99), '×', 1.25);
  } finally {
    for (const fn of afters.reverse()) await fn();
    await deleteConfigurations();
    for (const name of profiles) {
      await custom
        .deleteClusterCustomObject({
          group: 'config.koordinator.sh',
          version: 'v1alpha1',
          plural: 'clustercolocationprofiles',
          name,
        })
        .catch(() => undefined);
    }
    for (const name of [operatorNamespace, workload, unseen])
      await core.deleteNamespace({ name }).catch(() => undefined);
  }
}
