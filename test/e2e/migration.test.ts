/**
 * The migration from Koordinator's and Kthena's webhooks to ours, live on the local node, step by
 * step as docs/beside-upstream.md says: koord-manager v1.8.0 and Kthena v1.0.0's controller-manager
 * run from images of their Go modules' binaries under their own official charts (their webhook
 * configurations, Services and certificates), ours beside them.
 *
 * Every step creates a workload of 410 pods that a 50 % ClusterColocationProfile with a label
 * suffix selects, into an ElasticQuota with room for exactly 400 of them (the last 10 one at a
 * time, once the 400 are in), and checks: no label suffixed twice, the share given the profile
 * within 50 ± 10 %, the 400 admitted with no refusal or warning and the 10 refused (warned of by ours
 * where ours warns) for the quota by whoever decides (quota counted once, by each side that
 * counts); Kthena's example ModelBooster admitted and a broken one refused with Kthena's message by
 * whoever decides; and both upstream managers still running. Each switch runs under a stream of
 * creates that must see no label suffixed twice and no failed call.
 *
 * Step 0 shows why the docs put our mutating webhooks in `dryrun` while theirs mutate: in plain
 * `warn` ours patch too, and the profile's suffix is appended twice.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { CoordinationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { ensureHelm } from '../../scripts/cluster/binaries.js';
import { kubeconfigPath } from '../../scripts/cluster/layout.js';
import {
  buildAndLoadImage,
  helmUpgrade,
  releaseName,
  releaseNamespace,
} from '../../scripts/image/deploy-local.js';
import { applyYaml, clusterKubeConfig, kubectl, uniqueSuffix, waitFor } from '../harness/cluster.js';
import { KTHENA_CRDS, kthenaModuleDir } from '../harness/kthena-module.js';
import {
  createWorkload,
  MIGRATION_NAMESPACE_LABEL,
  profileManifest,
  quotaManifest,
  summarize,
  WarningClient,
  workloadPod,
  type CreateOutcome,
  type WorkloadSummary,
} from './migration-workload.js';
import {
  kthenaHelmArguments,
  kthenaNamespace,
  kthenaRelease,
  KTHENA_POD_SELECTOR,
  loadKthenaControllerManagerImage,
} from './upstream/kthena.js';
import {
  KOORDINATOR_GATES_MUTATING_OFF,
  KOORDINATOR_GATES_OFF,
  KOORDINATOR_GATES_ON,
  koordinatorHelmArguments,
  koordinatorNamespace,
  koordinatorRelease,
  loadKoordManagerImage,
} from './upstream/koordinator.js';

const execFileAsync = promisify(execFile);

const log = (line: string): void => {
  console.error(`[migration] ${line}`);
};

/**
 * Pods a step's quota has room for, and the ones past it, created one at a time once those are in.
 * 400 rather than 200: a profile of 50 % applies with probability 0.51 (a roll in 0..99 at most
 * 50), so the share of 200 leaves 50 ± 10 % about once in 160 steps, the share of 400 about once
 * in 6,000.
 */
const FIT = 400;
const PAST = 10;
const CONCURRENCY = 10;
/** The share of a step's pods the profile may reach (50 ± 10 %). */
const SHARE_LOW = 0.4;
const SHARE_HIGH = 0.6;

/** Our webhooks whose upstream twin mutates: in `dryrun` while the twin does (docs/beside-upstream.md). */
const KOORDINATOR_TWIN_MUTATORS = ['mutate-pod', 'mutate-elasticquota', 'mutate-reservation'];
const KTHENA_TWIN_MUTATORS = ['mutate-modelbooster', 'mutate-autoscalingpolicy'];
const dryrun = (names: readonly string[]): string => names.map((name) => `,${name}=dryrun`).join('');
/** The docs' steps: 1, ours in warn with every twin mutator in dryrun; 3, Koordinator's twins on; 4, ours in deny, then Kthena's twins on. */
const ENFORCEMENT_MIGRATING = `*=warn${dryrun([...KOORDINATOR_TWIN_MUTATORS, ...KTHENA_TWIN_MUTATORS])}`;
const ENFORCEMENT_MUTATING = `*=warn${dryrun(KTHENA_TWIN_MUTATORS)}`;
const ENFORCEMENT_DENYING = `*=deny${dryrun(KTHENA_TWIN_MUTATORS)}`;
const ENFORCEMENT_DENY = '*=deny';
/** The webhooks whose setting `enforce` waits for on every replica. */
const WATCHED_WEBHOOKS = [
  'mutate-pod',
  'validate-pod',
  'mutate-elasticquota',
  'mutate-modelbooster',
  'validate-modelbooster',
];

