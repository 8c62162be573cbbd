/**
 * The Helm chart on the real API server: install, run the operator exactly as the chart's
 * Deployment would (its args, its ServiceAccount's token: no kubelet here), check RBAC is enough
 * and no broader than needed, upgrade, uninstall.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import { ApiextensionsV1Api, AppsV1Api, CoreV1Api, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { ensureHelm } from '../../scripts/cluster/binaries.js';
import { kubeconfigPath, repoRoot } from '../../scripts/cluster/layout.js';
import {
  clusterKubeConfig,
  installCrds,
  kubectl,
  podReadyNamespace,
  statusCode,
  testNamespace,
  uniqueSuffix,
  waitFor,
} from '../harness/cluster.js';
import { READ_KINDS, READ_VERBS } from '../../scripts/chart/cluster-role-reads.js';
import { ENFORCEMENT_ACTIONS } from '../../webhook/enforcement/enforcement.js';
import type { KindDefinition } from '../../webhook/kinds.js';
import { FEATURE_GATE_DEFAULTS } from '../../webhook/feature-gates.js';
import { webhookShortNames } from '../../webhook/table.js';
import {
  cleanConfigurationsAfter,
  deleteConfigurations,
  publishedBundles,
  readSecret,
  secretValue,
  startOperator,
  waitForPublishedSecret,
  type OperatorProcess,
} from '../harness/operator.js';
import { temporaryDirectory } from '../harness/temp-dir.js';

const execFileAsync = promisify(execFile);
const chart = join(repoRoot, 'charts', 'admission-operator');

async function helm(args: string[]): Promise<{ stdout: string; stderr: string }> {
  return execFileAsync(await ensureHelm(), [...args, `--kubeconfig=${kubeconfigPath}`]);
}

/** A kubeconfig that authenticates as the chart's ServiceAccount, with a token from the TokenRequest API. */
async function serviceAccountKubeconfig(namespace: string, account: string): Promise<string> {
  const { stdout: token } = await kubectl(['create', 'token', account, '-n', namespace, '--duration=1h']);
  const admin = JSON.parse(await readFile(kubeconfigPath, 'utf8')) as {
    clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
  };
  const cluster = admin.clusters[0]!.cluster;
  const path = join(await temporaryDirectory('sa-kubeconfig-'), 'kubeconfig');
  await writeFile(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'local', cluster }],
      users: [{ name: account, user: { token: token.trim() } }],
      contexts: [{ name: 'sa', context: { cluster: 'local', user: account, namespace } }],
      'current-context': 'sa',
    }),
    { mode: 0o600 },
  );
  return path;
}

/** Starts the operator with the Deployment's own args, as its ServiceAccount. */
async function runAsDeployment(
  t: TestContext,
  namespace: string,
  fullname: string,
): Promise<OperatorProcess> {
  const apps = (await clusterKubeConfig()).makeApiClient(AppsV1Api);
  const deployment = await apps.readNamespacedDeployment({ namespace, name: fullname });
  const container = deployment.spec!.template.spec!.containers[0]!;
  assert.equal(deployment.spec?.template.spec?.serviceAccountName, fullname);
  const args = (container.args ?? []).map((arg) => arg.replace('$(POD_NAMESPACE)', namespace));
  return startOperator(t, {
    namespace,
    // Out of the cluster the API server reaches the process by URL, on a port of the harness's
    // choosing, and its metrics are on another (the chart's :8080 is every interface of the pod,
    // here of the host: the container test beside this file once found it taken); everything
    // else is the chart's.
    args: args.filter(
      (arg) =>
        !arg.startsWith('--namespace=') &&
        !arg.startsWith('--port=') &&
        !arg.startsWith('--metrics-bind-address='),
    ),
    env: { KUBECONFIG: await serviceAccountKubeconfig(namespace, fullname) },
  });
}

const escaped = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `kubectl auth can-i --list`'s row for a kind read whole: `<plural>[.<group>]  []  []  [get list watch]`. */
function readRow(kind: KindDefinition): RegExp {
  const resource = kind.group === '' ? kind.plural : `${kind.plural}.${kind.group}`;
  return new RegExp(`^${escaped(resource)}\\s+\\[\\]\\s+\\[\\]\\s+\\[${READ_VERBS.join(' ')}\\]$`);
}

