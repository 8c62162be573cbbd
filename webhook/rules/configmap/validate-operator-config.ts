/**
 * /validate-configmap for the operator's own ConfigMap: its `enforcement` key must read as the
 * --enforcement flag does, naming webhooks that exist, so a typo is refused at `kubectl apply`
 * instead of being ignored at run time. Keys it does not know are refused too: a misspelt key
 * would otherwise silently leave the flag in force. Deleting it is allowed (the flag applies).
 */
import { allow, deny } from '../../admission/decisions.js';
import type { Decision } from '../../admission/types.js';
import { parseEnforcement } from '../../enforcement/enforcement.js';
import { ENFORCEMENT_KEY, OPERATOR_CONFIG_NAME } from '../../names.js';
import type { Rule } from '../../state.js';
import { showValue } from '../../util/bounded-text.js';

const KNOWN_KEYS: readonly string[] = [ENFORCEMENT_KEY];
const MAX_PROBLEMS = 20;

export function operatorConfigValidator(webhookNames: () => readonly string[]): Rule {
  return (request): Decision => {
    const object = request.object;
    if (request.operation === 'DELETE' || !object) return allow();
    const problems: string[] = [];
    const data = object.data;
    if (data !== undefined && data !== null && (typeof data !== 'object' || Array.isArray(data))) {
      problems.push('data: must be a map of strings');
    } else {
      for (const [key, value] of Object.entries(data ?? {})) {
        if (problems.length >= MAX_PROBLEMS) break;
        if (!KNOWN_KEYS.includes(key)) {
          problems.push(`data[${showValue(key)}]: unknown key; known: ${KNOWN_KEYS.join(', ')}`);
        } else if (typeof value !== 'string') {
          problems.push(`data.${key}: must be a string`);
        } else {
          const parsed = parseEnforcement(value, webhookNames(), `data.${key}`);
          if (!parsed.ok) problems.push(...parsed.errors);
        }
      }
    }
    if (problems.length === 0) return allow();
    return deny(
      `ConfigMap ${request.namespace ?? ''}/${OPERATOR_CONFIG_NAME} is not a valid operator configuration:\n${problems
        .slice(0, MAX_PROBLEMS)
        .map((problem) => `  - ${problem}`)
        .join('\n')}`,
      422,
      'Invalid',
    );
  };
}