/** Kthena's refusal of a vLLM ModelBooster with two workers, word for word on both sides. */
const KTHENA_REFUSAL =
  /spec\.backend\.workers: Invalid value: 2: If backend type is 'vLLM', there must be exactly one worker/;
const THEIR_VALIDATE_MODELBOOSTER = 'validate-modelbooster.volcano.sh';
const OUR_VALIDATE_MODELBOOSTER = 'validate-modelbooster.admission-operator.io';

/** Which webhook refused a create, from the API server's message. */
function refuser(message: string): string {
  return /admission webhook "([^"]+)"/.exec(message)?.[1] ?? message.slice(0, 120);
}

const OUR_VALIDATE_POD = 'validate-pod.admission-operator.io';
const THEIR_VALIDATE_POD = 'vpod.koordinator.sh';
const EXCEEDED = /exceeded quota/;
/** koord-manager refusing a pod because its write of the quota's ledger annotation conflicted. */
const LEDGER_RACE = /the object has been modified/;
/** The rate of the stream of creates while webhooks switch, as the other end-to-end steps create. */
const STREAM_PER_SECOND = 20;

async function helm(args: string[]): Promise<string> {
  const { stdout } = await execFileAsync(await ensureHelm(), [...args, `--kubeconfig=${kubeconfigPath}`], {
    maxBuffer: 64 * 2 ** 20,
  });
  return stdout;
}

/** koord-manager's pod: Ready, its restarts, and the leader Lease it renews. */
async function koordManager(): Promise<{ name: string; ready: boolean; restarts: number }> {
  const core = (await clusterKubeConfig()).makeApiClient(CoreV1Api);
  const pods = (
    await core.listNamespacedPod({
      namespace: koordinatorNamespace,
      labelSelector: 'koord-app=koord-manager',
    })
  ).items.filter((pod) => !pod.metadata?.deletionTimestamp);
  assert.equal(pods.length, 1, `one koord-manager pod (${pods.map((pod) => pod.metadata?.name).join(', ')})`);
  const pod = pods[0];
  const status = pod?.status?.containerStatuses?.[0];
  return {
    name: pod?.metadata?.name ?? '',
    ready: status?.ready === true,
    restarts: status?.restartCount ?? 0,
  };
}

/** koord-manager's controllers run: its pod Ready without a restart, and its leader Lease held by it and renewed. */
async function assertKoordManagerRunning(): Promise<void> {
  const manager = await koordManager();
  assert.ok(manager.ready, `koord-manager ${manager.name} is Ready`);
  assert.equal(manager.restarts, 0, `koord-manager ${manager.name} never restarted`);
  const leases = (await clusterKubeConfig()).makeApiClient(CoordinationV1Api);
  await waitFor(
    `koord-manager ${manager.name} to hold and renew its leader Lease`,
    async () => {
      const lease = await leases.readNamespacedLease({
        namespace: koordinatorNamespace,
        name: 'koordinator-manager',
      });
      const renewed = lease.spec?.renewTime ? new Date(lease.spec.renewTime).getTime() : 0;
      return (
        (lease.spec?.holderIdentity ?? '').startsWith(`${manager.name}_`) && Date.now() - renewed < 15_000
      );
    },
    { timeoutMs: 60_000, intervalMs: 1_000 },
  );
}

/** The paths of the webhooks in koord-manager's two configurations (its chart's names). */
async function theirPaths(): Promise<string[]> {
  const { stdout } = await kubectl([
    'get',
    'mutatingwebhookconfiguration/koordinator-mutating-webhook-configuration',
    'validatingwebhookconfiguration/koordinator-validating-webhook-configuration',
    '--ignore-not-found',
    '-o',
    'jsonpath={range .items[*]}{range .webhooks[*]}{.clientConfig.service.path}{" "}{end}{end}',
  ]);
  return stdout.split(/\s+/).filter(Boolean).sort();
}

