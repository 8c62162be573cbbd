/**
 * /validate/modelserver: Kthena v1.0.0's ModelServer validator (`pkg/kthena-router/webhook/validator.go`)
 * checks nothing: every ModelServer that decodes as Kthena's Go types is admitted, one that does not
 * is refused, as the router's decoding refuses it.
 */
import type { Rule } from '../../../state.js';
import { decisionOf, findings, PASSED } from '../../shared/findings.js';
import { decodeFailedAs } from '../denials.js';
import { decodeModelServer } from '../types/networking.js';

export const validateModelServer: Rule = (request) => {
  if (request.operation === 'DELETE' || !request.object) return decisionOf(PASSED);
  const decoded = decodeModelServer(request.object);
  return decoded.ok ? decisionOf(PASSED) : decisionOf(findings(decoded.error), decodeFailedAs('modelServer'));
};