/**
 * What `kubectl auth can-i --list` may show for the chart's ServiceAccount: its rules and the
 * defaults every account has. The reads of whole kinds follow the registry (webhook/kinds.ts), as
 * the ClusterRole's do; the rest is written here as it is in the chart, by hand.
 */
const ALLOWED = [
  /^selfsubjectreviews\.authentication\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$/,
  /^selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$/,
  /^selfsubjectrulesreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$/,
  /^\s*\[\/[^\]]*\]\s+\[\]\s+\[get\]$/, // non-resource URLs (/api, /version, /healthz...) every account may read
  // From 1.37 (ClusterTrustBundle on by default) every authenticated account may read them:
  // the default ClusterRole system:cluster-trust-bundle-discovery.
  /^clustertrustbundles\.certificates\.k8s\.io\s+\[\]\s+\[\]\s+\[get list watch\]$/,
  // get, list and watch on each kind the operator reads whole: the ClusterRole's generated reads.
  ...READ_KINDS.map(readRow),
  /^(mutating|validating)webhookconfigurations\.admissionregistration\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$/,
  /^(mutating|validating)webhookconfigurations\.admissionregistration\.k8s\.io\s+\[\]\s+\[admission-operator\]\s+\[get list watch update\]$/,
  /^clusterroles\.rbac\.authorization\.k8s\.io\s+\[\]\s+\[[a-z0-9-]+-admission-operator\]\s+\[get\]$/,
  /^secrets\s+\[\]\s+\[\]\s+\[create\]$/,
  /^secrets\s+\[\]\s+\[webhook-tls\]\s+\[get list watch update delete\]$/,
  /^configmaps\s+\[\]\s+\[gpu-tier-mapping\]\s+\[get list watch\]$/,
  /^configmaps\s+\[\]\s+\[admission-operator\]\s+\[get list watch\]$/,
  /^configmaps\s+\[\]\s+\[slo-controller-config\]\s+\[get list watch\]$/,
  /^configmaps\s+\[\]\s+\[pod-enhanced-validator-config\]\s+\[get list watch\]$/,
  /^events\s+\[\]\s+\[\]\s+\[create\]$/,
  /^leases\.coordination\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$/,
  /^leases\.coordination\.k8s\.io\s+\[\]\s+\[admission-operator\]\s+\[get update\]$/,
];

