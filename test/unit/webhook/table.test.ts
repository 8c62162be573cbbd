import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FEATURE_GATE_DEFAULTS, parseFeatureGates } from '../../../webhook/feature-gates.js';
import { enabledWebhooks, webhookTable, type TableContext } from '../../../webhook/table.js';

const context: TableContext = {
  namespace: 'admission-system',
  excludedNamespaces: ['extra'],
  tierLabelKey: 'tenant.kubenexus.io/tier',
  gpuResourceNames: ['nvidia.com/gpu'],
  configMaps: [{ namespace: 'admission-system', name: 'gpu-tier-mapping' }],
  koordinatorNamespace: 'koordinator-system',
  gates: parseFeatureGates(''),
};

describe('webhook table', () => {
  const table = webhookTable(context);

  it('serves the paths the seeds fix, each once', () => {
    const paths = table.map((entry) => entry.path);
    assert.equal(new Set(paths).size, paths.length);
    for (const path of [
      '/mutate-pod',
      '/mutate-node-status',
      '/mutate-scheduling-sigs-k8s-io-v1alpha1-elasticquota',
      '/mutate-reservation',
      '/validate-pod',
      '/validate-node',
      '/validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota',
      '/validate-configmap',
      '/mutate-pod-gpu-class',
      '/mutate/modelbooster',
      '/validate/modelbooster',
      '/mutate/autoscalingpolicy',
      '/validate/autoscalingpolicy',
      '/validate-workload-ai-v1alpha1-modelserving',
      '/validate/modelroute',
      '/validate/modelserver',
    ]) {
      assert.ok(paths.includes(path), `missing ${path}`);
    }
  });

  it("keeps the seeds' failure policies and operations", () => {
    const byPath = new Map(table.map((entry) => [entry.path, entry]));
    assert.equal(byPath.get('/mutate-node-status')?.failurePolicy, 'Ignore');
    assert.deepEqual(byPath.get('/mutate-node-status')?.resourceRules[0]?.resources, ['nodes/status']);
    assert.equal(byPath.get('/validate-node')?.failurePolicy, 'Ignore');
    assert.deepEqual(
      byPath.get('/validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota')?.resourceRules[0]?.operations,
      ['CREATE', 'UPDATE', 'DELETE'],
    );
    assert.deepEqual(byPath.get('/mutate-reservation')?.resourceRules[0]?.operations, ['CREATE']);
    const resize = byPath.get('/validate-pod-resize');
    assert.equal(resize?.failurePolicy, 'Fail');
    assert.deepEqual(resize?.resourceRules, [
      {
        apiGroups: [''],
        apiVersions: ['v1'],
        resources: ['pods/resize'],
        operations: ['UPDATE'],
        scope: 'Namespaced',
      },
    ]);
    const gpu = byPath.get('/mutate-pod-gpu-class');
    assert.equal(gpu?.failurePolicy, 'Ignore');
    assert.equal(gpu?.timeoutSeconds, 5);
    assert.deepEqual(gpu?.namespaceSelector, {
      matchExpressions: [{ key: 'tenant.kubenexus.io/tier', operator: 'Exists' }],
    });
    assert.match(gpu?.matchConditions[0]?.expression ?? '', /nvidia\.com\/gpu/);
    for (const entry of table) assert.ok(entry.name.split('.').length >= 3, `${entry.name} is not qualified`);
  });

  it("registers Kthena v1.0.0's webhooks as its charts do: Fail, 30 s, CREATE and UPDATE, mutating ones IfNeeded", () => {
    const kthena: Record<string, [string, string]> = {
      '/mutate/modelbooster': ['workload.serving.volcano.sh', 'modelboosters'],
      '/validate/modelbooster': ['workload.serving.volcano.sh', 'modelboosters'],
      '/mutate/autoscalingpolicy': ['workload.serving.volcano.sh', 'autoscalingpolicies'],
      '/validate/autoscalingpolicy': ['workload.serving.volcano.sh', 'autoscalingpolicies'],
      '/validate-workload-ai-v1alpha1-modelserving': ['workload.serving.volcano.sh', 'modelservings'],
      '/validate/modelroute': ['networking.serving.volcano.sh', 'modelroutes'],
      '/validate/modelserver': ['networking.serving.volcano.sh', 'modelservers'],
    };
    for (const [path, [group, resource]] of Object.entries(kthena)) {
      const entry = table.find((candidate) => candidate.path === path);
      assert.ok(entry, path);
      assert.equal(entry.failurePolicy, 'Fail', path);
      assert.equal(entry.timeoutSeconds, 30, path);
      assert.deepEqual(entry.resourceRules, [
        {
          apiGroups: [group],
          apiVersions: ['v1alpha1'],
          resources: [resource],
          operations: ['CREATE', 'UPDATE'],
          scope: 'Namespaced',
        },
      ]);
      assert.equal(entry.reinvocationPolicy, entry.type === 'mutating' ? 'IfNeeded' : undefined, path);
      assert.equal(entry.type, path.startsWith('/mutate') ? 'mutating' : 'validating', path);
    }
  });

  it('keeps every failurePolicy=Fail webhook away from kube-system and the operator namespace', () => {
    for (const entry of table.filter(
      (e) => e.failurePolicy === 'Fail' && e.resourceRules[0]?.scope === 'Namespaced',
    )) {
      const exclusion = entry.namespaceSelector.matchExpressions?.find(
        (expression) => expression.key === 'kubernetes.io/metadata.name',
      );
      assert.equal(exclusion?.operator, 'NotIn', entry.name);
      assert.ok(exclusion?.values?.includes('kube-system'), entry.name);
      assert.ok(exclusion?.values?.includes('extra'), entry.name);
      if (entry.path !== '/validate-configmap')
        assert.ok(exclusion?.values?.includes('admission-system'), entry.name);
    }
  });

  it("adds the admin's namespace and object selectors to every failurePolicy=Fail webhook on namespaced objects", () => {
    const namespaceSelector = {
      matchLabels: { 'example.com/admission': 'on' },
      matchExpressions: [{ key: 'control-plane', operator: 'DoesNotExist' }],
    };
    const objectSelector = { matchExpressions: [{ key: 'example.com/skip', operator: 'DoesNotExist' }] };
    for (const entry of webhookTable({ ...context, namespaceSelector, objectSelector })) {
      const governed = entry.failurePolicy === 'Fail' && entry.resourceRules[0]?.scope === 'Namespaced';
      assert.equal(
        entry.namespaceSelector.matchLabels?.['example.com/admission'],
        governed ? 'on' : undefined,
      );
      assert.equal(
        entry.namespaceSelector.matchExpressions?.some((e) => e.key === 'control-plane') ?? false,
        governed,
        entry.name,
      );
      assert.deepEqual(entry.objectSelector, governed ? objectSelector : {}, entry.name);
      if (governed) {
        // Beside the exclusions the table always writes, not instead of them.
        assert.ok(
          entry.namespaceSelector.matchExpressions?.some((e) => e.key === 'kubernetes.io/metadata.name'),
        );
      }
    }
  });

  it('gives the pod webhooks a reach, so the operator narrows them', () => {
    const withReach = table.filter((entry) => entry.reach).map((entry) => entry.path);
    assert.deepEqual(withReach.sort(), ['/mutate-pod', '/validate-pod', '/validate-pod-resize']);
  });

  it("narrows the ConfigMap webhook to the operator's own ConfigMaps", () => {
    const configMap = table.find((entry) => entry.path === '/validate-configmap');
    assert.match(configMap?.matchConditions[0]?.expression ?? '', /'gpu-tier-mapping'/);
  });
  it('calls /mutate-pod on UPDATE only for pods that opt in, as Koordinator’s objectSelector does', () => {
    const pod = webhookTable(context).find((entry) => entry.path === '/mutate-pod');
    assert.deepEqual(pod?.resourceRules[0]?.operations, ['CREATE', 'UPDATE']);
    assert.match(pod?.matchConditions[0]?.expression ?? '', /request\.operation == 'CREATE' \|\|/);
    assert.match(
      pod?.matchConditions[0]?.expression ?? '',
      /'pod\.koordinator\.sh\/mutating-update'\] == 'true'/,
    );
  });

  it('drops gated-off webhooks', () => {
    const gates = parseFeatureGates('NodeValidatingWebhook=false,GpuClassMutatingWebhook=false');
    const paths = enabledWebhooks({ ...context, gates }).map((entry) => entry.path);
    assert.ok(!paths.includes('/validate-node'));
    assert.ok(!paths.includes('/mutate-pod-gpu-class'));
    assert.equal(paths.length, table.length - 2);
  });
});

