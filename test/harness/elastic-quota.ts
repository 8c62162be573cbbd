/** ElasticQuota manifests for the integration tests. */

/** An ElasticQuota's YAML: its labels, and min and max as YAML flow maps. */
export function quotaYaml(
  name: string,
  namespace: string,
  labels: Record<string, string>,
  bounds = { min: '{cpu: "1", memory: 1Gi}', max: '{cpu: "4", memory: 8Gi}' },
): string {
  const labelLines = Object.entries(labels).map(([key, value]) => `    ${key}: "${value}"`);
  return [
    'apiVersion: scheduling.sigs.k8s.io/v1alpha1',
    'kind: ElasticQuota',
    'metadata:',
    `  name: ${name}`,
    `  namespace: ${namespace}`,
    ...(labelLines.length > 0 ? ['  labels:', ...labelLines] : []),
    'spec:',
    `  min: ${bounds.min}`,
    `  max: ${bounds.max}`,
    '',
  ].join('\n');
}