describe('Helm chart', () => {
  it('passes helm lint and ships the project’s CRDs unchanged', async () => {
    const { stdout } = await helm(['lint', chart]);
    assert.match(stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
    const projectCrds = (await readdir(join(repoRoot, 'crds')))
      .filter((file) => file.endsWith('.yaml'))
      .sort();
    const chartCrds = (await readdir(join(chart, 'files', 'crds'))).sort();
    assert.deepEqual(
      chartCrds,
      projectCrds,
      "the chart's CRD copies are crds/'s: run npm run chart:generate",
    );
    for (const file of projectCrds) {
      assert.equal(
        await readFile(join(chart, 'files', 'crds', file), 'utf8'),
        await readFile(join(repoRoot, 'crds', file), 'utf8'),
        `charts/admission-operator/files/crds/${file} differs from crds/${file}: run npm run chart:generate`,
      );
    }
  });

  it('refuses an unknown gate, webhook or enforcement action at helm install --dry-run with the schema’s message, and takes good values', async () => {
    const release = `dry-${uniqueSuffix()}`;
    const install = (dryRun: string, set: string): Promise<{ stdout: string; stderr: string }> =>
      helm(['install', release, chart, '-n', `${release}-system`, dryRun, '--set', set]);
    const gate = Object.keys(FEATURE_GATE_DEFAULTS)[0]!;
    const webhook = webhookShortNames()[0]!;
    const refusals = [
      {
        set: `featureGates.${gate}x=true`,
        message: `at '/featureGates': additional properties '${gate}x' not allowed`,
      },
      {
        set: `webhooks.enforcement.${webhook}x=warn`,
        message: `at '/webhooks/enforcement': additional properties '${webhook}x' not allowed`,
      },
      {
        set: `webhooks.enforcement.${webhook}=block`,
        message: `at '/webhooks/enforcement/${webhook}': value must be one of ${ENFORCEMENT_ACTIONS.map((a) => `'${a}'`).join(', ')}`,
      },
    ];
    for (const dryRun of ['--dry-run', '--dry-run=server']) {
      for (const { set, message } of refusals) {
        await assert.rejects(install(dryRun, set), (error: { stderr?: string }) => {
          assert.ok(error.stderr?.includes(message), `${dryRun} --set ${set}: ${error.stderr}`);
          return true;
        });
      }
    }
    // The server's own version (1.35 here) satisfies kubeVersion, and it accepts every object.
    const { stdout } = await install('--dry-run=server', `webhooks.enforcement.${webhook}=warn`);
    assert.match(stdout, /STATUS: pending-install/);
    assert.match(stdout, /kind: ResourceQuota/);
  });

  it('installs next to CRDs another project already installed, leaving them exactly as they are', async (t) => {
    const names = (await readdir(join(repoRoot, 'crds')))
      .filter((file) => file.endsWith('.yaml'))
      .map((file) => file.replace(/\.yaml$/, ''));
    // As Koordinator's, scheduler-plugins' or Volcano's installer would: applied, not by this chart.
    await installCrds(...names);
    const extensions = (await clusterKubeConfig()).makeApiClient(ApiextensionsV1Api);
    const before = new Map<string, string>();
    for (const name of names) {
      const crd = await extensions.readCustomResourceDefinition({ name });
      assert.equal(
        crd.metadata?.annotations?.['meta.helm.sh/release-name'],
        undefined,
        `${name} is not Helm's`,
      );
      before.set(name, crd.metadata?.resourceVersion ?? '');
    }
    const release = `crds-${uniqueSuffix()}`;
    const namespace = `${release}-system`;
    t.after(async () => {
      await helm(['uninstall', release, '-n', namespace]).catch(() => undefined);
      await kubectl(['delete', 'namespace', namespace, '--wait=false']).catch(() => undefined);
    });
    await helm(['install', release, chart, '-n', namespace, '--create-namespace']);
    const { stdout: manifest } = await helm(['get', 'manifest', release, '-n', namespace]);
    assert.doesNotMatch(manifest, /kind: CustomResourceDefinition/, 'the release takes over no CRD');
    await helm(['uninstall', release, '-n', namespace]);
    for (const name of names) {
      const crd = await extensions.readCustomResourceDefinition({ name });
      assert.equal(
        crd.metadata?.resourceVersion,
        before.get(name),
        `${name} untouched by install and uninstall`,
      );
    }
  });

  it('sets the heap limit and the memory-limit metric when resources.limits.memory is set, and only then', async () => {
    const heapFlag = (text: string): string | undefined =>
      /name: NODE_OPTIONS\s+value: (--max-old-space-size\S*)/.exec(text)?.[1];
    const defaults = (await helm(['template', 'x', chart])).stdout;
    assert.equal(heapFlag(defaults), '--max-old-space-size-percentage=40', 'the default 512Mi limit');
    assert.match(
      defaults,
      /name: ADMISSION_MEMORY_LIMIT\s+valueFrom: \{ resourceFieldRef: \{ containerName: operator, resource: limits\.memory \} \}/,
    );
    // Node reads the limit from the cgroup, so any quantity Kubernetes takes will do.
    const fractional = (await helm(['template', 'x', chart, '--set', 'resources.limits.memory=1.5Gi']))
      .stdout;
    assert.equal(heapFlag(fractional), '--max-old-space-size-percentage=40');
    const unlimited = (await helm(['template', 'x', chart, '--set', 'resources.limits=null'])).stdout;
    assert.equal(heapFlag(unlimited), undefined, 'no limit: V8 sizes its heap itself');
    assert.doesNotMatch(unlimited, /ADMISSION_MEMORY_LIMIT/);
  });

  it('installs, runs as its ServiceAccount with no more rights than needed, upgrades and uninstalls cleanly', async (t) => {
    cleanConfigurationsAfter(t);
    const release = `ao-${uniqueSuffix()}`;
    const namespace = `${release}-system`;
    const fullname = `${release}-admission-operator`;
    const core = await clusterKubeConfig();
    t.after(async () => {
      await helm(['uninstall', release, '-n', namespace]).catch(() => undefined);
      await kubectl(['delete', 'namespace', namespace, '--wait=false']).catch(() => undefined);
    });
    await helm(['install', release, chart, '-n', namespace, '--create-namespace']);

    // Enough: the operator, with the Deployment's args and the ServiceAccount's token, does its whole job.
    let operator = await runAsDeployment(t, namespace, fullname);
    const secret = await waitForPublishedSecret(namespace);
    const ca = secretValue(secret, 'ca.crt');
    const team = await podReadyNamespace(t, 'tenant');
    await kubectl(['label', 'namespace', team, 'tenant.kubenexus.io/tier=bronze']);
    const gpuPod = [
      'apiVersion: v1',
      'kind: Pod',
      'metadata: {generateName: gpu-}',
      'spec:',
      '  containers: [{name: main, image: registry.invalid/cuda:1, resources: {limits: {nvidia.com/gpu: "1"}}}]',
    ].join('\n');
    await waitFor('a GPU pod to get its class', async () => {
      const { stdout } = await kubectl(
        ['create', '-n', team, '--dry-run=server', '-o', 'yaml', '-f', '-'],
        gpuPod,
      );
      return stdout.includes('gpu.nvidia.com/class: l4');
    });
    const quota = [
      'apiVersion: scheduling.sigs.k8s.io/v1alpha1',
      'kind: ElasticQuota',
      `metadata: {name: chart-${release}}`,
      'spec: {max: {cpu: "2"}}',
    ].join('\n');
    const { stdout: defaulted } = await kubectl(
      ['create', '-n', team, '--dry-run=server', '-o', 'yaml', '-f', '-'],
      quota,
    );
    assert.match(defaulted, /quota\.scheduling\.koordinator\.sh\/parent: koordinator-root-quota/);
    const badModel = [
      'apiVersion: workload.serving.volcano.sh/v1alpha1',
      'kind: ModelBooster',
      'metadata: {name: bad}',
      'spec:',
      '  backend:',
      '    {name: b0, type: vLLM, modelURI: hf://org/m, replicas: 1,',
      '     workers: [{type: prefill, image: "vllm/vllm-openai:v0.10.0"}, {type: decode, image: "vllm/vllm-openai:v0.10.0"}]}',
    ].join('\n');
    await assert.rejects(
      kubectl(['create', '-n', team, '--dry-run=server', '-f', '-'], badModel),
      (error: { stderr?: string }) => {
        assert.match(error.stderr ?? '', /If backend type is 'vLLM', there must be exactly one worker/);
        return true;
      },
    );
    assert.equal(operator.child.exitCode, null);

    // Not more than needed.
    const { stdout: rights } = await kubectl([
      'auth',
      'can-i',
      '--list',
      `--as=system:serviceaccount:${namespace}:${fullname}`,
      '-n',
      namespace,
    ]);
    const rows = rights.trim().split('\n').slice(1);
    const unexpected = rows.filter((row) => !ALLOWED.some((pattern) => pattern.test(row.trim())));
    assert.deepEqual(
      unexpected,
      [],
      `the ServiceAccount may do more than it needs:\n${unexpected.join('\n')}`,
    );

    // Upgrade: a gate off reaches the configurations; the certificates stay.
    await operator.stop();
    await helm([
      'upgrade',
      release,
      chart,
      '-n',
      namespace,
      '--set',
      'featureGates.GpuClassMutatingWebhook=false',
      '--set',
      'webhooks.overrides.validate-node.timeoutSeconds=3',
      '--set',
      'webhooks.enforcement.validate-node=warn',
    ]);
    operator = await runAsDeployment(t, namespace, fullname);
    await waitFor('the GPU-class webhook to leave the configuration', async () => {
      const { stdout } = await kubectl([
        'get',
        'mutatingwebhookconfiguration',
        'admission-operator',
        '-o',
        'json',
      ]);
      const names = (JSON.parse(stdout) as { webhooks: { name: string }[] }).webhooks.map(
        (webhook) => webhook.name,
      );
      return names.length > 0 && !names.includes('mutate-pod-gpu-class.admission-operator.io');
    });
    const { stdout: nodeTimeout } = await kubectl([
      'get',
      'validatingwebhookconfiguration',
      'admission-operator',
      '-o',
      'jsonpath={.webhooks[?(@.name=="validate-node.admission-operator.io")].timeoutSeconds}',
    ]);
    assert.equal(nodeTimeout, '3', 'the timeout override reached the configuration');
    assert.equal(secretValue(await readSecret(namespace), 'ca.crt'), ca, 'the upgrade kept the CA');
    assert.ok((await publishedBundles()).every((bundle) => bundle === ca));

    // Uninstall: the Deployment goes (here: the process), then everything else.
    await operator.stop();
    await helm(['uninstall', release, '-n', namespace]);
    const rbac = core.makeApiClient(RbacAuthorizationV1Api);
    await waitFor(
      'no configuration, no Secret and no cluster-scoped leftover',
      async () => {
        const gone = async (read: () => Promise<unknown>): Promise<boolean> =>
          read().then(
            () => false,
            (error: unknown) => statusCode(error) === 404,
          );
        const { stdout } = await kubectl([
          'get',
          'mutatingwebhookconfiguration,validatingwebhookconfiguration',
          '-o',
          'name',
        ]);
        return (
          !stdout.includes('admission-operator') &&
          (await readSecret(namespace)) === undefined &&
          (await gone(() => rbac.readClusterRole({ name: fullname }))) &&
          (await gone(() => rbac.readClusterRoleBinding({ name: fullname })))
        );
      },
      { timeoutMs: 60_000 },
    );
  });

  it('gets its critical pods created where the cluster limits critical classes: with its ResourceQuota, and not without', async (t) => {
    const kubeConfig = await clusterKubeConfig();
    const core = kubeConfig.makeApiClient(CoreV1Api);
    const apps = kubeConfig.makeApiClient(AppsV1Api);
    // No operator runs here: a configuration an earlier test left behind must not call one.
    await deleteConfigurations();
    // The local control plane limits the critical classes (scripts/cluster/control-plane.ts), as a
    // hardened cluster does: a critical pod in a namespace without a covering quota is refused.
    const bare = await testNamespace(t, 'critical');
    await assert.rejects(
      kubectl([
        'run',
        'critical',
        '-n',
        bare,
        '--image=registry.invalid/pause:1',
        '--overrides={"spec":{"priorityClassName":"system-cluster-critical"}}',
        '--dry-run=server',
      ]),
      (error: { stderr?: string }) => {
        assert.match(
          error.stderr ?? '',
          /insufficient quota to match these scopes/,
          'the cluster limits critical classes: restart it (npm run cluster:down && npm run cluster:up) if it predates that',
        );
        return true;
      },
    );

    const install = async (release: string, ...sets: string[]): Promise<string> => {
      const namespace = `${release}-system`;
      t.after(async () => {
        await helm(['uninstall', release, '-n', namespace]).catch(() => undefined);
        await kubectl(['delete', 'namespace', namespace, '--wait=false']).catch(() => undefined);
      });
      await helm([
        'install',
        release,
        chart,
        '-n',
        namespace,
        '--create-namespace',
        ...sets.flatMap((set) => ['--set', set]),
      ]);
      return namespace;
    };
    // No node runs them: the controller-manager creates the pods, which stay Pending.
    const quoted = await install(`pq-${uniqueSuffix()}`);
    const pods = await waitFor('the ReplicaSet to create both pods', async () => {
      const list = await core.listNamespacedPod({ namespace: quoted });
      return list.items.length === 2 ? list.items : undefined;
    });
    assert.deepEqual(
      pods.map((pod) => pod.spec?.priorityClassName),
      ['system-cluster-critical', 'system-cluster-critical'],
    );
    const [quota] = (await core.listNamespacedResourceQuota({ namespace: quoted })).items;
    await waitFor('the quota to count the pods', async () => {
      const current = await core.readNamespacedResourceQuota({
        namespace: quoted,
        name: quota!.metadata!.name!,
      });
      return current.status?.used?.pods === '2';
    });

    const unquoted = await install(`pn-${uniqueSuffix()}`, 'resourceQuota=false');
    const failure = await waitFor('the ReplicaSet to report its refused pods', async () => {
      const [replicaSet] = (await apps.listNamespacedReplicaSet({ namespace: unquoted })).items;
      return replicaSet?.status?.conditions?.find((condition) => condition.type === 'ReplicaFailure');
    });
    assert.match(failure.message ?? '', /insufficient quota to match these scopes/);
    assert.deepEqual((await core.listNamespacedPod({ namespace: unquoted })).items, []);
  });
});