/** Installs or upgrades Koordinator's chart with `gates`, and waits for koord-manager to serve. */
async function koordinator(gates: string, extra: string[] = []): Promise<void> {
  const started = Date.now();
  await helm([...koordinatorHelmArguments(gates), ...extra, '--wait', '--timeout', '5m']);
  await waitFor('koord-manager Ready', async () => (await koordManager()).ready, {
    timeoutMs: 120_000,
    intervalMs: 500,
  });
  log(
    `Koordinator's chart with featureGates=${gates}: koord-manager Ready in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
}

/** Kthena's controller-manager: Ready, and its restarts. */
async function kthenaControllerManager(): Promise<{ name: string; ready: boolean; restarts: number }> {
  const core = (await clusterKubeConfig()).makeApiClient(CoreV1Api);
  const pods = (
    await core.listNamespacedPod({ namespace: kthenaNamespace, labelSelector: KTHENA_POD_SELECTOR })
  ).items.filter((pod) => !pod.metadata?.deletionTimestamp);
  assert.equal(
    pods.length,
    1,
    `one Kthena controller-manager pod (${pods.map((pod) => pod.metadata?.name).join(', ')})`,
  );
  const status = pods[0]?.status?.containerStatuses?.[0];
  return {
    name: pods[0]?.metadata?.name ?? '',
    ready: status?.ready === true,
    restarts: status?.restartCount ?? 0,
  };
}

/**
 * Installs or upgrades Kthena's chart with its webhooks on or off and waits for its
 * controller-manager to be Ready (a first install may restart it once: test/e2e/upstream/kthena.ts).
 */
async function kthena(webhooks: boolean): Promise<void> {
  const started = Date.now();
  // No --wait: Helm would wait for the router's LoadBalancer Service to get an address, which no
  // local cluster gives it; the controller-manager's readiness is what matters, waited for below.
  await helm(await kthenaHelmArguments(webhooks));
  await waitFor('Kthena’s controller-manager Ready', async () => (await kthenaControllerManager()).ready, {
    timeoutMs: 120_000,
    intervalMs: 500,
  });
  log(
    `Kthena's chart with its webhooks ${webhooks ? 'on' : 'off'}: controller-manager Ready in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
}

/** Kthena's example ModelBooster (one vLLM server), and the same split into a prefill and a decode worker. */
async function modelBoosters(): Promise<{ valid: Record<string, unknown>; broken: Record<string, unknown> }> {
  const file = join(await kthenaModuleDir(), 'examples', 'model-booster', 'Qwen2.5-0.5B-Instruct.yaml');
  const valid = parse(await readFile(file, 'utf8')) as {
    spec: { backend: { workers: Record<string, unknown>[] } };
  };
  const broken = structuredClone(valid);
  const [worker] = broken.spec.backend.workers;
  broken.spec.backend.workers = [
    { ...worker, type: 'prefill' },
    { ...worker, type: 'decode' },
  ];
  return { valid, broken };
}

/** Our chart's pods, Ready or not. */
async function ourPods(): Promise<string[]> {
  const core = (await clusterKubeConfig()).makeApiClient(CoreV1Api);
  const list = await core.listNamespacedPod({
    namespace: releaseNamespace,
    labelSelector: `app.kubernetes.io/name=admission-operator,app.kubernetes.io/instance=${releaseName}`,
  });
  return list.items.filter((pod) => !pod.metadata?.deletionTimestamp).map((pod) => pod.metadata?.name ?? '');
}

/** Our operator's ConfigMap, whose `enforcement` key `enforce` writes: the chart's values apply again. */
async function deleteEnforcementConfigMap(): Promise<void> {
  await kubectl([
    'delete',
    'configmap',
    'admission-operator',
    '-n',
    releaseNamespace,
    '--ignore-not-found',
  ]).catch(() => undefined);
}

/** One of our replica's metrics, through the API server's pod proxy. */
async function metricsOf(pod: string): Promise<string> {
  return (
    await kubectl(['get', '--raw', `/api/v1/namespaces/${releaseNamespace}/pods/${pod}:8080/proxy/metrics`])
  ).stdout;
}

/**
 * Sets our enforcement at run time (the ConfigMap's `enforcement` key, as the README does) and
 * waits until every replica has it in force (its admission_webhook_enforcement gauge).
 */
async function enforce(setting: string): Promise<void> {
  await kubectl(
    ['apply', '-f', '-'],
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'admission-operator', namespace: releaseNamespace },
      data: { enforcement: setting },
    }),
  );
  const expected = (name: string): string => {
    for (const part of setting.split(',')) {
      const [webhook, action] = part.split('=');
      if (webhook === name) return action ?? '';
    }
    return (
      setting
        .split(',')
        .find((part) => part.startsWith('*='))
        ?.slice(2) ?? 'deny'
    );
  };
  await waitFor(
    `every replica to enforce ${setting}`,
    async () => {
      for (const pod of await ourPods()) {
        const metrics = await metricsOf(pod);
        for (const webhook of WATCHED_WEBHOOKS) {
          const line = `admission_webhook_enforcement{webhook="${webhook}",action="${expected(webhook)}"} 1`;
          if (!metrics.includes(line)) return false;
        }
      }
      return true;
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  );
  log(`our enforcement: ${setting}`);
}

