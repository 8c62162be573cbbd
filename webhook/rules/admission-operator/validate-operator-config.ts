/**
 * /validate-configmap for the operator's own ConfigMap: its `enforcement` key must read as the
 * --enforcement flag does, naming webhooks that exist, so a typo is refused at `kubectl apply`
 * instead of being ignored at run time. Keys it does not know are refused too: a misspelt key
 * would otherwise silently leave the flag in force. Deleting it is allowed (the flag applies).
 */
import type { Decision, JsonValue } from '../../admission/types.js';
import { readEnforcement } from '../../enforcement/enforcement.js';
import { ENFORCEMENT_KEY, OPERATOR_CONFIG_NAME } from '../../names.js';
import type { Rule } from '../../state.js';
import { showValue } from '../../util/bounded-text.js';
import { decisionOf, headed, INVALID, findings, PASSED, type Findings } from '../shared/findings.js';
import { atField, FieldPath, type FieldError } from '../shared/field-errors.js';

const KNOWN_KEYS: readonly string[] = [ENFORCEMENT_KEY];
const MAX_PROBLEMS = 20;
const DATA = FieldPath.of('data');

/** Every problem with the ConfigMap's `data`, at most MAX_PROBLEMS of them. */
function checkOperatorConfig(data: JsonValue | undefined, webhookNames: readonly string[]): Findings {
  if (data !== undefined && data !== null && (typeof data !== 'object' || Array.isArray(data))) {
    return findings([atField(DATA, 'must be a map of strings')]);
  }
  const errors: FieldError[] = [];
  for (const [key, value] of Object.entries(data ?? {})) {
    if (errors.length >= MAX_PROBLEMS) break;
    // An unknown key is the user's text: quoted and cut, where a known one prints as it is.
    if (!KNOWN_KEYS.includes(key)) {
      errors.push(atField(DATA.key(showValue(key)), `unknown key; known: ${KNOWN_KEYS.join(', ')}`));
    } else if (typeof value !== 'string') {
      errors.push(atField(DATA.child(key), 'must be a string'));
    } else {
      // The reader names the entry's path below the key (`data.enforcement.<webhook>`).
      const read = readEnforcement(value, webhookNames, DATA.child(key));
      if (!read.ok) errors.push(...read.error);
    }
  }
  return findings(errors.slice(0, MAX_PROBLEMS));
}

export function operatorConfigValidator(webhookNames: () => readonly string[]): Rule {
  return (request): Decision => {
    const object = request.object;
    if (request.operation === 'DELETE' || !object) return decisionOf(PASSED);
    const render = headed(
      `ConfigMap ${request.namespace ?? ''}/${OPERATOR_CONFIG_NAME} is not a valid operator configuration`,
    );
    return decisionOf(checkOperatorConfig(object.data, webhookNames()), render, INVALID);
  };
}
