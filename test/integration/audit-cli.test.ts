/**
 * The `audit` command's flags against the real API server. -n, -A and -l narrow what is judged
 * as kubectl's do, and -o yaml prints the report. `audit --policy-report`: without the wgpolicyk8s.io CRDs it says so
 * and exits 2; with them (the chart's copies, installed here) it writes a PolicyReport per
 * namespace and a ClusterPolicyReport for cluster-scoped objects, read back here; a re-run
 * replaces its own reports, deletes those with nothing left to report, and never touches another
 * engine's report. The chart's grant for the periodic audit's reports is enough to write them.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import {
  ApiextensionsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  RbacAuthorizationV1Api,
  type V1ClusterRoleBinding,
} from '@kubernetes/client-node';
import { ensureHelm } from '../../scripts/cluster/binaries.js';
import { kubeconfigPath, repoRoot } from '../../scripts/cluster/layout.js';
import type { AuditReport } from '../../operator/audit/audit.js';
import {
  PolicyReportCollector,
  publishPolicyReports,
  type PolicyReport,
} from '../../operator/audit/policy-report.js';
import { parse } from 'yaml';
import { operatorEntry } from '../harness/operator-bundle.js';
import {
  applyYaml,
  clusterKubeConfig,
  installCrds,
  statusCode,
  podReadyNamespace,
  uniqueSuffix,
  waitFor,
} from '../harness/cluster.js';
import { createLabelledNodes, createPlainPods } from '../harness/many-objects.js';

const execFileAsync = promisify(execFile);
const GROUP = 'wgpolicyk8s.io';
const VERSION = 'v1alpha2';
const CRDS = ['policyreports.wgpolicyk8s.io', 'clusterpolicyreports.wgpolicyk8s.io'];

/**
 * Runs `audit` as a user would: the operator's code as the suite's bundle holds it (what the
 * package's bin runs, in a fifth of the CPU of loading the sources through tsx; see admit-cli.test.ts).
 */
