/**
 * Which quota a pod counts against (Koordinator's GetQuotaName): its quota-name label; else
 * the quota named after its namespace (in that namespace); else the quota whose namespaces
 * annotation binds the namespace; else the default quota.
 */
import type { StateSnapshot } from '../../../state.js';
import { DEFAULT_QUOTA, QUOTA_LABELS } from './keys.js';

type QuotaLookups = Pick<StateSnapshot, 'elasticQuota' | 'quotaBoundTo'>;

export function quotaNameOf(
  labels: Readonly<Record<string, string>>,
  namespace: string,
  state: QuotaLookups,
): string {
  return quotaNameFor(labels[QUOTA_LABELS.name], namespace, state);
}

/** quotaNameOf for a pod known by its quota-name label alone (the store's pod records). */
export function quotaNameFor(quotaLabel: string | undefined, namespace: string, state: QuotaLookups): string {
  if (quotaLabel) return quotaLabel;
  const sameName = state.elasticQuota(namespace);
  if (sameName && sameName.namespace === namespace) return sameName.name;
  return state.quotaBoundTo(namespace)?.name ?? DEFAULT_QUOTA;
}
