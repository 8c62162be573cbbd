/**
 * `admission-operator admit --cluster` against the real local control plane: for the same
 * objects, its decisions match what the API server decides when the objects are created through
 * it with the operator's webhooks in place, and its `-o yaml` output applies cleanly.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { installCrds, kubectl, podReadyNamespace, testNamespace, waitFor } from '../harness/cluster.js';
import { freshOperator } from '../harness/operator.js';
import { operatorEntry } from '../harness/operator-bundle.js';
import { kubeconfigPath, repoRoot } from '../../scripts/cluster/layout.js';
import { temporaryDirectory } from '../harness/temp-dir.js';

const execFileAsync = promisify(execFile);

interface Report {
  items: { kind: string; metadata: { name: string }; spec?: Record<string, unknown> }[];
  report: { kind: string; name: string; outcome: string; denial?: { message: string } }[];
}

/** `actual` restricted to the keys `expected` has, recursively: what a prediction covers. */
function withoutAbsent(actual: unknown, expected: unknown): unknown {
  if (Array.isArray(actual) && Array.isArray(expected)) {
    return actual.map((item, index): unknown => withoutAbsent(item, expected[index]));
  }
  if (typeof actual === 'object' && actual !== null && typeof expected === 'object' && expected !== null) {
    return Object.fromEntries(
      Object.keys(expected).map((key) => [
        key,
        withoutAbsent((actual as Record<string, unknown>)[key], (expected as Record<string, unknown>)[key]),
      ]),
    );
  }
  return actual;
}

/**
 * Runs the command as a user would, resolving with its exit code and output: the operator's code as
 * the suite's bundle holds it (test/harness/operator-bundle.ts), what the package's bin runs (the
 * bin only chooses between the sources and dist/, test/unit/operator/version.test.ts) in a fifth of
 * the CPU of loading the sources through tsx.
 */