async function audit(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFileAsync(
      process.execPath,
      [await operatorEntry('operator'), 'audit', `--kubeconfig=${kubeconfigPath}`, ...args],
      { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024 },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

const wrongPriorityPod = (name: string) => ({
  metadata: {
    name,
    labels: { 'koordinator.sh/qosClass': 'BE', 'koordinator.sh/priority-class': 'koord-prod' },
  },
  spec: { containers: [{ name: 'main', image: 'registry.invalid/app:1' }] },
});

describe('audit --policy-report', () => {
  it('writes PolicyReports the API server serves back, replaced by a re-run, beside another engine’s', async (t) => {
    const kubeConfig = await clusterKubeConfig();
    const extensions = kubeConfig.makeApiClient(ApiextensionsV1Api);
    const custom = kubeConfig.makeApiClient(CustomObjectsApi);
    const core = kubeConfig.makeApiClient(CoreV1Api);

    // Without the CRDs: a clear message, exit 2.
    for (const name of CRDS) await extensions.deleteCustomResourceDefinition({ name }).catch(() => undefined);
    await waitFor('the PolicyReport API to be gone', async () => {
      const served = await custom
        .listClusterCustomObject({ group: GROUP, version: VERSION, plural: 'policyreports' })
        .then(() => true)
        .catch(() => false);
      return !served;
    });
    const namespace = await podReadyNamespace(t, 'polr');
    const missing = await audit(['--policy-report', '-n', namespace]);
    assert.equal(missing.code, 2, missing.stderr);
    assert.match(
      missing.stderr,
      /audit: --policy-report: the PolicyReport API \(wgpolicyk8s\.io\/v1alpha2\) is not served: install its CRDs \(the chart's audit\.policyReports\.installCRDs=true/,
    );

    await installCrds(...CRDS.map((name) => `policy-reports/${name}`));

    // Another engine's report in the same namespace, and one of its cluster reports.
    await custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: 'policyreports',
      body: {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'PolicyReport',
        metadata: { name: 'polr-ns-kyverno', labels: { 'app.kubernetes.io/managed-by': 'kyverno' } },
        summary: { pass: 1, fail: 0, warn: 0, error: 0, skip: 0 },
        results: [{ policy: 'require-labels', rule: 'check', result: 'pass', source: 'kyverno' }],
      },
    });

    await core.createNamespacedPod({ namespace, body: wrongPriorityPod('wrong-priority') });
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: 'plain' },
        spec: { containers: [{ name: 'main', image: 'registry.invalid/app:1' }] },
      },
    });

    const readReports = async (): Promise<PolicyReport[]> =>
      (
        (await custom.listNamespacedCustomObject({
          group: GROUP,
          version: VERSION,
          namespace,
          plural: 'policyreports',
        })) as { items: PolicyReport[] }
      ).items.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));

    const first = await audit(['--policy-report', '-n', namespace]);
    assert.equal(first.code, 1, first.stderr);
    assert.match(first.stderr, /audit: wrote 1 policy reports/);
    let reports = await readReports();
    assert.deepEqual(
      reports.map((report) => report.metadata.name),
      ['admission-operator-audit', 'polr-ns-kyverno'],
    );
    const ours = reports[0] as PolicyReport;
    assert.equal(ours.metadata.labels['app.kubernetes.io/managed-by'], 'admission-operator');
    const failed = ours.results.filter((result) => result.result === 'fail');
    assert.equal(failed.length, 1);
    assert.deepEqual(
      {
        policy: failed[0]?.policy,
        rule: failed[0]?.rule,
        source: failed[0]?.source,
        resource: failed[0]?.resources[0] && {
          kind: failed[0].resources[0].kind,
          name: failed[0].resources[0].name,
          namespace: failed[0].resources[0].namespace,
        },
      },
      {
        // A refusal of validate-pod's colocation step is reported under the step's name.
        policy: 'validate-pod/colocation',
        rule: 'admission',
        source: 'admission-operator',
        resource: { kind: 'Pod', name: 'wrong-priority', namespace },
      },
    );
    assert.ok((failed[0]?.message ?? '').length > 0 && (failed[0]?.message ?? '').length <= 1024);
    // The plain pod passes every webhook that judged it, and the summary counts each result.
    const passed = ours.results.filter((result) => result.result === 'pass');
    assert.ok(passed.some((result) => result.resources[0]?.name === 'plain'));
    assert.deepEqual(ours.summary, {
      pass: passed.length,
      fail: 1,
      warn: ours.results.filter((result) => result.result === 'warn').length,
      error: 0,
      skip: 0,
    });

    // Fixed: a re-run replaces our report's results; it is still one report, not two.
    await core.deleteNamespacedPod({ namespace, name: 'wrong-priority', gracePeriodSeconds: 0 });
    await waitFor('the pod to be gone', async () =>
      (await core.listNamespacedPod({ namespace })).items.every(
        (pod) => pod.metadata?.name !== 'wrong-priority',
      ),
    );
    const second = await audit(['--policy-report', '-n', namespace]);
    assert.equal(second.code, 0, second.stderr);
    reports = await readReports();
    assert.deepEqual(
      reports.map((report) => report.metadata.name),
      ['admission-operator-audit', 'polr-ns-kyverno'],
    );
    assert.equal(reports[0]?.summary.fail, 0);
    assert.ok(reports[0]?.results.every((result) => result.resources[0]?.name === 'plain'));
    assert.deepEqual(reports[1]?.results, [
      { policy: 'require-labels', rule: 'check', result: 'pass', source: 'kyverno' },
    ]);

    // Nothing left to judge in the namespace: our report goes, the other engine's stays.
    await core.deleteNamespacedPod({ namespace, name: 'plain', gracePeriodSeconds: 0 });
    await waitFor(
      'the pods to be gone',
      async () => (await core.listNamespacedPod({ namespace })).items.length === 0,
    );
    const emptied = await audit(['--policy-report', '-n', namespace]);
    assert.equal(emptied.code, 0, emptied.stderr);
    assert.match(emptied.stderr, /deleted 1 of an earlier run/);
    assert.deepEqual(
      (await readReports()).map((report) => report.metadata.name),
      ['polr-ns-kyverno'],
    );
  });

  it('reports cluster-scoped objects in a ClusterPolicyReport', async (t) => {
    // A Node object (no kubelet behind it) is all a cluster-scoped judgement needs.
    const core = (await clusterKubeConfig()).makeApiClient(CoreV1Api);
    const custom = (await clusterKubeConfig()).makeApiClient(CustomObjectsApi);
    const node = `polr-node-${uniqueSuffix()}`;
    await core.createNode({ body: { metadata: { name: node } } });
    t.after(async () => {
      await core.deleteNode({ name: node }).catch(() => undefined);
    });
    const run = await audit(['--policy-report']);
    assert.notEqual(run.code, 2, run.stderr);
    const report = (await custom.getClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: 'clusterpolicyreports',
      name: 'admission-operator-audit',
    })) as PolicyReport;
    assert.equal(report.kind, 'ClusterPolicyReport');
    const ofNode = report.results.filter(
      (result) => result.resources[0]?.kind === 'Node' && result.resources[0]?.name === node,
    );
    assert.ok(ofNode.length > 0, `the report names Node ${node}`);
    assert.ok(
      ofNode.every(
        (result) => result.source === 'admission-operator' && result.resources[0]?.namespace === undefined,
      ),
    );
  });
  it('publishes with no more than the chart grants the operator when audit.policyReports.enabled', async (t) => {
    // The chart's own RBAC for the reports, rendered and applied, bound to a ServiceAccount.
    const namespace = await podReadyNamespace(t, 'polr-rbac');
    const release = `polr-${uniqueSuffix()}`;
    const { stdout } = await execFileAsync(await ensureHelm(), [
      'template',
      release,
      join(repoRoot, 'charts', 'admission-operator'),
      '-n',
      namespace,
      '--set',
      'audit.policyReports.enabled=true',
      '--show-only',
      'templates/policy-reports.yaml',
    ]);
    const applied = await applyYaml(stdout);
    const kubeConfig = await clusterKubeConfig();
    const rbac = kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    t.after(async () => {
      for (const object of applied) {
        const name = object.metadata?.name ?? '';
        if (object.kind === 'ClusterRole') await rbac.deleteClusterRole({ name }).catch(() => undefined);
        else await rbac.deleteClusterRoleBinding({ name }).catch(() => undefined);
      }
    });
    const binding = applied.find((object) => object.kind === 'ClusterRoleBinding') as V1ClusterRoleBinding;
    const serviceAccount = binding.subjects?.[0]?.name ?? '';
    const core = kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: serviceAccount } } });
    const token = await core.createNamespacedServiceAccountToken({
      namespace,
      name: serviceAccount,
      body: { spec: { audiences: [], expirationSeconds: 600 } },
    });
    const cluster = kubeConfig.getCurrentCluster();
    assert.ok(cluster);
    const asOperator = new KubeConfig();
    asOperator.loadFromOptions({
      clusters: [cluster],
      users: [{ name: 'operator', token: token.status?.token ?? '' }],
      contexts: [{ name: 'operator', cluster: cluster.name, user: 'operator' }],
      currentContext: 'operator',
    });

    const collector = new PolicyReportCollector();
    collector.add({ apiVersion: 'v1', kind: 'Pod', namespace, name: 'p', uid: undefined }, [
      { webhook: 'validate-pod', mutating: false, outcome: 'refused', message: 'refused' },
    ]);
    await installCrds(...CRDS.map((name) => `policy-reports/${name}`));
    // Scoped to the test's namespace: the shared cluster's other namespaces are not this test's.
    const written = await publishPolicyReports(asOperator, collector.reports(), namespace);
    assert.deepEqual(written.written, [`PolicyReport ${namespace}/admission-operator-audit`]);
    const rewritten = await publishPolicyReports(asOperator, collector.reports(), namespace);
    assert.deepEqual(rewritten.written, written.written);
    const emptied = await publishPolicyReports(asOperator, new PolicyReportCollector().reports(), namespace);
    assert.deepEqual(emptied.deleted, written.written);
    // Without the grant, the same write is forbidden: the test is not passing on an admin's rights.
    for (const object of applied)
      if (object.kind === 'ClusterRoleBinding')
        await rbac.deleteClusterRoleBinding({ name: object.metadata?.name ?? '' });
    await waitFor('the grant to be gone', () =>
      publishPolicyReports(asOperator, collector.reports(), namespace).then(
        () => undefined,
        (error: unknown) => (statusCode(error) === 403 ? true : undefined),
      ),
    );
  });
});

