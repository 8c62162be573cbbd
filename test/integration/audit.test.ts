/**
 * `admission-operator audit` against the real API server: objects created while their webhooks
 * were in dryrun (a pod past its quota, a ModelBooster Kthena refuses) are listed with the refusal they
 * would get now, and the command exits 1. The leader's periodic audit publishes the same as
 * metrics, Events and (--audit-policy-reports) a PolicyReport.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { CoreV1Api } from '@kubernetes/client-node';
import { kubeconfigPath, repoRoot } from '../../scripts/cluster/layout.js';
import type { AuditReport } from '../../operator/audit/audit.js';
import type { PolicyReport } from '../../operator/audit/policy-report.js';
import { clusterKubeConfig, installCrds, kubectl, podReadyNamespace, waitFor } from '../harness/cluster.js';
import { freshOperator, httpGet } from '../harness/operator.js';
import { createLabelledNodes, createPlainPods } from '../harness/many-objects.js';

const execFileAsync = promisify(execFile);
const P = 'quota.scheduling.koordinator.sh';

async function audit(
  operatorNamespace: string,
): Promise<{ code: number; report: AuditReport; stderr: string }> {
  try {
    const { stdout, stderr } = await execFileAsync(
      process.execPath,
      [
        '--import',
        'tsx',
        'operator/main.ts',
        'audit',
        `--kubeconfig=${kubeconfigPath}`,
        '-o',
        'json',
        `--operator-namespace=${operatorNamespace}`,
      ],
      { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024 },
    );
    return { code: 0, report: JSON.parse(stdout) as AuditReport, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return {
      code: failed.code ?? -1,
      report: JSON.parse(failed.stdout ?? '{}') as AuditReport,
      stderr: failed.stderr ?? '',
    };
  }
}

describe('audit of existing objects', () => {
  it('finds a quota-violating pod and a bad ModelBooster created while their webhooks were in dryrun', async (t) => {
    await installCrds(
      'elasticquotas.scheduling.sigs.k8s.io',
      'modelboosters.workload.serving.volcano.sh',
      'policy-reports/policyreports.wgpolicyk8s.io',
      'policy-reports/clusterpolicyreports.wgpolicyk8s.io',
    );
    const { operator, namespace: operatorNamespace } = await freshOperator(t, {
      args: [
        '--enforcement=validate-pod=dryrun,validate-modelbooster=dryrun',
        '--audit-interval=2s',
        '--audit-policy-reports=true',
      ],
    });
    const namespace = await podReadyNamespace(t, 'audit');
    const quota = `small-${namespace}`;
    await waitFor('the quota to be admitted', () =>
      kubectl(
        ['apply', '-f', '-'],
        [
          'apiVersion: scheduling.sigs.k8s.io/v1alpha1',
          'kind: ElasticQuota',
          `metadata: {name: ${quota}, namespace: ${namespace}}`,
          'spec: {min: {cpu: "0"}, max: {cpu: "1"}}',
          '',
        ].join('\n'),
      ),
    );
    const core = (await clusterKubeConfig()).makeApiClient(CoreV1Api);
    const pod = (name: string) => ({
      metadata: { name, labels: { [`${P}/name`]: quota } },
      spec: {
        containers: [
          { name: 'main', image: 'registry.invalid/app:1', resources: { requests: { cpu: '1' } } },
        ],
      },
    });
    // The first waits for the store to know the quota; the second is past it, admitted only by dryrun.
    await waitFor('the first pod to be admitted', () =>
      core.createNamespacedPod({ namespace, body: pod('fits') }),
    );
    await core.createNamespacedPod({ namespace, body: pod('past-quota') });
    await kubectl(
      ['apply', '-n', namespace, '-f', '-'],
      [
        'apiVersion: workload.serving.volcano.sh/v1alpha1',
        'kind: ModelBooster',
        'metadata: {name: bounds}',
        'spec:',
        '  backend:',
        '    name: b0',
        '    type: vLLM',
        '    modelURI: hf://org/model',
        '    replicas: 1',
        '    workers:',
        '    - {type: prefill, image: "vllm/vllm-openai:v0.10.0"}',
        '    - {type: decode, image: "vllm/vllm-openai:v0.10.0"}',
        '',
      ].join('\n'),
    );

    const { code, report, stderr } = await audit(operatorNamespace);
    assert.equal(code, 1, stderr);
    const ours = report.findings.filter(
      (finding) => finding.namespace === namespace && finding.outcome === 'refused',
    );
    const podFinding = ours.find((finding) => finding.kind === 'Pod' && finding.name === 'past-quota');
    assert.equal(podFinding?.webhook, 'validate-pod');
    assert.match(
      podFinding.message,
      new RegExp(`exceeded quota: ${namespace}/${quota}, requested: cpu=1, used: cpu=1, limited: cpu=1`),
    );
    const modelFinding = ours.find((finding) => finding.kind === 'ModelBooster' && finding.name === 'bounds');
    assert.equal(modelFinding?.webhook, 'validate-modelbooster');
    assert.match(
      modelFinding.message,
      /spec\.backend\.workers: Invalid value: 2: If backend type is 'vLLM', there must be exactly one worker/,
    );
    const quotaFinding = ours.find((finding) => finding.kind === 'ElasticQuota' && finding.name === quota);
    assert.match(quotaFinding?.message ?? '', /the quota's pods use more than its max: cpu: used 2 > max 1/);
    assert.ok((report.judged.Pod ?? 0) >= 2);
    t.diagnostic(`audit judged ${JSON.stringify(report.judged)}; ${report.findings.length} findings`);

    // The leader's periodic audit publishes the same as metrics and Events on the objects.
    await waitFor('the periodic audit to count the refusals', async () => {
      const { body } = await httpGet(operator.metricsPort, '/metrics');
      return (
        /admission_audit_findings\{webhook="validate-modelbooster",outcome="refused"\} [1-9]/.test(body) ||
        undefined
      );
    });
    const events = await waitFor('an AuditViolation Event on the pod past its quota', async () => {
      const { stdout } = await kubectl([
        'get',
        'events',
        '-n',
        namespace,
        '--field-selector=reason=AuditViolation,involvedObject.name=past-quota',
        '-o',
        'jsonpath={.items[*].message}',
      ]);
      return stdout.includes('exceeded quota') ? stdout : undefined;
    });
    assert.match(events, /validate-pod would refuse this object if it were created now: .*exceeded quota/);
    const policyReport = await waitFor('the periodic audit’s PolicyReport', async () => {
      const { stdout } = await kubectl([
        'get',
        'policyreports.wgpolicyk8s.io',
        'admission-operator-audit',
        '-n',
        namespace,
        '-o',
        'json',
      ]).catch(() => ({ stdout: '' }));
      return stdout ? (JSON.parse(stdout) as PolicyReport) : undefined;
    });
    assert.deepEqual(
      policyReport.results
        .filter((result) => result.result === 'fail')
        .map((result) => `${result.policy} ${result.resources[0]?.kind}/${result.resources[0]?.name}`)
        .sort(),
      // Each pod is judged against the others: with the other one there, neither fits the quota.
      [
        `quota-usage ElasticQuota/${quota}`,
        'validate-modelbooster ModelBooster/bounds',
        'validate-pod Pod/fits',
        'validate-pod Pod/past-quota',
      ],
    );
  });

  it('publishes PolicyReports that cover every pod and node past the first page', async (t) => {
    await installCrds(
      'policy-reports/policyreports.wgpolicyk8s.io',
      'policy-reports/clusterpolicyreports.wgpolicyk8s.io',
    );
    const selector = await createLabelledNodes(t, 'audit-pages', 25);
    await freshOperator(t, {
      args: [
        '--enforcement=*=warn',
        '--audit-interval=2s',
        '--audit-policy-reports=true',
        '--audit-chunk-size=7',
      ],
    });
    const namespace = await podReadyNamespace(t, 'audit-pages');
    const pods = await createPlainPods(namespace, 'plain-', 30);
    // Created in warn: admitted, the refusal its warning; last of the namespace's pods by name.
    const { stderr } = await kubectl(
      ['apply', '-n', namespace, '-f', '-'],
      [
        'apiVersion: v1',
        'kind: Pod',
        'metadata:',
        '  name: zz-wrong-priority',
        '  labels: {koordinator.sh/qosClass: BE, koordinator.sh/priority-class: koord-prod}',
        'spec: {containers: [{name: main, image: "registry.invalid/app:1"}]}',
        '',
      ].join('\n'),
    );
    assert.match(stderr, /Warning: .*validate-pod/);
    const core = (await clusterKubeConfig()).makeApiClient(CoreV1Api);
    const nodes = (await core.listNode()).items.map((node) => node.metadata?.name ?? '').sort();
    assert.equal(nodes.filter((name) => name.startsWith(`pages-${selector.split('=')[1]}`)).length, 25);

    const named = (report: PolicyReport, kind: string): string[] => [
      ...new Set(
        report.results
          .filter((result) => result.resources[0]?.kind === kind)
          .map((result) => result.resources[0]?.name ?? ''),
      ),
    ];
    const policyReport = await waitFor(
      'a PolicyReport naming every pod of the namespace',
      async () => {
        const report = await readPolicyReport(['-n', namespace, 'policyreports.wgpolicyk8s.io']);
        return report && named(report, 'Pod').length === pods.length + 1 ? report : undefined;
      },
      { timeoutMs: 60_000 },
    );
    assert.deepEqual(named(policyReport, 'Pod').sort(), [...pods, 'zz-wrong-priority']);
    assert.deepEqual(
      policyReport.results
        .filter((result) => result.result === 'fail')
        .map((result) => result.resources[0]?.name),
      ['zz-wrong-priority'],
    );
    const clusterReport = await waitFor('a ClusterPolicyReport naming every node', async () => {
      const report = await readPolicyReport(['clusterpolicyreports.wgpolicyk8s.io']);
      return report && named(report, 'Node').length >= nodes.length ? report : undefined;
    });
    assert.deepEqual(named(clusterReport, 'Node').sort(), nodes);
  });
});

/** Our PolicyReport (or ClusterPolicyReport) as kubectl reads it, undefined while there is none. */
async function readPolicyReport(where: string[]): Promise<PolicyReport | undefined> {
  const { stdout } = await kubectl(['get', ...where, 'admission-operator-audit', '-o', 'json']).catch(() => ({
    stdout: '',
  }));
  return stdout ? (JSON.parse(stdout) as PolicyReport) : undefined;
}
