/**
 * What makes a probe pod one both pod webhooks are sent (and leave alone), now that their
 * configurations are narrowed to the pods a rule could act on (docs/design.md, "Blast radius"):
 * a test that creates pods to see our webhooks answer must create pods they are asked about, or
 * it would pass with the operator stopped. /validate-pod is sent pods with a quota-name label (the
 * default quota, which it never checks); /mutate-pod pods with the extended-resource-spec annotation
 * (`{}`, which it leaves as it is). test/unit/webhook/narrowing/governed-pod.test.ts checks both.
 */
const QUOTA_NAME_LABEL = 'quota.scheduling.koordinator.sh/name';
const EXTENDED_RESOURCE_SPEC = 'node.koordinator.sh/extended-resource-spec';

/** Metadata of a pod both pod webhooks are called for and admit unchanged, with `labels` added. */
export function governedMetadata(labels: Record<string, string> = {}): {
  labels: Record<string, string>;
  annotations: Record<string, string>;
} {
  return {
    labels: { [QUOTA_NAME_LABEL]: 'koordinator-default-quota', ...labels },
    annotations: { [EXTENDED_RESOURCE_SPEC]: '{}' },
  };
}
