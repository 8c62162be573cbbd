/**
 * The cluster the fuzzed server believes in: a few namespaces, a quota tree, a tier mapping,
 * colocation profiles and the operator's ConfigMaps, so valid reviews reach every rule's
 * interesting branches instead of stopping at "not found".
 */
import { parseFeatureGates, FEATURE_GATE_DEFAULTS, type FeatureGate } from '../../webhook/feature-gates.js';
import { readTierMapping } from '../../webhook/rules/kubenexus/tier-mapping.js';
import { quotaView } from '../../webhook/rules/koordinator/quota/quota-view.js';
import { parseQuantity } from '../../webhook/util/quantity.js';
import type { ReachState } from '../../webhook/state.js';
import { enabledWebhooks, type TableContext, type WebhookEntry } from '../../webhook/table.js';
import { stateSnapshot, type StateFixture } from '../harness/state.js';

export const OPERATOR_NAMESPACE = 'admission-system';
export const KOORDINATOR_NAMESPACE = 'koordinator-system';
export const TIER_LABEL = 'tenant.kubenexus.io/tier';
const Q = (key: string): string => `quota.scheduling.koordinator.sh/${key}`;

/**
 * Gates that only skip work stay off (they would hide code from the fuzzer); every gate that
 * adds a webhook or a check is on.
 */
const SKIPPING_GATES: readonly FeatureGate[] = [
  'DisableExtendedResourceSpec',
  'DisableDeviceResourceSpec',
  'ColocationProfileSkipMutatingResources',
  'ColocationProfileSkipValidatingPriority',
];

/** The fuzzed server's gates as the operator's --feature-gates flag takes them. */
export function fuzzFeatureGates(): string {
  return (Object.keys(FEATURE_GATE_DEFAULTS) as FeatureGate[])
    .map((gate) => `${gate}=${SKIPPING_GATES.includes(gate) ? 'false' : 'true'}`)
    .join(',');
}

export function fuzzTableContext(): TableContext {
  const spec = fuzzFeatureGates();
  return {
    namespace: OPERATOR_NAMESPACE,
    excludedNamespaces: [],
    tierLabelKey: TIER_LABEL,
    gpuResourceNames: ['nvidia.com/gpu', 'amd.com/gpu'],
    configMaps: [
      { namespace: OPERATOR_NAMESPACE, name: 'gpu-tier-mapping' },
      { namespace: KOORDINATOR_NAMESPACE, name: 'slo-controller-config' },
      { namespace: KOORDINATOR_NAMESPACE, name: 'pod-enhanced-validator-config' },
    ],
    koordinatorNamespace: KOORDINATOR_NAMESPACE,
    // Profiles always apply: a fuzz case must decide the same way every time it is replayed.
    roll: () => 0,
    gates: parseFeatureGates(spec),
  };
}

export function fuzzWebhooks(): WebhookEntry[] {
  return enabledWebhooks(fuzzTableContext());
}

export const TIER_MAPPING_YAML = [
  'tiers:',
  '  gold: [h100, a100]',
  '  silver: a100',
  '  bronze: l4',
  'workloadOverrides:',
  '  gold:',
  '    inference: [l4]',
].join('\n');

export const SLO_THRESHOLD_CONFIG = JSON.stringify({
  clusterStrategy: { enable: true, memoryEvictThresholdPercent: 70, memoryEvictLowerPercent: 65 },
  nodeStrategies: [
    { name: 'pool-a', nodeSelector: { matchLabels: { pool: 'a' } } },
    { name: 'gpu', nodeSelector: { matchExpressions: [{ key: 'gpu', operator: 'Exists' }] } },
  ],
});

export const ENHANCED_RULES = JSON.stringify([
  { name: 'team-label', requiredLabels: ['team'], namespaceWhitelist: ['', 'kube-public'] },
]);

function quota(
  name: string,
  labels: Record<string, string>,
  max: Record<string, string>,
  annotations: Record<string, string> = {},
): ReturnType<typeof quotaView> {
  return quotaView({
    metadata: { name, namespace: 'quotas', labels, annotations },
    spec: { max, min: { cpu: '1' } },
  });
}

