/**
 * GPU classes through the real API server: kubectl creates GPU pods in tiered namespaces and
 * reads back the class the operator pinned, from the built-in mapping and from an edited
 * gpu-tier-mapping ConfigMap.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { clusterKubeConfig, kubectl, podReadyNamespace, waitFor } from '../harness/cluster.js';
import { freshOperator, httpGet, logsMatching } from '../harness/operator.js';

const TIER_LABEL = 'tenant.kubenexus.io/tier';

function podYaml(
  name: string,
  namespace: string,
  options: { gpu?: boolean; nodeSelector?: string } = {},
): string {
  return [
    'apiVersion: v1',
    'kind: Pod',
    'metadata:',
    `  name: ${name}`,
    `  namespace: ${namespace}`,
    'spec:',
    ...(options.nodeSelector ? ['  nodeSelector:', `    gpu.nvidia.com/class: ${options.nodeSelector}`] : []),
    '  containers:',
    '  - name: main',
    '    image: registry.invalid/cuda:1',
    ...(options.gpu === false
      ? ['    resources:', '      limits:', '        cpu: "1"']
      : ['    resources:', '      limits:', '        nvidia.com/gpu: "1"']),
    '',
  ].join('\n');
}

function mappingYaml(namespace: string, mapping: string): string {
  const indented = mapping
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
  return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gpu-tier-mapping\n  namespace: ${namespace}\ndata:\n  mapping.yaml: |\n${indented}\n`;
}

/** client-node returns class instances; compare their JSON. */
function plain(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value)) as unknown;
}

async function readPod(namespace: string, name: string): Promise<V1Pod> {
  return (await clusterKubeConfig()).makeApiClient(CoreV1Api).readNamespacedPod({ namespace, name });
}

async function labelTier(namespace: string, tier: string): Promise<void> {
  await kubectl(['label', 'namespace', namespace, `${TIER_LABEL}=${tier}`, '--overwrite']);
}