interface Step {
  /** Who refuses a pod past the quota: their webhook, ours, or nobody (ours only warns). */
  refusedBy: 'theirs' | 'ours' | 'nobody';
  /** Whether ours warns of the quota (we are in warn for validate-pod). */
  oursWarn: boolean;
}

describe('migrating from koord-manager’s webhooks to ours, live on the node', () => {
  let client: WarningClient;
  const suffix = uniqueSuffix();
  const profile = `e2e-migration-${suffix}`;
  const namespaces: string[] = [];
  /** Where the ModelBoosters are tried (by dry run). */
  const kthenaWork = `migration-kthena-${suffix}`;
  /** The controller-manager's restarts once installed (a first install may restart it once). */
  let kthenaRestarts = 0;
  /**
   * Kthena's CRDs this test's install of its chart created (its `crds/` folder skips those that
   * exist), deleted at the end so that the cluster is left as found: a later install of ours with
   * `crds.enabled` cannot adopt CRDs no release owns.
   */
  let kthenaCrdsCreated: string[] = [];

  /**
   * A namespace the profile selects, with an ElasticQuota of room for `fit` pods named as the
   * namespace (Koordinator's quota names are one tree, unique across the cluster).
   */
  async function workNamespace(name: string, fit: number): Promise<string> {
    const namespace = `migration-${name}-${suffix}`;
    namespaces.push(namespace);
    await kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: namespace, labels: { [MIGRATION_NAMESPACE_LABEL]: 'true' } },
      }),
    );
    await applyYaml(quotaManifest(namespace, namespace, fit));
    return namespace;
  }

  /**
   * Waits until whoever decides knows the quota: a dry-run pod far past it is refused for
   * exceeding it (by their webhook or ours, as the step has it) and, where ours warns, warned of
   * it, several times in a row (the API server's connections reach every replica).
   */
  async function quotaKnown(namespace: string, step: Step): Promise<void> {
    let inARow = 0;
    await waitFor(
      `the deciding webhooks to know the quota of ${namespace}`,
      async () => {
        const outcome = await client.create(
          `/api/v1/namespaces/${namespace}/pods`,
          workloadPod(namespace, '100000'),
          true,
        );
        const refused =
          step.refusedBy === 'nobody' ? outcome.refusal === undefined : EXCEEDED.test(outcome.refusal ?? '');
        const warned = !step.oursWarn || outcome.warnings.some((warning) => EXCEEDED.test(warning));
        inARow = refused && warned ? inARow + 1 : 0;
        return inARow >= 8;
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
  }

  /** The step's workload: FIT into room for FIT, then PAST past it one at a time. */
  async function workload(
    name: string,
    step: Step,
  ): Promise<{ fit: CreateOutcome[]; past: CreateOutcome[]; summary: WorkloadSummary }> {
    const namespace = await workNamespace(name, FIT);
    await quotaKnown(namespace, step);
    const started = Date.now();
    const fit = await createWorkload(client, namespace, namespace, FIT, CONCURRENCY);
    const past = await createWorkload(client, namespace, namespace, PAST, 1);
    const summary = summarize(fit);
    log(
      `${name}: ${FIT + PAST} creates in ${((Date.now() - started) / 1000).toFixed(1)} s; of the ${FIT}: ${JSON.stringify(summary)}; past the quota: ${past
        .map((outcome) => (outcome.refusal ? `refused by ${refuser(outcome.refusal)}` : 'admitted'))
        .join(', ')}`,
    );
    return { fit, past, summary };
  }

  /**
   * Kthena's side of a step, by server-side dry run (Kthena's webhooks declare no side effects, and
   * nothing is left for its controllers to act on): its example ModelBooster is admitted with no
   * warning; the broken one is refused with Kthena's message by `refusedBy`'s webhook, and ours
   * warns of it with the same message where ours warns.
   */
  async function assertKthena(name: string, refusedBy: 'theirs' | 'ours', oursWarn: boolean): Promise<void> {
    const path = `/apis/workload.serving.volcano.sh/v1alpha1/namespaces/${kthenaWork}/modelboosters`;
    const { valid, broken } = await modelBoosters();
    const admitted = await client.create(path, valid, true);
    assert.equal(admitted.refusal, undefined, `${name}: Kthena's example ModelBooster is admitted`);
    assert.deepEqual(admitted.warnings, [], `${name}: and nobody warns of it`);
    const refused = await client.create(path, broken, true);
    assert.match(
      refused.refusal ?? '',
      KTHENA_REFUSAL,
      `${name}: the broken ModelBooster is refused with Kthena's message`,
    );
    assert.equal(
      refuser(refused.refusal ?? ''),
      refusedBy === 'theirs' ? THEIR_VALIDATE_MODELBOOSTER : OUR_VALIDATE_MODELBOOSTER,
      `${name}: by ${refusedBy === 'theirs' ? 'Kthena' : 'ours'}`,
    );
    if (oursWarn)
      assert.ok(
        refused.warnings.some((warning) => KTHENA_REFUSAL.test(warning)),
        `${name}: ours warns it would refuse it (${refused.warnings.join(' | ')})`,
      );
    const manager = await kthenaControllerManager();
    assert.ok(manager.ready, `${name}: Kthena's controller-manager ${manager.name} is Ready`);
    assert.equal(manager.restarts, kthenaRestarts, `${name}: Kthena's controller-manager did not restart`);
  }

  /** What every step holds to, beside its own checks. */
  function assertStep(name: string, result: Awaited<ReturnType<typeof workload>>, step: Step): void {
    const { fit, past, summary } = result;
    // Quota counted once: the pods that fit are all admitted, and nobody warns of them.
    assert.equal(
      summary.refused,
      0,
      `${name}: a pod that fits was refused: ${fit.find((o) => o.refusal)?.refusal}`,
    );
    const warnedFit = fit.filter((outcome) => outcome.warnings.some((warning) => EXCEEDED.test(warning)));
    assert.equal(
      warnedFit.length,
      0,
      `${name}: a pod that fits was warned of the quota: ${warnedFit[0]?.warnings.join(' | ')}`,
    );
    // Nothing suffixed twice; the profile's share.
    assert.equal(summary.suffixedTwice, 0, `${name}: pool labels suffixed twice`);
    assert.equal(summary.otherPool, 0, `${name}: pool labels changed otherwise`);
    assert.equal(
      summary.suffixedOnce,
      summary.profiled,
      `${name}: every profiled pod suffixed once, no other`,
    );
    const share = summary.profiled / summary.created;
    assert.ok(
      share >= SHARE_LOW && share <= SHARE_HIGH,
      `${name}: the profile's share ${(share * 100).toFixed(1)} % is within 50 ± 10 %`,
    );
    // Past the quota: refused by whoever decides, and warned of by ours where ours warns.
    for (const [index, outcome] of past.entries()) {
      const what = `${name}: pod ${FIT + index + 1} past the quota`;
      if (step.refusedBy === 'nobody')
        assert.equal(outcome.refusal, undefined, `${what} is admitted (nobody enforces)`);
      else {
        assert.match(outcome.refusal ?? '', EXCEEDED, `${what} is refused for the quota`);
        const by = refuser(outcome.refusal ?? '');
        if (step.refusedBy === 'theirs')
          assert.equal(by, THEIR_VALIDATE_POD, `${what} is refused by koord-manager`);
        else assert.equal(by, OUR_VALIDATE_POD, `${what} is refused by ours`);
      }
      if (step.oursWarn)
        assert.ok(
          outcome.warnings.some((warning) => EXCEEDED.test(warning)),
          `${what}: ours warns it would refuse it (${outcome.warnings.join(' | ')})`,
        );
    }
  }

  /**
   * Runs `change` under a stream of creates at 20/s (a profiled namespace with ample quota, at
   * most 10 in flight): no call may fail, no pool label may be suffixed twice while webhooks
   * switch, and nothing may be refused but by koord-manager's own quota ledger losing a write
   * race (`the object has been modified`), which its rollouts cause with or without us: two of its
   * pods, old and new, each update the ElasticQuota's annotation from their own view.
   */
  async function underLoad(name: string, change: () => Promise<void>): Promise<void> {
    const namespace = await workNamespace(`switch-${name}`, 100_000);
    await waitFor('the stream namespace’s quota to be known', async () => {
      const outcome = await client.create(
        `/api/v1/namespaces/${namespace}/pods`,
        workloadPod(namespace),
        true,
      );
      return outcome.refusal === undefined;
    });
    let stop = false;
    const outcomes: CreateOutcome[] = [];
    const inFlight = new Set<Promise<void>>();
    const stream = (async () => {
      while (!stop) {
        if (inFlight.size < CONCURRENCY) {
          const call = client
            .create(`/api/v1/namespaces/${namespace}/pods`, workloadPod(namespace))
            .then((outcome) => {
              outcomes.push(outcome);
            })
            .finally(() => inFlight.delete(call));
          inFlight.add(call);
        }
        await sleep(1_000 / STREAM_PER_SECOND);
      }
      await Promise.all(inFlight);
    })();
    try {
      await change();
    } finally {
      stop = true;
      await stream;
    }
    const summary = summarize(outcomes);
    const raced = outcomes.filter(
      ({ refusal }) =>
        refusal !== undefined && refuser(refusal) === THEIR_VALIDATE_POD && LEDGER_RACE.test(refusal),
    ).length;
    log(
      `switch ${name}: ${outcomes.length} creates under it: ${JSON.stringify(summary)}; refused by koord-manager's ledger race: ${raced}`,
    );
    const other = outcomes.find(({ refusal }) => refusal !== undefined && !LEDGER_RACE.test(refusal));
    assert.equal(other?.refusal, undefined, `switch ${name}: a create was refused`);
    assert.equal(summary.suffixedTwice, 0, `switch ${name}: pool labels suffixed twice while switching`);
    assert.equal(summary.otherPool, 0, `switch ${name}: pool labels changed otherwise`);
  }

  before(async () => {
    const tag = await buildAndLoadImage(log);
    await loadKoordManagerImage(log);
    client = await WarningClient.of(await clusterKubeConfig());
    // Koordinator first, as its users have it; --take-ownership takes its CRDs over from an
    // earlier release of ours that created them (docs/beside-upstream.md, the handover).
    await koordinator(KOORDINATOR_GATES_ON, ['--take-ownership']);
    assert.deepEqual(
      await theirPaths(),
      [
        '/mutate-pod',
        '/mutate-pod',
        '/mutate-scheduling-sigs-k8s-io-v1alpha1-elasticquota',
        '/validate-pod',
        '/validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota',
      ].sort(),
      'koord-manager serves its default webhooks',
    );
    await applyYaml(profileManifest(profile));
    // Kthena with its webhooks on, as its users have it.
    await loadKthenaControllerManagerImage(log);
    const present = new Set((await kubectl(['get', 'crd', '-o', 'name'])).stdout.split(/\s+/));
    kthenaCrdsCreated = KTHENA_CRDS.filter(
      (crd) => !present.has(`customresourcedefinition.apiextensions.k8s.io/${crd}`),
    );
    // Its controller-manager becomes Ready while ours rolls out: the two installs share no object.
    const kthenaReady = kthena(true);
    // Awaited below; until then a failure must not count as unhandled.
    kthenaReady.catch(() => undefined);
    namespaces.push(kthenaWork);
    await kubectl(['create', 'namespace', kthenaWork]);
    await deleteEnforcementConfigMap();
    // Ours beside it in warn, everything (step 0's setting), CRDs left to Koordinator's chart.
    await helmUpgrade(tag, [
      '--set',
      'replicaCount=2',
      '--set',
      'crds.enabled=false',
      '--set-json',
      'webhooks.enforcement={"*":"warn"}',
    ]);
    await kthenaReady;
    kthenaRestarts = (await kthenaControllerManager()).restarts;
  });

  after(async () => {
    client?.close();
    // The three releases share no object: each is taken down on its own, at once.
    const ours = async (): Promise<void> => {
      await helm(['uninstall', releaseName, '-n', releaseNamespace, '--wait']).catch((error: unknown) => {
        log(`uninstall ours: ${String(error)}`);
      });
      for (const namespace of namespaces)
        await kubectl(['delete', 'namespace', namespace, '--wait=false', '--ignore-not-found']).catch(
          () => undefined,
        );
      await kubectl(['delete', 'clustercolocationprofile', profile, '--ignore-not-found']).catch(
        () => undefined,
      );
      await deleteEnforcementConfigMap();
    };
    const kthenas = async (): Promise<void> => {
      await helm(['uninstall', kthenaRelease, '-n', kthenaNamespace, '--wait']).catch((error: unknown) => {
        log(`uninstall Kthena: ${String(error)}`);
      });
      await kubectl(['delete', 'namespace', kthenaNamespace, '--wait=false', '--ignore-not-found']).catch(
        () => undefined,
      );
      if (kthenaCrdsCreated.length > 0)
        await kubectl(['delete', 'crd', ...kthenaCrdsCreated, '--ignore-not-found']).catch(
          (error: unknown) => {
            log(`delete Kthena's CRDs: ${String(error)}`);
          },
        );
    };
    const koordinators = async (): Promise<void> => {
      await helm(['uninstall', koordinatorRelease, '-n', 'default', '--wait']).catch((error: unknown) => {
        log(`uninstall Koordinator: ${String(error)}`);
      });
    };
    await Promise.all([ours(), kthenas(), koordinators()]);
  });

  it('step 0 (what the docs warn against): ours in plain warn beside koord-manager mutate too, and the suffix is appended twice', async () => {
    await enforce('*=warn');
    const { summary } = await workload('step0', { refusedBy: 'theirs', oursWarn: true });
    assert.ok(summary.suffixedTwice > 0, `some pool labels suffixed twice (${JSON.stringify(summary)})`);
    assert.ok(
      summary.profiled / summary.created > SHARE_HIGH,
      'the profile reaches more than 60 % (two rolls of 50 %)',
    );
  });

  it('step 1: ours in warn with our twin mutators in dryrun, koord-manager and Kthena deciding: one suffix, 50 %, their refusals ours too', async () => {
    await enforce(ENFORCEMENT_MIGRATING);
    assertStep('step 1', await workload('step1', { refusedBy: 'theirs', oursWarn: true }), {
      refusedBy: 'theirs',
      oursWarn: true,
    });
    await assertKoordManagerRunning();
    await assertKthena('step 1', 'theirs', true);
  });

  it('step 2: koord-manager’s mutating webhooks off by its featureGates, then ours mutate: the profile from ours alone, quota still theirs', async () => {
    await underLoad('mutators', async () => {
      await koordinator(KOORDINATOR_GATES_MUTATING_OFF);
      assert.deepEqual(
        await theirPaths(),
        ['/validate-pod', '/validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota'].sort(),
      );
      await enforce(ENFORCEMENT_MUTATING);
    });
    const step: Step = { refusedBy: 'theirs', oursWarn: true };
    assertStep('step 2', await workload('step2', step), step);
    await assertKoordManagerRunning();
    await assertKthena('step 2', 'theirs', true);
  });

  it('step 3: ours in deny, then koord-manager’s validating webhooks and Kthena’s webhooks off, then our Kthena twins on: ours decide alone, their controllers still run', async () => {
    await underLoad('validators', async () => {
      await enforce(ENFORCEMENT_DENYING);
      await koordinator(KOORDINATOR_GATES_OFF);
      assert.deepEqual(await theirPaths(), [], 'koord-manager serves no webhook');
      await kthena(false);
      await enforce(ENFORCEMENT_DENY);
    });
    const step: Step = { refusedBy: 'ours', oursWarn: false };
    assertStep('step 3', await workload('step3', step), step);
    await assertKoordManagerRunning();
    await assertKthena('step 3', 'ours', false);
  });
});
