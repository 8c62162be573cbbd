/**
 * How the side-by-side bench (koord-manager.ts) compares two webhooks' decisions: refusal messages
 * and mutated pods with what varies from run to run taken out, and the paths where two differ.
 */
import type { V1Pod } from '@kubernetes/client-node';

export const QUOTA_LABEL = 'quota.scheduling.koordinator.sh/name';

/** A refusal's message with what varies from run to run (names, quantities) replaced, so two can be compared. */
export function messageShape(message: string, names: Record<string, string>): string {
  let shape = message;
  for (const [name, placeholder] of Object.entries(names))
    if (name !== '') shape = shape.replaceAll(name, placeholder);
  return shape.replace(/(?<![\w-])\d+(\.\d+)?[a-zA-Z]*/g, 'N').slice(0, 300);
}

/**
 * What the webhooks made of a pod: its labels, annotations and spec, less what differs from
 * namespace to namespace (its quota's name, its token volume's generated name).
 */
export function podShape(pod: V1Pod): Record<string, unknown> {
  const text = JSON.stringify({
    labels: { ...pod.metadata?.labels, [QUOTA_LABEL]: '<quota>' },
    annotations: pod.metadata?.annotations ?? {},
    spec: pod.spec ?? {},
  });
  return JSON.parse(text.replace(/kube-api-access-[a-z0-9]+/g, 'kube-api-access-<generated>')) as Record<
    string,
    unknown
  >;
}

/** Paths in `a` and `b` whose values differ (JSON leaves), for the mutation comparison. */
export function differingPaths(a: unknown, b: unknown, path = ''): string[] {
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  const isObject = (value: unknown): value is Record<string, unknown> =>
    typeof value === 'object' && value !== null && !Array.isArray(value);
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((k) => differingPaths(a[k], b[k], path === '' ? k : `${path}.${k}`));
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length)
    return a.flatMap((item, index) => differingPaths(item, b[index], `${path}[${index}]`));
  return [`${path || '(root)'}: ${JSON.stringify(a) ?? 'absent'} → ${JSON.stringify(b) ?? 'absent'}`];
}