describe('GPU classes', () => {
  it('pins GPU pods to their tier’s class, follows an edited mapping, and refuses an invalid one', async (t) => {
    const { operator, namespace: operatorNamespace } = await freshOperator(t);
    const team = await podReadyNamespace(t, 'tenant');
    await labelTier(team, 'bronze');
    // The namespace label must reach the operator's watch cache before the first pod.
    await waitFor('the operator to see the tier label', async () => {
      const { stdout } = await kubectl(
        ['create', '--dry-run=server', '-o', 'yaml', '-f', '-'],
        podYaml('probe', team),
      );
      return stdout.includes('gpu.nvidia.com/class: l4');
    });

    await kubectl(['create', '-f', '-'], podYaml('first', team));
    assert.deepEqual((await readPod(team, 'first')).spec?.nodeSelector, { 'gpu.nvidia.com/class': 'l4' });

    await kubectl(['create', '-f', '-'], podYaml('own-class', team, { nodeSelector: 'h100' }));
    assert.deepEqual((await readPod(team, 'own-class')).spec?.nodeSelector, {
      'gpu.nvidia.com/class': 'h100',
    });

    await kubectl(['create', '-f', '-'], podYaml('cpu-only', team, { gpu: false }));
    const cpuOnly = await readPod(team, 'cpu-only');
    assert.equal(cpuOnly.spec?.nodeSelector, undefined);
    assert.equal(cpuOnly.spec?.affinity, undefined);

    // Edit the mapping: bronze may now use l4 or a100.
    await kubectl(
      ['apply', '-f', '-'],
      mappingYaml(operatorNamespace, 'tiers:\n  gold: h100\n  silver: a100\n  bronze: [l4, a100]'),
    );
    const edited = Date.now();
    let attempt = 0;
    const second = await waitFor('a pod admitted under the edited mapping', async () => {
      const name = `second-${attempt++}`;
      await kubectl(['create', '-f', '-'], podYaml(name, team));
      const created = await readPod(team, name);
      return created.spec?.affinity ? created : undefined;
    });
    t.diagnostic(`the edited mapping applied to a new pod ${Date.now() - edited} ms after kubectl apply`);
    assert.equal(second.spec?.nodeSelector, undefined);
    assert.deepEqual(
      plain(
        second.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution
          ?.nodeSelectorTerms,
      ),
      [{ matchExpressions: [{ key: 'gpu.nvidia.com/class', operator: 'In', values: ['l4', 'a100'] }] }],
    );

    await assert.rejects(
      kubectl(['apply', '-f', '-'], mappingYaml(operatorNamespace, 'tiers:\n  gold: []\n  Gold: h100')),
      (error: { stderr?: string }) => {
        assert.match(
          error.stderr ?? '',
          /denied the request: ConfigMap .*gpu-tier-mapping is not a valid GPU tier mapping/,
        );
        assert.match(error.stderr ?? '', /data\[mapping\.yaml\]\.tiers\.gold: needs at least one GPU class/);
        assert.match(error.stderr ?? '', /data\[mapping\.yaml\]\.tiers\.Gold: collides with tier "gold"/);
        return true;
      },
    );

    // A list as a key: the YAML library would print a warning to stderr; it is a refusal naming the key.
    await assert.rejects(
      kubectl(
        ['apply', '-f', '-'],
        mappingYaml(operatorNamespace, 'tiers:\n  gold: h100\n  ? [silver, bronze]\n  : a100'),
      ),
      (error: { stderr?: string }) => {
        assert.match(
          error.stderr ?? '',
          /data\[mapping\.yaml\]\.tiers: line 3: a key must be a plain value, not a list or map: "\[silver, bronze\]"/,
        );
        return true;
      },
    );

    const injected = logsMatching(operator, /admission decision/).filter(
      (line) => (line.audit as Record<string, string> | undefined)?.action === 'injected',
    );
    assert.ok(injected.length >= 2);
    assert.deepEqual(operator.stderr, [], 'everything the operator says goes through its JSON log on stdout');
  });

  it('warns about a namespace whose tier is unknown and leaves the pod alone', async (t) => {
    await freshOperator(t);
    const team = await podReadyNamespace(t, 'tenant');
    await labelTier(team, 'platinum');
    const { stderr } = await waitFor('the warning', async () => {
      const result = await kubectl(['create', '--dry-run=server', '-f', '-'], podYaml('probe', team));
      return /Warning: GPU class not set: tier "platinum"/.test(result.stderr) ? result : undefined;
    });
    assert.match(stderr, /is not in the gpu-tier-mapping \(known: gold, silver, bronze\)/);
  });

  it('keeps the last good mapping when an invalid one gets in while its validation is off', async (t) => {
    // With the ConfigMap webhook gated off, nothing stops the bad edit: the operator itself must.
    const { operator, namespace: operatorNamespace } = await freshOperator(t, {
      args: ['--feature-gates=ConfigMapValidatingWebhook=false'],
    });
    const team = await podReadyNamespace(t, 'tenant');
    await labelTier(team, 'silver');
    await kubectl(['apply', '-f', '-'], mappingYaml(operatorNamespace, 'tiers:\n  silver: l4'));
    await waitFor('the good mapping to apply', async () => {
      const { stdout } = await kubectl(
        ['create', '--dry-run=server', '-o', 'yaml', '-f', '-'],
        podYaml('probe', team),
      );
      return stdout.includes('gpu.nvidia.com/class: l4');
    });

    await kubectl(['apply', '-f', '-'], mappingYaml(operatorNamespace, 'tiers:\n  silver: "not a label!"'));
    const event = await waitFor('an InvalidTierMapping Event on the ConfigMap', async () => {
      const { stdout } = await kubectl([
        'get',
        'events',
        '-n',
        operatorNamespace,
        '--field-selector',
        'involvedObject.name=gpu-tier-mapping,reason=InvalidTierMapping',
        '-o',
        'jsonpath={.items[*].message}',
      ]);
      return stdout || undefined;
    });
    assert.match(event, /data\[mapping\.yaml\]\.tiers\.silver: "not a label!" is not a valid label value/);
    const metrics = (await httpGet(operator.metricsPort, '/metrics')).body;
    assert.match(metrics, /^admission_gpu_tier_mapping_valid 0$/m);
    assert.match(metrics, /^admission_gpu_tier_mapping_rejected_total 1$/m);

    await kubectl(['create', '-f', '-'], podYaml('after-bad-edit', team));
    assert.deepEqual((await readPod(team, 'after-bad-edit')).spec?.nodeSelector, {
      'gpu.nvidia.com/class': 'l4',
    });
  });
});
