/**
 * /validate-configmap: the ConfigMaps whose content rules depend on, each checked by its own
 * rule: the operator's gpu-tier-mapping and its own ConfigMap (enforcement), Koordinator's slo-controller-config and (with its gate)
 * pod-enhanced-validator-config. The webhook's
 * matchConditions already keep every other ConfigMap from calling us; this dispatch is the
 * second line.
 *
 * Each ConfigMap's module reports what its check finds as `Findings` and answers through
 * `decisionOf` with its own heading (and, for the operator's own ConfigMaps, code 422 Invalid).
 */
import {
  GPU_TIER_MAPPING_NAME,
  OPERATOR_CONFIG_NAME,
  POD_ENHANCED_VALIDATOR_CONFIG_NAME,
  SLO_CONFIG_NAME,
} from '../../names.js';
import type { Rule } from '../../state.js';
import { decisionOf, PASSED } from '../shared/findings.js';
import { validateTierMapping } from '../kubenexus/validate-tier-mapping.js';
import { operatorConfigValidator } from './validate-operator-config.js';
import { enhancedValidatorConfigValidator } from '../koordinator/pod/enhanced-validator-config.js';
import { sloConfigValidator } from '../koordinator/slo-config/validate-slo-config.js';

export interface ConfigMapRuleOptions {
  /** The operator's namespace (gpu-tier-mapping). */
  operatorNamespace: string;
  /** Koordinator's namespace (slo-controller-config, pod-enhanced-validator-config). */
  koordinatorNamespace: string;
  maxAmplificationRatio: number;
  /** The webhooks' short names, which the operator ConfigMap's enforcement may name. */
  webhookNames: () => readonly string[];
}

export function configMapValidator(options: ConfigMapRuleOptions): Rule {
  const tierMapping = validateTierMapping(options.operatorNamespace);
  const sloConfig = sloConfigValidator({
    namespace: options.koordinatorNamespace,
    name: SLO_CONFIG_NAME,
    maxAmplificationRatio: options.maxAmplificationRatio,
  });
  const enhancedValidatorConfig = enhancedValidatorConfigValidator(options.koordinatorNamespace);
  const operatorConfig = operatorConfigValidator(options.webhookNames);
  return (request, state) => {
    const object = request.object ?? request.oldObject;
    const name = request.name || (typeof object?.metadata.name === 'string' ? object.metadata.name : '');
    if (request.namespace === options.operatorNamespace && name === GPU_TIER_MAPPING_NAME)
      return tierMapping(request, state);
    if (request.namespace === options.operatorNamespace && name === OPERATOR_CONFIG_NAME)
      return operatorConfig(request, state);
    if (request.namespace === options.koordinatorNamespace && name === SLO_CONFIG_NAME)
      return sloConfig(request, state);
    if (request.namespace === options.koordinatorNamespace && name === POD_ENHANCED_VALIDATOR_CONFIG_NAME)
      return enhancedValidatorConfig(request, state);
    return decisionOf(PASSED);
  };
}
