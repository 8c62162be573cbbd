/**
 * The `admit` command as a user runs it, on the manifests under test/fixtures/admit/: one example
 * per rule family, the output formats and the exit codes.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { admitMain } from '../../../../../operator/cli/admit/main.js';
import { repoRoot } from '../../../../../scripts/cluster/layout.js';
import { temporaryDirectory } from '../../../../harness/temp-dir.js';

const fixture = (name: string): string => join(repoRoot, 'test', 'fixtures', 'admit', name);
const STATE = ['--state', fixture('state.yaml')];

async function admit(
  args: string[],
  stdin = '',
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await admitMain(args, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    readStdin: () => Promise.resolve(stdin),
    env,
  });
  return { code, stdout, stderr };
}

interface Report {
  items: { kind: string; metadata: { name?: string }; spec?: Record<string, unknown> }[];
  report: {
    name: string;
    outcome: string;
    expandedFrom?: string;
    denial?: { webhook: string; message: string };
    webhooks: { name: string; patch?: unknown[]; enforcement?: string; wouldRefuse?: string }[];
  }[];
}

describe('admission-operator admit', () => {
  it('gives a GPU pod the class its tier maps to in the --state tier mapping', async () => {
    const { code, stdout } = await admit(['-f', fixture('gpu-pod.yaml'), ...STATE]);
    assert.equal(code, 0);
    assert.match(stdout, /^MUTATED {2}Pod team-a\/trainer/m);
    assert.match(stdout, /mutate-pod-gpu-class: patched/);
    assert.match(stdout, /\+ spec\.nodeSelector: \{ gpu\.nvidia\.com\/class: h200 \}/);
  });

  it('leaves the GPU pod alone without the state that names its tier', async () => {
    const { code, stdout } = await admit(['-f', fixture('gpu-pod.yaml')]);
    assert.equal(code, 0);
    assert.match(stdout, /^ADMITTED Pod team-a\/trainer/m);
    // The namespace has no tier label, so the namespaceSelector keeps the webhook from being called.
    assert.doesNotMatch(stdout, /mutate-pod-gpu-class/);
    assert.match(stdout, /note: namespace team-a is not in the state/);
  });

  it('counts the pods admitted before against the quota, as applying them in order would', async () => {
    const { code, stdout } = await admit(['-f', fixture('quota.yaml'), ...STATE]);
    assert.equal(code, 1);
    assert.match(stdout, /^ADMITTED Pod team-a\/fits/m);
    assert.match(stdout, /^DENIED {3}Pod team-a\/too-big/m);
    assert.match(
      stdout,
      /denied by validate-pod \(400\): .*exceeded quota: default\/team-a, requested: cpu=2, used: cpu=1, limited: cpu=2/,
    );
    assert.match(stdout, /2 objects: 1 admitted, 1 denied/);
  });

  it('counts the pods given as state against their quota, as the pod watch does', async () => {
    const dir = await temporaryDirectory('admit-state-');
    await writeFile(
      join(dir, 'running.yaml'),
      'apiVersion: v1\nkind: Pod\nmetadata: {name: running, namespace: team-a}\nspec: {containers: [{name: c, image: i, resources: {requests: {cpu: 1500m}}}]}\nstatus: {phase: Running}\n',
    );
    const { code, stdout } = await admit(['-f', fixture('quota.yaml'), ...STATE, '--state', dir]);
    assert.equal(code, 1);
    assert.match(stdout, /^DENIED {3}Pod team-a\/fits/m);
    assert.match(stdout, /used: cpu=1500m, limited: cpu=2/);
  });

  it('refuses a Kthena v1.0.0 ModelBooster with Kthena’s message', async () => {
    const { code, stdout } = await admit(['-f', fixture('bad-modelbooster.yaml'), ...STATE]);
    assert.equal(code, 1);
    assert.match(stdout, /^DENIED {3}ModelBooster team-a\/qwen/m);
    assert.match(stdout, /denied by validate-modelbooster \(400\)/);
    assert.match(
      stdout,
      /spec\.backend\.workers: Invalid value: 2: If backend type is 'vLLM', there must be exactly one worker/,
    );
  });

  it('refuses a broken slo-controller-config naming the key and the path', async () => {
    const { code, stdout } = await admit(['-f', fixture('bad-slo-config.yaml')]);
    assert.equal(code, 1);
    assert.match(stdout, /denied by validate-configmap/);
    assert.match(
      stdout,
      /data\[resource-threshold-config\]: clusterStrategy\.cpuSuppressThresholdPercent: Invalid value: 120: must be at most 100/,
    );
  });

  it('sends no other ConfigMap to the ConfigMap webhook (its match condition)', async () => {
    const { code, stdout } = await admit(
      ['-f', '-'],
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: koordinator-system}\ndata: {a: b}\n',
    );
    assert.equal(code, 0);
    assert.match(stdout, /webhooks: none applies/);
  });

  it('expands a Deployment into the pod it would create, judged by the pod webhooks', async () => {
    const { code, stdout } = await admit([
      '-f',
      fixture('deployment.yaml'),
      ...STATE,
      '--expand-workloads',
      '-o',
      'json',
    ]);
    assert.equal(code, 0);
    const output = JSON.parse(stdout) as Report;
    const [deployment, pod] = output.report;
    assert.equal(deployment?.outcome, 'ADMITTED');
    assert.equal(pod?.expandedFrom, 'Deployment/inference');
    assert.equal(pod?.outcome, 'MUTATED');
    assert.match(pod?.name ?? '', /^inference-[a-z0-9]+-\*$/);
    assert.deepEqual(
      pod?.webhooks.map((webhook) => webhook.name),
      ['mutate-pod', 'mutate-pod-gpu-class', 'validate-pod'],
    );
    // Only the Deployment is to be applied; its pod is the controller's to create.
    assert.deepEqual(
      output.items.map((item) => item.kind),
      ['Deployment'],
    );
  });

  it('prints the admitted objects, mutated, as a List with the report; denied ones are left out', async () => {
    const { code, stdout } = await admit([
      '-f',
      fixture('gpu-pod.yaml'),
      '-f',
      fixture('quota.yaml'),
      ...STATE,
      '-o',
      'yaml',
    ]);
    assert.equal(code, 1);
    const output = parse(stdout) as Report & { kind: string };
    assert.equal(output.kind, 'List');
    assert.deepEqual(
      output.items.map((item) => item.metadata.name),
      ['trainer', 'fits'],
    );
    assert.deepEqual(output.items[0]?.spec?.nodeSelector, { 'gpu.nvidia.com/class': 'h200' });
    assert.deepEqual(
      output.report.map((entry) => entry.outcome),
      ['MUTATED', 'ADMITTED', 'DENIED'],
    );
    assert.equal(output.report[2]?.denial?.webhook, 'validate-pod');
  });

  it('judges an UPDATE against the old object given with --old', async () => {
    const pod = (qos: string): string =>
      `apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team-a, labels: {koordinator.sh/qosClass: ${qos}}}\nspec: {containers: [{name: c, image: i}]}\n`;
    const dir = await temporaryDirectory('admit-old-');
    await writeFile(join(dir, 'old.yaml'), pod('LS'));
    const { code, stdout } = await admit(
      ['-f', '-', '--operation', 'UPDATE', '--old', join(dir, 'old.yaml')],
      pod('BE'),
    );
    assert.equal(code, 1);
    assert.match(stdout, /denied by validate-pod/);
    assert.match(stdout, /koordinator\.sh\/qosClass/);
  });

  it('exits 2 naming the file and document of bad input', async () => {
    const notYaml = await admit(['-f', fixture('not-yaml.yaml')]);
    assert.equal(notYaml.code, 2);
    assert.match(notYaml.stderr, /not-yaml\.yaml#1: not valid YAML/);
    assert.equal(notYaml.stdout, '');

    const unknown = await admit(['-f', fixture('unknown-kind.yaml')]);
    assert.equal(unknown.code, 2);
    assert.match(
      unknown.stderr,
      /unknown-kind\.yaml#1: unknown kind "ModelBoster" in API group "workload\.serving\.volcano\.sh"/,
    );

    const missing = await admit(['-f', fixture('absent.yaml')]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /absent\.yaml: cannot be read: ENOENT/);

    const noOld = await admit([
      '-f',
      fixture('gpu-pod.yaml'),
      '--operation',
      'UPDATE',
      '--old',
      fixture('quota.yaml'),
    ]);
    assert.equal(noOld.code, 2);
    assert.match(noOld.stderr, /gpu-pod\.yaml#0: no old object for Pod team-a\/trainer in --old/);
  });

  it('exits 2 on usage errors, with the usage', async () => {
    for (const args of [
      [],
      ['-f', 'x', '-o', 'table'],
      ['-f', 'x', '--operation', 'PATCH'],
      ['-f', 'x', '--bogus'],
    ]) {
      const { code, stderr } = await admit(args);
      assert.equal(code, 2, args.join(' '));
      assert.match(stderr, /Usage: admission-operator admit/);
    }
    const gates = await admit(['-f', 'x', '--feature-gates', 'Nope=true']);
    assert.equal(gates.code, 2);
    assert.match(gates.stderr, /unknown gate "Nope"/);
  });

  it('leaves a gated-off webhook out, as the operator does', async () => {
    const { code, stdout } = await admit([
      '-f',
      fixture('bad-modelbooster.yaml'),
      '--feature-gates',
      'ModelBoosterValidatingWebhook=false',
    ]);
    assert.equal(code, 0);
    assert.match(stdout, /webhooks: mutate-modelbooster: (allowed|patched)$/m);
  });

  it('warns about state it cannot use', async () => {
    const { stderr } = await admit(['-f', fixture('gpu-pod.yaml'), '--state', fixture('deployment.yaml')]);
    assert.match(
      stderr,
      /deployment\.yaml#0: Deployment inference ignored: the rules read no state of this kind/,
    );
  });

  describe('enforcement', () => {
    const QUOTA = ['-f', fixture('quota.yaml'), ...STATE];
    const REFUSAL = /validate-pod would refuse this \(enforcement warn\): .*exceeded quota: default\/team-a/;

    it('--enforcement validate-pod=warn turns a DENIED into a WARN and exits 0', async () => {
      const denied = await admit(QUOTA);
      assert.equal(denied.code, 1);
      assert.match(denied.stdout, /^DENIED {3}Pod team-a\/too-big/m);

      const { code, stdout, stderr } = await admit([...QUOTA, '--enforcement', 'validate-pod=warn']);
      assert.equal(code, 0);
      assert.match(stdout, /^WARN {5}Pod team-a\/too-big/m);
      assert.match(stdout, /webhooks: mutate-pod: allowed, validate-pod: would deny \(warn\)$/m);
      assert.match(stdout, REFUSAL);
      assert.match(
        stdout,
        /2 objects: 2 admitted, 0 denied; 1 admitted only by their webhooks' enforcement \(WARN\)/,
      );
      assert.match(stderr, /admit: enforcement \*=deny,validate-pod=warn \(from --enforcement\)/);
    });

    it('reports WARN in the machine output, with the object among those applied', async () => {
      const { code, stdout } = await admit([...QUOTA, '--enforcement', '*=warn', '-o', 'json']);
      assert.equal(code, 0);
      const list = JSON.parse(stdout) as Report;
      assert.deepEqual(
        list.items.map((item) => item.metadata.name),
        ['fits', 'too-big'],
      );
      const warned = list.report.find((entry) => entry.name === 'too-big');
      assert.equal(warned?.outcome, 'WARN');
      const call = warned?.webhooks.find((webhook) => webhook.name === 'validate-pod');
      assert.equal(call?.enforcement, 'warn');
      assert.match(call?.wouldRefuse ?? '', /exceeded quota: default\/team-a/);
    });

    it('exits --warn-exit-code on a WARN, and 1 still when something is denied', async () => {
      assert.equal(
        (await admit([...QUOTA, '--enforcement', 'validate-pod=warn', '--warn-exit-code', '3'])).code,
        3,
      );
      assert.equal((await admit([...QUOTA, '--warn-exit-code', '3'])).code, 1);
      assert.equal((await admit(['-f', fixture('gpu-pod.yaml'), ...STATE, '--warn-exit-code', '3'])).code, 0);
    });

    it('under dryrun neither refuses nor patches, and says what it would have done', async () => {
      const refused = await admit([...QUOTA, '--enforcement', 'validate-pod=dryrun']);
      assert.equal(refused.code, 0);
      assert.match(refused.stdout, /^WARN {5}Pod team-a\/too-big/m);
      assert.match(refused.stdout, /dryrun \(validate-pod\): would refuse: .*exceeded quota/);

      const { code, stdout } = await admit([
        '-f',
        fixture('gpu-pod.yaml'),
        ...STATE,
        '--enforcement',
        'mutate-pod-gpu-class=dryrun',
      ]);
      assert.equal(code, 0);
      assert.match(stdout, /^ADMITTED Pod team-a\/trainer/m);
      assert.match(stdout, /dryrun \(mutate-pod-gpu-class\): would change: add \/spec\/nodeSelector/);
      assert.doesNotMatch(stdout, /\+ spec\.nodeSelector/);
    });

    it('takes the operator ConfigMap’s enforcement from the state, as the operator does; --enforcement wins', async () => {
      const dir = await temporaryDirectory('admit-enforcement-');
      const config = join(dir, 'operator-config.yaml');
      await writeFile(
        config,
        [
          'apiVersion: v1',
          'kind: ConfigMap',
          'metadata: {name: admission-operator, namespace: admission-system}',
          'data: {enforcement: "validate-pod=warn"}',
          '',
        ].join('\n'),
      );
      const fromState = await admit([...QUOTA, '--state', config]);
      assert.equal(fromState.code, 0);
      assert.match(fromState.stdout, REFUSAL);
      assert.match(
        fromState.stderr,
        /enforcement \*=deny,validate-pod=warn \(from ConfigMap admission-system\/admission-operator data\.enforcement\)/,
      );
      const explicit = await admit([...QUOTA, '--state', config, '--enforcement', '*=deny']);
      assert.equal(explicit.code, 1);
    });

    it('without the ConfigMap, reads ADMISSION_ENFORCEMENT as the operator reads its flag', async () => {
      const { code, stderr } = await admit(QUOTA, '', { ADMISSION_ENFORCEMENT: 'validate-pod=warn' });
      assert.equal(code, 0);
      assert.match(stderr, /\(from ADMISSION_ENFORCEMENT\)/);
    });

    it('validate-pod/colocation=warn softens the QoS checks alone, as Koordinator v1.7.0 never enforces them', async () => {
      const bePod =
        'apiVersion: v1\nkind: Pod\nmetadata: {name: be, namespace: team-a, labels: {koordinator.sh/qosClass: BE}}\nspec: {containers: [{name: c, image: i}]}\n';
      const denied = await admit(['-f', '-'], bePod);
      assert.equal(denied.code, 1);
      assert.match(
        denied.stdout,
        /denied by validate-pod\/colocation \(400\): Pod: Forbidden: koordinator\.sh\/qosClass=BE/,
      );
      const warned = await admit(['-f', '-', '--enforcement', 'validate-pod/colocation=warn'], bePod);
      assert.equal(warned.code, 0);
      assert.match(warned.stdout, /^WARN {5}Pod team-a\/be/m);
      assert.match(
        warned.stdout,
        /validate-pod\/colocation would refuse this \(enforcement warn\): Pod: Forbidden/,
      );
      // The quota checks after it still refuse.
      const quota = await admit([...QUOTA, '--enforcement', 'validate-pod/colocation=warn']);
      assert.equal(quota.code, 1);
      assert.match(quota.stdout, /exceeded quota: default\/team-a/);
    });

    it('exits 2 naming what is wrong with --enforcement or --warn-exit-code', async () => {
      const unknown = await admit([...QUOTA, '--enforcement', 'validate-nothing=warn']);
      assert.equal(unknown.code, 2);
      assert.match(unknown.stderr, /--enforcement: unknown webhook "validate-nothing"; known: /);
      const action = await admit([...QUOTA, '--enforcement', 'validate-pod=audit']);
      assert.equal(action.code, 2);
      assert.match(action.stderr, /--enforcement\.validate-pod: action must be one of deny, warn, dryrun/);
      for (const bad of ['x', '-1', '256']) {
        const code = await admit([...QUOTA, `--warn-exit-code=${bad}`]);
        assert.equal(code.code, 2, bad);
        assert.match(code.stderr, /--warn-exit-code: must be an exit code from 0 to 255/);
      }
    });
  });
});