export function fuzzState(): ReachState {
  return stateSnapshot(fuzzStateFixture());
}

/** What fuzzState holds, as views (the fuzz-memory bench writes it into a cluster as objects). */
export function fuzzStateFixture(): StateFixture {
  const mapping = readTierMapping({ 'mapping.yaml': TIER_MAPPING_YAML });
  if (!mapping.ok) throw new Error(`the fuzz tier mapping is invalid: ${mapping.error.join('; ')}`);
  return {
    namespaces: [
      { name: 'team', labels: { [TIER_LABEL]: 'gold', 'enable-koordinator-colocation': 'true', team: 'a' } },
      { name: 'ml', labels: { [TIER_LABEL]: 'silver' } },
      { name: 'default', labels: { 'enable-koordinator-colocation': 'true' } },
      { name: 'plain', labels: {} },
      { name: KOORDINATOR_NAMESPACE, labels: {} },
      { name: OPERATOR_NAMESPACE, labels: {} },
    ],
    configMaps: [
      {
        namespace: KOORDINATOR_NAMESPACE,
        name: 'slo-controller-config',
        uid: 'slo',
        resourceVersion: '1',
        data: { 'resource-threshold-config': SLO_THRESHOLD_CONFIG },
      },
      {
        namespace: KOORDINATOR_NAMESPACE,
        name: 'pod-enhanced-validator-config',
        uid: 'pev',
        resourceVersion: '1',
        data: { enable: 'true', rules: ENHANCED_RULES },
      },
    ],
    elasticQuotas: [
      quota('parent', { [Q('is-parent')]: 'true', [Q('tree-id')]: 't1' }, { cpu: '10', memory: '20Gi' }),
      quota('leaf', { [Q('parent')]: 'parent', [Q('tree-id')]: 't1' }, { cpu: '4', memory: '8Gi' }),
      quota('tight', {}, { cpu: '4' }, { [Q('admission')]: '{"cpu":"2"}' }),
      quota('bound', {}, { cpu: '100', memory: '100Gi' }, { [Q('namespaces')]: '["ml"]' }),
    ],
    quotaUsed: { leaf: { cpu: parseQuantity('3') } },
    quotaPods: { leaf: ['team/old'] },
    gpuTierMapping: mapping.value,
    colocationProfiles: [
      {
        name: 'batch',
        annotations: {},
        spec: {
          selector: { matchLabels: { app: 'web' } },
          labels: { team: 'infra' },
          qosClass: 'BE',
          koordinatorPriority: 7,
          schedulerName: 'koord-scheduler',
          priorityClassName: 'koord-batch',
          patch: { spec: { template: { spec: { tolerations: [{ key: 'batch', operator: 'Exists' }] } } } },
        },
      },
      {
        name: 'colocation',
        annotations: {},
        spec: {
          namespaceSelector: { matchLabels: { 'enable-koordinator-colocation': 'true' } },
          selector: { matchLabels: { 'koordinator-colocation-pod': 'true' } },
          labels: { testLabelA: 'valueA' },
          annotations: { testAnnotationA: 'valueA' },
          schedulerName: 'koordinator-scheduler',
          qosClass: 'BE',
          priorityClassName: 'koordinator-batch',
          koordinatorPriority: 1111,
          patch: { metadata: { labels: { 'test-patch-label': 'patch-a' } } },
        },
      },
    ],
    priorityClasses: [
      { name: 'koordinator-batch', value: 5999 },
      { name: 'koord-batch', value: 5500 },
      { name: 'koord-prod', value: 9500 },
    ],
    nodes: [
      { name: 'n1', labels: { pool: 'a' } },
      { name: 'n2', labels: { gpu: 'true' } },
    ],
    elasticQuotaProfiles: [
      { namespace: 'quotas', name: 'profile-t1', treeId: 't1', nodeSelector: { matchLabels: { pool: 'a' } } },
    ],
    reservations: [{ name: 'r-available', phase: 'Available', nodeName: 'n1' }],
  };
}
