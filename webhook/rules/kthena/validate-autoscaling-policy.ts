/**
 * /validate-registry-volcano-sh-v1alpha1-autoscalingpolicy: Kthena's AutoscalingPolicy validator.
 * Metrics first (positive, finite targets; unique names), then the scale-down, scale-up stable and
 * scale-up panic windows (each between 0 and 30 minutes, inclusive). Percentages, instances and
 * the tolerance are left to the CRD schema, as in Kthena.
 */
import { formatGoDuration } from '../../util/go-duration.js';
import type { Rule } from '../../state.js';
import { decisionOf, type Findings, findings, PASSED } from '../shared/findings.js';
import { type FieldError, FieldPath, GoStringer, invalid } from '../shared/field-errors.js';
import { decodeFailed, validationFailed } from './denials.js';
import type { GoDuration } from '../../util/go-decode/scalars.js';
import {
  type AutoscalingPolicy,
  type PanicPolicy,
  type StablePolicy,
  decodeAutoscalingPolicy,
} from './model-types.js';

const MAX_WINDOW_MS = 30 * 60 * 1000;

function metricErrors(policy: AutoscalingPolicy): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  (policy.spec?.metrics ?? []).forEach((metric, index) => {
    const path = FieldPath.of('spec', 'metrics').index(index);
    // An absent target is Go's zero Quantity, "0".
    const target = metric.targetValue ?? { text: '0', sign: 0, infinite: false };
    if (target.sign <= 0 || target.infinite) {
      // Kthena shows a Go struct dump of the Quantity here; its text says the same, readably.
      errors.push(
        invalid(
          path.child('targetValue'),
          target.text,
          'metric target value must be greater than 0 and not equal to infinity',
        ),
      );
    }
    const name = metric.metricName ?? '';
    if (seen.has(name)) {
      errors.push(invalid(path.child('metricName'), name, `duplicate metric name ${name} is not allowed`));
    }
    seen.add(name);
  });
  return errors;
}

/** A window outside 0…30 minutes, shown as Go prints a Duration (unquoted: `-1m0s`). */
function windowError(path: FieldPath, window: GoDuration | undefined, detail: string): FieldError[] {
  if (window === undefined || (window.ms >= 0 && window.ms <= MAX_WINDOW_MS)) return [];
  return [invalid(path, new GoStringer(formatGoDuration(window.ms)), detail)];
}

function stablePolicyErrors(path: FieldPath, policy: StablePolicy | undefined): FieldError[] {
  return [
    ...windowError(
      path.child('period'),
      policy?.period,
      'stable policy period must be between 0 and 30 minutes',
    ),
    ...windowError(
      path.child('stabilizationWindow'),
      policy?.stabilizationWindow,
      'stable policy stabilization window must be between 0 and 30 minutes',
    ),
  ];
}

function panicPolicyErrors(path: FieldPath, policy: PanicPolicy | undefined): FieldError[] {
  return [
    // Not optional in Kthena's type: an absent period is a zero Duration, which passes.
    ...windowError(
      path.child('period'),
      policy?.period ?? { text: '0s', ms: 0 },
      'panic policy period must be between 0 and 30 minutes',
    ),
    ...windowError(
      path.child('panicModeHold'),
      policy?.panicModeHold,
      'panic policy panic mode hold must be between 0 and 30 minutes',
    ),
  ];
}

function checkAutoscalingPolicy(policy: AutoscalingPolicy): Findings {
  const behavior = policy.spec?.behavior;
  const behaviorPath = FieldPath.of('spec', 'behavior');
  return findings([
    ...metricErrors(policy),
    ...stablePolicyErrors(behaviorPath.child('scaleDown'), behavior?.scaleDown),
    ...stablePolicyErrors(behaviorPath.child('scaleUp', 'stablePolicy'), behavior?.scaleUp?.stablePolicy),
    ...panicPolicyErrors(behaviorPath.child('scaleUp', 'panicPolicy'), behavior?.scaleUp?.panicPolicy),
  ]);
}

export const validateAutoscalingPolicy: Rule = (request) => {
  if (request.operation === 'DELETE' || !request.object) return decisionOf(PASSED);
  const decoded = decodeAutoscalingPolicy(request.object);
  if (!decoded.ok) return decisionOf(findings(decoded.error), decodeFailed);
  return decisionOf(checkAutoscalingPolicy(decoded.value), validationFailed);
};