async function admit(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFileAsync(
      process.execPath,
      [await operatorEntry('operator'), 'admit', ...args],
      { cwd: repoRoot, maxBuffer: 16 * 1024 * 1024 },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

function documents(team: string, sloNamespace: string): { name: string; yaml: string }[] {
  return [
    {
      name: 'gpu-pod',
      yaml: `apiVersion: v1
kind: Pod
metadata: {name: gpu-pod, namespace: ${team}}
spec:
  containers:
    - name: main
      image: registry.invalid/cuda:1
      resources: {limits: {nvidia.com/gpu: "1"}}
`,
    },
    {
      name: 'wrong-priority',
      yaml: `apiVersion: v1
kind: Pod
metadata:
  name: wrong-priority
  namespace: ${team}
  labels: {koordinator.sh/qosClass: BE, koordinator.sh/priority-class: koord-prod}
spec:
  containers: [{name: main, image: registry.invalid/app:1}]
`,
    },
    {
      name: 'good-policy',
      yaml: `apiVersion: workload.serving.volcano.sh/v1alpha1
kind: AutoscalingPolicy
metadata: {name: good-policy, namespace: ${team}}
spec:
  metrics: [{name: cpu, targetValue: "80"}]
  homogeneousTarget:
    target: {targetRef: {kind: ModelServing, name: qwen}}
    minReplicas: 1
    maxReplicas: 3
`,
    },
    {
      name: 'bad-booster',
      yaml: `apiVersion: workload.serving.volcano.sh/v1alpha1
kind: ModelBooster
metadata: {name: bad-booster, namespace: ${team}}
spec:
  backend:
    name: b0
    type: vLLM
    modelURI: hf://org/model
    replicas: 1
    workers:
      - {type: prefill, image: "vllm/vllm-openai:v0.10.0"}
      - {type: decode, image: "vllm/vllm-openai:v0.10.0"}
`,
    },
    {
      name: 'slo-controller-config',
      yaml: `apiVersion: v1
kind: ConfigMap
metadata: {name: slo-controller-config, namespace: ${sloNamespace}}
data:
  resource-threshold-config: '{"clusterStrategy":{"enable":true,"cpuSuppressThresholdPercent":120}}'
`,
    },
  ];
}

describe('admit --cluster', () => {
  it('decides as the live webhooks do, and its -o yaml output applies cleanly', async (t) => {
    await installCrds(
      'autoscalingpolicies.workload.serving.volcano.sh',
      'modelboosters.workload.serving.volcano.sh',
    );
    const sloNamespace = await testNamespace(t, 'slo');
    const { namespace: operatorNamespace } = await freshOperator(t, {
      args: [`--slo-config-namespace=${sloNamespace}`],
    });
    const team = await podReadyNamespace(t, 'team');
    await kubectl(['label', 'namespace', team, 'tenant.kubenexus.io/tier=gold']);
    const docs = documents(team, sloNamespace);
    const gpuPod = docs[0]?.yaml ?? '';
    // The operator's watch must have seen the tier label before the live comparison.
    await waitFor('the operator to see the tier label', async () => {
      const { stdout } = await kubectl(['create', '--dry-run=server', '-o', 'yaml', '-f', '-'], gpuPod);
      return stdout.includes('gpu.nvidia.com/class: h100');
    });

    const dir = await temporaryDirectory('admit-cli-');
    const file = join(dir, 'objects.yaml');
    await writeFile(file, docs.map((doc) => doc.yaml).join('---\n'));
    const common = [
      '-f',
      file,
      '--cluster',
      '--kubeconfig',
      kubeconfigPath,
      '--operator-namespace',
      operatorNamespace,
      '--slo-config-namespace',
      sloNamespace,
    ];
    const started = Date.now();
    const result = await admit([...common, '-o', 'json']);
    t.diagnostic(`admit --cluster took ${Date.now() - started} ms (process start, list, judge)`);
    assert.equal(result.code, 1, result.stderr);
    const output = JSON.parse(result.stdout) as Report;
    assert.deepEqual(
      output.report.map((entry) => [entry.name, entry.outcome]),
      [
        ['gpu-pod', 'MUTATED'],
        ['wrong-priority', 'DENIED'],
        ['good-policy', 'MUTATED'],
        ['bad-booster', 'DENIED'],
        ['slo-controller-config', 'DENIED'],
      ],
    );

    // What it would apply goes through the real API server and its webhooks without complaint.
    const yaml = await admit([...common, '-o', 'yaml']);
    assert.equal(yaml.code, 1);
    const applied = await kubectl(['apply', '--dry-run=server', '-f', '-'], yaml.stdout);
    assert.match(applied.stdout, /pod\/gpu-pod created \(server dry run\)/);
    assert.match(
      applied.stdout,
      /autoscalingpolicy\.workload\.serving\.volcano\.sh\/good-policy created \(server dry run\)/,
    );

    // Now the same objects, created one by one through the API server.
    for (const [index, doc] of docs.entries()) {
      const expected = output.report[index];
      if (expected?.outcome === 'DENIED') {
        await assert.rejects(kubectl(['create', '-f', '-'], doc.yaml), (error: { stderr?: string }) => {
          assert.match(error.stderr ?? '', /denied the request/, doc.name);
          const firstLine = (expected.denial?.message ?? '').split('\n')[0] ?? '';
          assert.ok(
            (error.stderr ?? '').includes(firstLine),
            `${doc.name}: ${error.stderr ?? ''} lacks ${firstLine}`,
          );
          return true;
        });
        continue;
      }
      const { stdout } = await kubectl(['create', '-f', '-', '-o', 'json'], doc.yaml);
      const created = JSON.parse(stdout) as { spec?: Record<string, unknown> };
      const predicted = output.items.find((item) => item.metadata.name === doc.name);
      if (doc.name === 'gpu-pod') {
        assert.deepEqual(created.spec?.nodeSelector, predicted?.spec?.nodeSelector);
        assert.deepEqual(created.spec?.nodeSelector, { 'gpu.nvidia.com/class': 'h100' });
      } else {
        // The API server also applies the CRD schema's defaults, which admit does not model.
        assert.deepEqual(withoutAbsent(created.spec, predicted?.spec), predicted?.spec, doc.name);
        // Kthena's mutator sets the stabilization windows: admit predicted them, as the webhook set them.
        const behavior = created.spec?.behavior as
          { scaleDown?: { stabilizationWindow?: string } } | undefined;
        assert.ok(behavior?.scaleDown?.stabilizationWindow !== undefined, doc.name);
      }
    }
  });

  it('judges under the enforcement in force: the operator ConfigMap’s key, else its Deployment’s flag', async (t) => {
    // A stand-in for the chart's Deployment (no replicas: only its flags are read).
    const operatorNamespace = await testNamespace(t, 'enforcement');
    const team = await testNamespace(t, 'team');
    await kubectl(
      ['apply', '-f', '-'],
      `apiVersion: apps/v1
kind: Deployment
metadata:
  name: admission-operator
  namespace: ${operatorNamespace}
  labels: {app.kubernetes.io/name: admission-operator}
spec:
  replicas: 0
  selector: {matchLabels: {app: stand-in}}
  template:
    metadata: {labels: {app: stand-in}}
    spec:
      containers:
        - name: operator
          image: registry.invalid/admission-operator:dev
          args: [--namespace=${operatorNamespace}, "--enforcement=validate-pod=warn,"]
`,
    );
    const dir = await temporaryDirectory('admit-enforcement-');
    const file = join(dir, 'pod.yaml');
    const wrongPriority = documents(team, 'koordinator-system').find((doc) => doc.name === 'wrong-priority');
    await writeFile(file, wrongPriority?.yaml ?? '');
    const cluster = ['-f', file, '--cluster', '--kubeconfig', kubeconfigPath];
    const withOperator = [...cluster, '--operator-namespace', operatorNamespace];

    const fromDeployment = await admit(withOperator);
    assert.equal(fromDeployment.code, 0, fromDeployment.stderr);
    assert.match(fromDeployment.stdout, /^WARN {5}Pod .*\/wrong-priority/m);
    assert.match(
      fromDeployment.stderr,
      new RegExp(
        `enforcement \\*=deny,validate-pod=warn \\(from --enforcement of Deployment ${operatorNamespace}/admission-operator\\)`,
      ),
    );

    // The ConfigMap's key replaces the flag at run time, in the operator and so here.
    await kubectl([
      'create',
      'configmap',
      'admission-operator',
      '-n',
      operatorNamespace,
      '--from-literal=enforcement=*=deny',
    ]);
    const fromConfigMap = await admit(withOperator);
    assert.equal(fromConfigMap.code, 1, fromConfigMap.stderr);
    assert.match(fromConfigMap.stdout, /^DENIED {3}Pod .*\/wrong-priority/m);

    // --enforcement on the command line wins over the cluster's.
    const explicit = await admit([...withOperator, '--enforcement', '*=warn', '--warn-exit-code', '4']);
    assert.equal(explicit.code, 4, explicit.stderr);

    // No operator Deployment to read: said so, and judged as deny.
    const empty = await testNamespace(t, 'no-operator');
    const elsewhere = await admit([...cluster, '--operator-namespace', empty]);
    assert.equal(elsewhere.code, 1);
    assert.match(
      elsewhere.stderr,
      new RegExp(
        `cannot read the operator's --enforcement \\(no Deployment labelled app.kubernetes.io/name=admission-operator in namespace ${empty}\\): judging as deny`,
      ),
    );
  });
});
