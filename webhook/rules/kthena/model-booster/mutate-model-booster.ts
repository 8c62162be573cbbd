/**
 * /mutate/modelbooster: Kthena v1.0.0's ModelBooster mutator
 * (`pkg/model-booster-controller/webhook/model_mutator.go`). It defaults nothing (its mutation
 * only logs), so every ModelBooster that decodes is admitted unchanged; one that does not decode as
 * Kthena's Go types is refused, as Kthena's decoding refuses it.
 */
import { allow } from '../../../admission/decisions.js';
import type { Rule } from '../../../state.js';
import { decisionOf, findings } from '../../shared/findings.js';
import { decodeFailed } from '../denials.js';
import { decodeModelBooster } from '../types/workload.js';

export const mutateModelBooster: Rule = (request) => {
  if (request.operation === 'DELETE' || !request.object) return allow();
  const decoded = decodeModelBooster(request.object);
  // Kthena answers the empty patch `[]`; no patch at all says the same.
  return decoded.ok ? allow() : decisionOf(findings(decoded.error), decodeFailed);
};
