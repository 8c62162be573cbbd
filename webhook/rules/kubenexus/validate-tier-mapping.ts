/**
 * /validate-configmap for the operator's own `gpu-tier-mapping`: a mapping that would not
 * parse, or that breaks a rule, never gets in while the webhook is up. Deleting it is allowed
 * (the built-in default then applies).
 */
import type { Decision, JsonValue } from '../../admission/types.js';
import { GPU_TIER_MAPPING_NAME } from '../../names.js';
import type { Rule } from '../../state.js';
import { decisionOf, headed, INVALID, findings, PASSED, type Findings } from '../shared/findings.js';
import { atField, FieldPath } from '../shared/field-errors.js';
import { readTierMapping } from './tier-mapping.js';
import { putOwn } from '../../util/own.js';

const DATA = FieldPath.of('data');

/** The problems with a ConfigMap's `data` as a tier mapping (none when it is valid), each at its field. */
function checkTierMapping(data: JsonValue | undefined): Findings {
  if (data !== undefined && data !== null && (typeof data !== 'object' || Array.isArray(data))) {
    return findings([atField(DATA, 'must be a map of strings')]);
  }
  const strings: Record<string, string> = {};
  for (const [key, value] of Object.entries(data ?? {})) {
    if (typeof value !== 'string') return findings([atField(DATA.key(key), 'must be a string')]);
    putOwn(strings, key, value);
  }
  const read = readTierMapping(strings);
  return read.ok ? PASSED : findings(read.error);
}

/** Validates the mapping ConfigMap in `operatorNamespace`; leaves every other ConfigMap alone. */
export function validateTierMapping(operatorNamespace: string): Rule {
  const render = headed(
    `ConfigMap ${operatorNamespace}/${GPU_TIER_MAPPING_NAME} is not a valid GPU tier mapping`,
  );
  return (request): Decision => {
    const object = request.object;
    if (request.operation === 'DELETE' || !object) return decisionOf(PASSED);
    if (request.namespace !== operatorNamespace || object.metadata.name !== GPU_TIER_MAPPING_NAME) {
      return decisionOf(PASSED);
    }
    return decisionOf(checkTierMapping(object.data), render, INVALID);
  };
}
