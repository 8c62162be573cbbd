/**
 * Which resizes /validate-pod-resize (quota/pod-resize-quota.ts) could refuse or reserve quota
 * for: those of pods a quota governs, and no others (webhook/narrowing/). A pod with the
 * quota-name label (its quota is checked whatever the namespace), and every pod of the namespaces
 * whose own quota (named after them, or binding them) quota admission counts. Nothing when quota
 * admission is off.
 */
import type { ReachState } from '../../../state.js';
import type { Reach } from '../../../narrowing/reach.js';
import { hasLabel } from '../../../narrowing/cel-text.js';
import { QUOTA_LABELS } from '../quota/keys.js';
import type { PodResizeOptions } from '../quota/pod-resize-quota.js';
import { quotaNamespaces } from './validate-pod-reach.js';

export function podResizeReach(options: PodResizeOptions): (state: ReachState) => Reach {
  return (state) => {
    if (!options.quotaAdmission) return { anywhere: [], within: [] };
    const { admitted } = quotaNamespaces(state, true);
    return {
      anywhere: [{ cel: hasLabel(QUOTA_LABELS.name) }],
      within: [{ namespaces: { names: admitted }, terms: [{}] }],
    };
  };
}
