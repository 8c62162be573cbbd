/**
 * /mutate-registry-volcano-sh-v1alpha1-model: Kthena's Model defaults. Only a model-level
 * autoscaling policy (any object, even `{}`) triggers them: every backend without a
 * scaleToZeroGracePeriod gets `30s`, and a missing costExpansionRatePercent becomes 200. These are
 * exactly the two fields the validator then requires for model-level autoscaling.
 */
import { allow, mutate } from '../../admission/decisions.js';
import type { JsonValue } from '../../admission/types.js';
import type { Rule } from '../../state.js';
import { decisionOf, findings } from '../shared/findings.js';
import { decodeFailed } from './denials.js';
import { decodeModel } from './model-types.js';
import { asObject } from '../../util/json.js';

const DEFAULT_SCALE_TO_ZERO_GRACE_PERIOD = '30s';
const DEFAULT_COST_EXPANSION_RATE_PERCENT = 200;

const absent = (value: JsonValue | undefined): boolean => value === undefined || value === null;

export const mutateModel: Rule = (request) => {
  if (request.operation === 'DELETE' || !request.object) return allow();
  // Kthena decodes before defaulting, so a malformed Model is refused here already.
  const decoded = decodeModel(request.object);
  if (!decoded.ok) return decisionOf(findings(decoded.error), decodeFailed);
  if (decoded.value.spec?.autoscalingPolicy === undefined) return allow();

  const mutated = structuredClone(request.object);
  const spec = asObject(mutated.spec);
  if (!spec) return allow();
  const defaulted: string[] = [];
  const backends = Array.isArray(spec.backends) ? spec.backends : [];
  backends.forEach((element, index) => {
    const backend = asObject(element);
    if (backend && absent(backend.scaleToZeroGracePeriod)) {
      backend.scaleToZeroGracePeriod = DEFAULT_SCALE_TO_ZERO_GRACE_PERIOD;
      defaulted.push(`spec.backends[${index}].scaleToZeroGracePeriod`);
    }
  });
  if (absent(spec.costExpansionRatePercent)) {
    spec.costExpansionRatePercent = DEFAULT_COST_EXPANSION_RATE_PERCENT;
    defaulted.push('spec.costExpansionRatePercent');
  }
  // Kthena answers an unchanged model with the empty patch `[]`; no patch at all says the same.
  if (defaulted.length === 0) return allow();
  // `fields` only reaches the decision's log line; `action` is also a metric label.
  return { ...mutate(mutated), audit: { action: 'defaulted', fields: defaulted.join(',') } };
};
