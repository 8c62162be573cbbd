/**
 * The rules of pod-enhanced-validator-config
 * (pod_enhanced_validator.go): what they look like, read from
 * the ConfigMap, and a write-time check so a bad edit is refused with its path rather than
 * leaving the rules unenforced.
 *
 *   enable: "true"
 *   rules: '[{"name": "team-label", "requiredLabels": ["team"], "namespaceWhitelist": ["kube-system"]}]'
 *
 * Upstream sources and every message: docs/rules/validate-pod.md.
 */
import { POD_ENHANCED_VALIDATOR_CONFIG_NAME } from '../../../names.js';
import type { Rule } from '../../../state.js';
import { stringsOf, readJsonText } from '../../../util/json.js';
import { aggregate, decisionOf, findings, PASSED, type Findings } from '../../shared/findings.js';
import { atField, FieldPath, type FieldError } from '../../shared/field-errors.js';
import { failure, success, type Result } from '../../../util/result.js';

export interface LabelRule {
  name: string;
  requiredLabels: string[];
  namespaceWhitelist: string[];
}

const RULES = FieldPath.of('data').key('rules');

const isStrings = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'string');

/** The `rules` key; absent or blank means no rules. */
export function parseLabelRules(text: string | undefined): Result<readonly LabelRule[], FieldError> {
  if (text === undefined || text.trim() === '') return success([]);
  const read = readJsonText(text);
  if (!read.ok) return failure(atField(RULES, 'not valid JSON; must be a JSON array of rules'));
  const parsed = read.value;
  if (!Array.isArray(parsed)) return failure(atField(RULES, 'must be a JSON array of rules'));
  const rules: LabelRule[] = [];
  for (const [index, item] of (parsed as unknown[]).entries()) {
    const rule = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
    const { name = '', requiredLabels = [], namespaceWhitelist = [] } = rule;
    if (typeof name !== 'string' || !isStrings(requiredLabels) || !isStrings(namespaceWhitelist)) {
      return failure(
        atField(
          RULES.index(index),
          'must be {"name": string, "requiredLabels": [string], "namespaceWhitelist": [string]}',
        ),
      );
    }
    rules.push({ name, requiredLabels, namespaceWhitelist });
  }
  return success(rules);
}

/**
 * /validate-configmap for pod-enhanced-validator-config: rules that do not parse are refused,
 * whether or not `enable` is on yet. DELETE is allowed (no rules then apply).
 */
function checkEnhancedValidatorConfig(data: Readonly<Record<string, string>>): Findings {
  const parsed = parseLabelRules(data.rules);
  return parsed.ok ? PASSED : findings([parsed.error]);
}

export function enhancedValidatorConfigValidator(namespace: string): Rule {
  const source = `ConfigMap ${namespace}/${POD_ENHANCED_VALIDATOR_CONFIG_NAME}`;
  const render = (errors: readonly FieldError[]): string => `${source} ${aggregate(errors)}`;
  return (request) => {
    const object = request.object;
    if (request.operation === 'DELETE' || !object) return decisionOf(PASSED);
    return decisionOf(checkEnhancedValidatorConfig(stringsOf(object.data)), render);
  };
}
