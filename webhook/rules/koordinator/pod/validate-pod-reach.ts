/**
 * Which pods /validate-pod (validate-pod.ts) could refuse, warn about or reserve quota for, given
 * the state: the rest are never sent to it (webhook/narrowing/). Step by step, as the chain runs:
 *
 * - colocation: the reserve-pod annotation; a QoS class some check refuses (BE and LSR pairs,
 *   LSR and LSE CPUs); batch resources; on UPDATE a QoS, priority-class or priority label, or
 *   spec.priority, that changed;
 * - quota: a pod with the quota-name label (its quota is checked whatever the namespace); on
 *   UPDATE a changed preemptible or quota-name label; and the namespaces whose own quota (the one
 *   named after them, or binding them) is a parent quota (every operation is refused) or one quota
 *   admission counts (CREATE). Pods resolving to the default quota are never checked, so a default
 *   quota with a max governs nothing here;
 * - device requests (gate ValidatePodDeviceResource): a container asking for a koordinator.sh GPU;
 * - required labels (gate EnablePodEnhancedValidator): the pods each rule of the ConfigMap refuses
 *   (not whitelisted, a required label missing, not skipped); every pod when its rules do not parse
 *   (each gets the warning).
 *
 * A quantity the API server could not decode never reaches a webhook (it refuses the request first),
 * so the refusals over unreadable quantities need no term.
 */
import type { ReachState } from '../../../state.js';
import type { Reach, ReachTerm } from '../../../narrowing/reach.js';
import {
  and,
  anyLabelChanged,
  hasAnnotation,
  hasLabel,
  inList,
  labelIn,
  not,
  or,
  podRequestsAny,
  PRIORITY_CHANGED,
  FALSE,
} from '../../../narrowing/cel-text.js';
import { isNamespaceName } from '../../../util/k8s-names.js';
import { FORBIDDEN_PAIRS, RESERVE_POD_ANNOTATION } from '../colocation/validate-colocation.js';
import { PRIORITY_CLASS_LABEL, PRIORITY_LABEL, QOS_LABEL } from '../colocation/priority-qos.js';
import { BATCH_RESOURCES } from '../colocation/extended-resource-spec.js';
import { DEVICE_RESOURCES } from '../device/device-resource-spec.js';
import { COUNTED } from '../quota/pod-quota.js';
import { DEFAULT_QUOTA, QUOTA_LABELS, ROOT_QUOTA, SYSTEM_QUOTA } from '../quota/keys.js';
import { quotaNameFor } from '../quota/resolve-quota.js';
import { readRules, SKIP_ENHANCED_VALIDATION_LABEL } from './enhanced-validation.js';
import { POD_ENHANCED_VALIDATOR_CONFIG_NAME } from '../../../names.js';
import type { PodValidationOptions } from './validate-pod.js';

/** The QoS classes checkColocation can refuse a pod for: the forbidden pairs', and LSR and LSE (whole CPUs). */
const REFUSABLE_QOS = [...new Set([...Object.keys(FORBIDDEN_PAIRS), 'LSR', 'LSE'])].sort();

/**
 * Colocation checks that read the object alone (CREATE and UPDATE alike), and the device check
 * (containers asking for a koordinator.sh GPU) when it is on: one walk over the pod's requests
 * looks for either (init containers and overhead asking for such a GPU are then sent too), half
 * the condition to plan.
 */
const colocation = (validateDeviceRequests: boolean): string =>
  or([
    hasAnnotation(RESERVE_POD_ANNOTATION),
    labelIn(QOS_LABEL, REFUSABLE_QOS),
    // A validating webhook: every pod it is sent passed validation, so it has containers.
    podRequestsAny(validateDeviceRequests ? [...BATCH_RESOURCES, ...DEVICE_RESOURCES] : BATCH_RESOURCES, {
      guarded: false,
    }),
  ]);

export function podValidatorReach(options: PodValidationOptions): (state: ReachState) => Reach {
  const changed = [QOS_LABEL, PRIORITY_CLASS_LABEL, QUOTA_LABELS.preemptible];
  if (!options.skipValidatingPriority) changed.push(PRIORITY_LABEL);
  if (options.quotaAdmission && options.quotaAdmissionOnUpdate) changed.push(QUOTA_LABELS.name);
  const fixed: ReachTerm[] = [
    { cel: colocation(options.validateDeviceRequests) },
    // Each reads oldObject only behind its own UPDATE test.
    { operations: ['UPDATE'], cel: or([anyLabelChanged(changed), PRIORITY_CHANGED]) },
    { cel: hasLabel(QUOTA_LABELS.name) },
  ];
  return (state) => {
    const { parents, admitted } = quotaNamespaces(state, options.quotaAdmission);
    return {
      anywhere: [...fixed, ...requiredLabelTerms(state, options)],
      within: [
        { namespaces: { names: parents }, terms: [{}] },
        { namespaces: { names: admitted }, terms: [{ operations: ['CREATE'] }] },
      ],
    };
  };
}

/**
 * The namespaces whose pods (without a quota-name label) resolve to a parent quota, and those
 * whose quota admission counts: a quota named after the namespace in it, or one binding it.
 */
export function quotaNamespaces(
  state: ReachState,
  quotaAdmission: boolean,
): { parents: string[]; admitted: string[] } {
  const candidates = new Set<string>();
  for (const quota of state.elasticQuotas()) {
    if (quota.name === quota.namespace) candidates.add(quota.name);
    for (const namespace of quota.namespaces) candidates.add(namespace);
  }
  const parents: string[] = [];
  const admitted: string[] = [];
  for (const namespace of candidates) {
    if (!isNamespaceName(namespace)) continue;
    const name = quotaNameFor(undefined, namespace, state);
    const quota = state.elasticQuota(name);
    if (!quota) continue;
    if (name !== DEFAULT_QUOTA && quota.isParent) parents.push(namespace);
    const special = [DEFAULT_QUOTA, SYSTEM_QUOTA, ROOT_QUOTA, ''].includes(name);
    if (quotaAdmission && !special && Object.keys(quota.max).some((key) => COUNTED.has(key))) {
      admitted.push(namespace);
    }
  }
  return { parents, admitted };
}

/** The pods the rules of pod-enhanced-validator-config refuse (every pod gets a warning when they do not parse). */
function requiredLabelTerms(state: ReachState, options: PodValidationOptions): ReachTerm[] {
  if (!options.enhancedValidation) return [];
  const namespace = options.enhancedValidationNamespace;
  const read = readRules(state.configMap(namespace, POD_ENHANCED_VALIDATOR_CONFIG_NAME)?.data);
  if (!read.ok) return [{}];
  if (!read.value.enabled) return [];
  const skipped = labelIn(SKIP_ENHANCED_VALIDATION_LABEL, ['true']);
  const refusals = read.value.rules.map((rule) => {
    const whitelist = rule.namespaceWhitelist.filter(isNamespaceName);
    const whitelisted = inList('request.namespace', whitelist) ?? FALSE;
    // A key no label can have is always missing; hasLabel says false for it.
    const missing = or(rule.requiredLabels.map((key) => not(hasLabel(key))));
    return and([not(whitelisted), missing]);
  });
  return [{ cel: and([not(skipped), or(refusals)]) }];
}