describe('audit -n, -A, -l, -o yaml', () => {
  it('judges one namespace, every namespace, or the objects a selector matches', async (t) => {
    const core = (await clusterKubeConfig()).makeApiClient(CoreV1Api);
    const [a, b] = [await podReadyNamespace(t, 'scope-a'), await podReadyNamespace(t, 'scope-b')];
    for (const namespace of [a, b]) {
      await core.createNamespacedPod({ namespace, body: wrongPriorityPod('labelled') });
      const unlabelled = wrongPriorityPod('unlabelled');
      await core.createNamespacedPod({
        namespace,
        body: { ...unlabelled, metadata: { ...unlabelled.metadata, name: 'unlabelled' } },
      });
      await core.patchNamespacedPod({
        namespace,
        name: 'labelled',
        body: [{ op: 'add', path: '/metadata/labels/audit-scope', value: 'yes' }],
      });
    }
    const refusedIn = (report: AuditReport): string[] =>
      report.findings
        .filter((finding) => finding.outcome === 'refused' && [a, b].includes(finding.namespace ?? ''))
        .map((finding) => `${finding.namespace}/${finding.name}`)
        .sort();

    const one = await audit(['-n', a, '-o', 'yaml']);
    assert.equal(one.code, 1, one.stderr);
    const oneReport = parse(one.stdout) as AuditReport;
    assert.deepEqual(refusedIn(oneReport), [`${a}/labelled`, `${a}/unlabelled`]);
    assert.ok(
      oneReport.findings.every((finding) => finding.namespace === a),
      'nothing outside the namespace',
    );
    assert.equal(oneReport.judged.Node, undefined, 'no cluster-scoped objects under -n');

    const all = parse((await audit(['-A', '-n', a, '-o', 'yaml'])).stdout) as AuditReport;
    assert.deepEqual(refusedIn(all), [
      `${a}/labelled`,
      `${a}/unlabelled`,
      `${b}/labelled`,
      `${b}/unlabelled`,
    ]);

    const selected = parse((await audit(['-l', 'audit-scope=yes', '-o', 'yaml'])).stdout) as AuditReport;
    assert.deepEqual(refusedIn(selected), [`${a}/labelled`, `${b}/labelled`]);
    const both = parse((await audit(['-n', b, '-l', 'audit-scope=yes', '-o', 'yaml'])).stdout) as AuditReport;
    assert.deepEqual(refusedIn(both), [`${b}/labelled`]);

    const badSelector = await audit(['-l', 'a b c']);
    assert.equal(badSelector.code, 2);
    assert.match(badSelector.stderr, /audit: cannot read the cluster: /);
  });
});

