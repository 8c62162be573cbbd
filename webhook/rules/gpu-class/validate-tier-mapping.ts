/**
 * /validate-configmap for the operator's own `gpu-tier-mapping`: a mapping that would not
 * parse, or that breaks a rule, never gets in while the webhook is up. Deleting it is allowed
 * (the built-in default then applies).
 */
import { allow, deny } from '../../admission/decisions.js';
import type { Decision, JsonValue } from '../../admission/types.js';
import { GPU_TIER_MAPPING_NAME } from '../../names.js';
import type { Rule } from '../../state.js';
import { parseTierMapping } from './tier-mapping.js';

/** The problems with a ConfigMap's `data` as a tier mapping (none when it is valid). */
function mappingProblems(data: JsonValue | undefined): string[] {
  if (data !== undefined && data !== null && (typeof data !== 'object' || Array.isArray(data))) {
    return ['data: must be a map of strings'];
  }
  const strings: Record<string, string> = {};
  for (const [key, value] of Object.entries(data ?? {})) {
    if (typeof value !== 'string') return [`data[${key}]: must be a string`];
    strings[key] = value;
  }
  const result = parseTierMapping(strings);
  return result.ok ? [] : result.errors;
}

/** Validates the mapping ConfigMap in `operatorNamespace`; leaves every other ConfigMap alone. */
export function validateTierMapping(operatorNamespace: string): Rule {
  return (request): Decision => {
    const object = request.object;
    if (request.operation === 'DELETE' || !object) return allow();
    if (request.namespace !== operatorNamespace || object.metadata.name !== GPU_TIER_MAPPING_NAME) {
      return allow();
    }
    const errors = mappingProblems(object.data);
    if (errors.length === 0) return allow();
    return deny(
      `ConfigMap ${operatorNamespace}/${GPU_TIER_MAPPING_NAME} is not a valid GPU tier mapping:\n${errors.map((e) => `  - ${e}`).join('\n')}`,
      422,
      'Invalid',
    );
  };
}
