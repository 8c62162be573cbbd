/**
 * Koordinator's pod_enhanced_validator.go (gate EnablePodEnhancedValidator; docs/rules/validate-pod.md): labels every new or updated pod must carry,
 * as listed in the ConfigMap pod-enhanced-validator-config:
 *
 *   enable: "true"
 *   rules: '[{"name": "team-label", "requiredLabels": ["team"], "namespaceWhitelist": ["kube-system"]}]'
 *
 * Koordinator reloads the ConfigMap every 5 minutes and keeps the previous rules when it does not
 * parse. Rules here are pure, so they read the ConfigMap as the watch last saw it: an edit applies
 * at once. /validate-configmap refuses rules that do not parse; should some get in anyway (written
 * while the operator was down), they are not enforced, with a warning on every pod, rather than
 * replaced by rules the admin may no longer see anywhere.
 */
import type { AdmissionRequest } from '../../../admission/types.js';
import { atField, FieldPath, type FieldError } from '../../shared/field-errors.js';
import { success, type Result } from '../../../util/result.js';
import { findings, PASSED, warnings, type Findings } from '../../shared/findings.js';
import { POD_ENHANCED_VALIDATOR_CONFIG_NAME } from '../../../names.js';
import type { StateSnapshot } from '../../../state.js';
import { labelsOf } from '../../../util/json.js';
import { parseLabelRules, type LabelRule } from './enhanced-validator-config.js';

export const SKIP_ENHANCED_VALIDATION_LABEL = 'pod.koordinator.sh/skip-enhanced-validation';

/** The rules, whether they are on, or why they cannot be read. */
type RulesRead = Result<{ enabled: boolean; rules: readonly LabelRule[] }, FieldError>;

const DISABLED: RulesRead = success({ enabled: false, rules: [] });

/**
 * Every pod create and update reads the rules, so each ConfigMap version is parsed once: the store
 * hands out a new data object whenever the ConfigMap changes.
 */
const parsedRules = new WeakMap<Readonly<Record<string, string>>, RulesRead>();

export function readRules(data: Readonly<Record<string, string>> | undefined): RulesRead {
  if (!data) return DISABLED;
  let read = parsedRules.get(data);
  if (!read) {
    const parsed = data.enable?.trim().toLowerCase() === 'true' ? parseLabelRules(data.rules) : undefined;
    read = !parsed ? DISABLED : parsed.ok ? success({ enabled: true, rules: parsed.value }) : parsed;
    parsedRules.set(data, read);
  }
  return read;
}

/** An error for the first rule the pod breaks, a warning when the rules do not parse. */
export function checkEnhancedValidation(
  request: AdmissionRequest,
  state: StateSnapshot,
  configNamespace: string,
): Findings {
  const pod = request.object;
  if (!pod) return PASSED;
  const source = `ConfigMap ${configNamespace}/${POD_ENHANCED_VALIDATOR_CONFIG_NAME}`;
  const read = readRules(state.configMap(configNamespace, POD_ENHANCED_VALIDATOR_CONFIG_NAME)?.data);
  if (!read.ok) return warnings(`${source} ${read.error.toString()}; its rules are not enforced`);
  const labels = labelsOf(pod);
  if (!read.value.enabled || labels[SKIP_ENHANCED_VALIDATION_LABEL] === 'true') return PASSED;
  const namespace =
    (typeof pod.metadata.namespace === 'string' && pod.metadata.namespace) || request.namespace;
  for (const rule of read.value.rules) {
    if (namespace && rule.namespaceWhitelist.includes(namespace)) continue;
    const missing = rule.requiredLabels.filter((key) => !Object.hasOwn(labels, key));
    if (missing.length === 0) continue;
    // Koordinator's wording (Go's %v of a slice for several), with the rule and its source named.
    const what =
      missing.length === 1
        ? `required label '${missing[0]}' is missing`
        : `required labels are missing: [${missing.join(' ')}]`;
    return findings([
      atField(FieldPath.of('metadata', 'labels'), `${what} (rule ${JSON.stringify(rule.name)} of ${source})`),
    ]);
  }
  return PASSED;
}