describe('audit reads every page of every kind', () => {
  it('judges every pod of a namespace past the first page at the default chunk size (500)', async (t) => {
    const core = (await clusterKubeConfig()).makeApiClient(CoreV1Api);
    const namespace = await podReadyNamespace(t, 'pages-default');
    // 1,100 plain pods, then one that would be refused, last in the list's order (by name).
    await createPlainPods(namespace, 'plain-', 1100);
    await core.createNamespacedPod({ namespace, body: wrongPriorityPod('zz-wrong-priority') });

    const run = await audit(['-n', namespace, '-o', 'json']);
    assert.equal(run.code, 1, run.stderr);
    const report = JSON.parse(run.stdout) as AuditReport;
    assert.deepEqual(
      report.findings.filter((finding) => finding.outcome === 'refused').map((finding) => finding.name),
      ['zz-wrong-priority'],
    );
    assert.equal(report.judged.Pod, 1101);
    assert.equal(report.held.Pod, 1101);

    const text = await audit(['-n', namespace]);
    assert.match(text.stdout, /^audit: 1101 of 1101 objects judged \(Pod 1101 of 1101\); 1 would be refused/);
  });

  it('judges every node and pod in pages of a small chunk size, by selector and cluster-wide', async (t) => {
    const core = (await clusterKubeConfig()).makeApiClient(CoreV1Api);
    const selector = await createLabelledNodes(t, 'audit-pages', 25);
    const namespace = await podReadyNamespace(t, 'pages-small');
    const [key = '', value = ''] = selector.split('=');
    const labelled = (name: string) => {
      const pod = wrongPriorityPod(name);
      return { ...pod, metadata: { ...pod.metadata, labels: { ...pod.metadata.labels, [key]: value } } };
    };
    await createPlainPods(namespace, 'plain-', 30);
    await core.createNamespacedPod({ namespace, body: labelled('zz-wrong-priority') });
    const refusedHere = (report: AuditReport): string[] =>
      report.findings
        .filter((finding) => finding.outcome === 'refused' && finding.namespace === namespace)
        .map((finding) => finding.name);

    // A selector: pages the API server may leave short, each followed to the next.
    const selected = await audit(['-l', selector, '--chunk-size=7', '-o', 'json']);
    assert.equal(selected.code, 1, selected.stderr);
    const selectedReport = JSON.parse(selected.stdout) as AuditReport;
    assert.deepEqual(refusedHere(selectedReport), ['zz-wrong-priority']);
    assert.equal(selectedReport.judged.Node, 25);
    assert.equal(selectedReport.judged.Pod, 1);

    // Everything: each kind's count as the API server gives it, and every one of them judged.
    const nodes = (await core.listNode()).items.length;
    const everything = await audit(['--chunk-size=7', '-o', 'json']);
    assert.equal(everything.code, 1, everything.stderr);
    const report = JSON.parse(everything.stdout) as AuditReport;
    assert.deepEqual(refusedHere(report), ['zz-wrong-priority']);
    assert.equal(report.judged.Node, nodes);
    assert.ok((report.judged.Pod ?? 0) >= 31, `judged ${JSON.stringify(report.judged)}`);
    assert.deepEqual(report.held, report.judged);
  });
});
