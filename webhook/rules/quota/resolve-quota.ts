/**
 * Which quota a pod counts against (Koordinator's GetQuotaName): its quota-name label; else
 * the quota named after its namespace (in that namespace); else the quota whose namespaces
 * annotation binds the namespace; else the default quota.
 */
import type { StateSnapshot } from '../../state.js';
import { DEFAULT_QUOTA, QUOTA_LABELS } from './keys.js';

export function quotaNameOf(
  labels: Readonly<Record<string, string>>,
  namespace: string,
  state: Pick<StateSnapshot, 'elasticQuota' | 'quotaBoundTo'>,
): string {
  const labelled = labels[QUOTA_LABELS.name];
  if (labelled) return labelled;
  const sameName = state.elasticQuota(namespace);
  if (sameName && sameName.namespace === namespace) return sameName.name;
  return state.quotaBoundTo(namespace)?.name ?? DEFAULT_QUOTA;
}