describe('webhook overrides', () => {
  it('change failure policy and timeout, and a webhook turned to Fail gets the namespace exclusions', () => {
    const table = webhookTable({
      ...context,
      overrides: {
        'validate-pod': { failurePolicy: 'Ignore', timeoutSeconds: 3 },
        'mutate-pod-gpu-class': { failurePolicy: 'Fail' },
      },
    });
    const pod = table.find((entry) => entry.path === '/validate-pod');
    assert.equal(pod?.failurePolicy, 'Ignore');
    assert.equal(pod?.timeoutSeconds, 3);
    assert.deepEqual(pod?.namespaceSelector, {});
    const gpu = table.find((entry) => entry.path === '/mutate-pod-gpu-class');
    assert.equal(gpu?.failurePolicy, 'Fail');
    assert.ok(gpu?.namespaceSelector.matchExpressions?.some((e) => e.key === 'kubernetes.io/metadata.name'));
  });

  it('refuse unknown webhook names', () => {
    assert.throws(() => webhookTable({ ...context, overrides: { nope: {} } }), /unknown webhooks: nope/);
  });
});

describe('feature gates', () => {
  it('defaults every gate', () => {
    assert.deepEqual(parseFeatureGates(undefined), FEATURE_GATE_DEFAULTS);
  });
  it('names an unknown gate and a malformed entry', () => {
    assert.throws(() => parseFeatureGates('Nope=true'), /unknown gate "Nope"/);
    assert.throws(
      () => parseFeatureGates('PodMutatingWebhook=yes'),
      /"PodMutatingWebhook=yes" is not of the form/,
    );
  });
  it('take Koordinator’s names of the same webhooks’ gates, as koord-manager’s --feature-gates spells them', () => {
    const gates = parseFeatureGates(
      'ElasticMutatingWebhook=false,ElasticValidatingWebhook=false,NodeMutatingWebhook=false,PodValidatingWebhook=true',
    );
    assert.equal(gates.ElasticQuotaMutatingWebhook, false);
    assert.equal(gates.ElasticQuotaValidatingWebhook, false);
    assert.equal(gates.NodeStatusMutatingWebhook, false);
    assert.equal(gates.PodValidatingWebhook, true);
    const names = enabledWebhooks({ ...context, gates }).map((entry) => entry.name.split('.')[0]);
    assert.ok(names.includes('validate-pod'));
    for (const name of ['mutate-elasticquota', 'validate-elasticquota', 'mutate-node-status']) {
      assert.ok(!names.includes(name), `${name} is gated off by its Koordinator name`);
    }
    // Both names of one gate agreeing is fine; set apart, neither silently wins.
    assert.equal(
      parseFeatureGates('ElasticMutatingWebhook=false,ElasticQuotaMutatingWebhook=false')
        .ElasticQuotaMutatingWebhook,
      false,
    );
    assert.throws(
      () => parseFeatureGates('ElasticMutatingWebhook=false,ElasticQuotaMutatingWebhook=true'),
      /ElasticMutatingWebhook=false and ElasticQuotaMutatingWebhook=true set the same gate \(ElasticQuotaMutatingWebhook\) apart/,
    );
    assert.throws(
      () => parseFeatureGates('WebhookFramework=true'),
      /Koordinator's names ElasticMutatingWebhook/,
    );
  });
});
