/**
 * /validate/autoscalingpolicy: Kthena v1.0.0's AutoscalingPolicy validator
 * (`pkg/autoscaler/webhook/autoscalingpolicy_validator.go`). In Kthena's order: the metrics
 * (positive, finite targets; unique names), exactly one target and its targetRef, metrics required
 * by a homogeneous or heterogeneous target, the disaggregated target's roles and ratio constraint,
 * then the scale-down, scale-up stable and scale-up panic windows (0 to 30 minutes, inclusive).
 * Every error is reported.
 */
import type { Rule } from '../../../state.js';
import { decisionOf, findings, PASSED } from '../../shared/findings.js';
import { type FieldError, FieldPath, invalid, required } from '../../shared/field-errors.js';
import type { GoDuration } from '../../../util/go-decode/scalars.js';
import { decodeFailed, validationFailed } from '../denials.js';
import { marshalledDuration, marshalledString } from '../go-values.js';
import {
  type AutoscalingPolicy,
  type AutoscalingPolicyMetric,
  decodeAutoscalingPolicy,
} from '../types/workload.js';
import { compareQuantities, quantityFloat, quantityText, ZERO_QUANTITY } from './quantities.js';

const SPEC = FieldPath.of('spec');
const MAX_WINDOW_MS = 30 * 60 * 1000;

type Spec = NonNullable<AutoscalingPolicy['spec']>;
type Disaggregated = NonNullable<Spec['disaggregatedTarget']>;
type RoleParam = NonNullable<ReturnType<NonNullable<Disaggregated['roles']>['get']>>;
type TargetRef = NonNullable<Disaggregated['targetRef']>;

/** Positive, finite targets and unique names, for the policy's metrics or a role's. */
function metricListErrors(metrics: readonly AutoscalingPolicyMetric[], path: FieldPath): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  metrics.forEach((metric, index) => {
    const metricPath = path.index(index);
    const target = metric.targetValue ?? ZERO_QUANTITY;
    if (target.sign <= 0 || target.infinite) {
      errors.push(
        invalid(
          metricPath.child('targetValue'),
          // A Quantity is shown as json.Marshal writes it: its canonical text, quoted.
          marshalledString(quantityText(target)),
          'metric target value must be greater than 0 and not equal to infinity',
        ),
      );
    }
    const name = metric.name ?? '';
    if (seen.has(name)) {
      errors.push(invalid(metricPath.child('name'), name, `duplicate metric name ${name} is not allowed`));
    }
    seen.add(name);
  });
  return errors;
}

function targetRefErrors(ref: TargetRef | undefined, path: FieldPath): FieldError[] {
  const errors: FieldError[] = [];
  const kind = ref?.kind ?? '';
  if (kind !== '' && kind !== 'ModelServing') {
    errors.push(invalid(path.child('kind'), kind, `targetRef.kind must be ModelServing, but got ${kind}`));
  }
  const name = ref?.name ?? '';
  if (name === '')
    errors.push(invalid(path.child('name'), name, 'targetRef.name must be set, but got empty'));
  return errors;
}

function targetErrors(spec: Spec | undefined): FieldError[] {
  const homogeneous = spec?.homogeneousTarget;
  const heterogeneous = spec?.heterogeneousTarget;
  const disaggregated = spec?.disaggregatedTarget;
  const count = [homogeneous, heterogeneous, disaggregated].filter((target) => target !== undefined).length;
  if (count !== 1) {
    return [
      invalid(
        SPEC,
        count,
        'exactly one of homogeneousTarget, heterogeneousTarget, or disaggregatedTarget must be set',
      ),
    ];
  }
  if (homogeneous) {
    return targetRefErrors(
      homogeneous.target?.targetRef,
      SPEC.child('homogeneousTarget', 'target', 'targetRef'),
    );
  }
  if (heterogeneous) {
    return (heterogeneous.params ?? []).flatMap((param, index) =>
      targetRefErrors(
        param.target?.targetRef,
        SPEC.child('heterogeneousTarget', 'params').index(index).child('target', 'targetRef'),
      ),
    );
  }
  return targetRefErrors(disaggregated?.targetRef, SPEC.child('disaggregatedTarget', 'targetRef'));
}

const isFixedRole = (role: RoleParam): boolean =>
  (role.maxReplicas ?? 0) > 0 && (role.minReplicas ?? 0) === (role.maxReplicas ?? 0);

/** One role of a disaggregated target (Go's loop body). */
function roleErrors(
  name: string,
  role: RoleParam,
  policyMetrics: readonly AutoscalingPolicyMetric[],
): FieldError[] {
  const rolesPath = SPEC.child('disaggregatedTarget', 'roles');
  if (name === '') {
    return [
      invalid(
        rolesPath,
        name,
        'role name must refer to a ModelServing.spec.template.roles[].name and must not be empty',
      ),
    ];
  }
  const errors: FieldError[] = [];
  const rolePath = rolesPath.key(name);
  const fixed = isFixedRole(role);
  const min = role.minReplicas ?? 0;
  const max = role.maxReplicas ?? 0;
  const metrics = role.metrics ?? [];
  if (min > max)
    errors.push(invalid(rolePath.child('minReplicas'), min, 'minReplicas must be <= maxReplicas'));
  if (!fixed && metrics.length === 0 && policyMetrics.length === 0) {
    errors.push(
      required(
        rolePath.child('metrics'),
        'metrics must be set on every non-fixed role when spec.metrics is empty',
      ),
    );
  }
  const effective = new Set<string>();
  if (metrics.length === 0 && !fixed) for (const metric of policyMetrics) effective.add(metric.name ?? '');
  errors.push(...metricListErrors(metrics, rolePath.child('metrics')));
  for (const metric of metrics) effective.add(metric.name ?? '');
  if (fixed) return errors;
  const sources = role.metricSources ?? new Map<string, unknown>();
  if (sources.size === 0 && effective.size > 0) {
    errors.push(
      invalid(
        rolePath.child('metricSources'),
        sources.size,
        'metricSources must be set on every non-fixed role when metrics are configured',
      ),
    );
    return errors;
  }
  for (const key of sources.keys()) {
    if (!effective.has(key)) {
      errors.push(
        invalid(
          rolePath.child('metricSources').key(key),
          key,
          'metricSources key must match an effective metric name',
        ),
      );
    }
  }
  return errors;
}

function ratioErrors(target: Disaggregated): FieldError[] {
  const constraint = target.ratioConstraint;
  if (constraint === undefined) return [];
  const errors: FieldError[] = [];
  const ratioPath = SPEC.child('disaggregatedTarget', 'ratioConstraint');
  const numeratorRole = constraint.numeratorRole ?? '';
  const denominatorRole = constraint.denominatorRole ?? '';
  const minRatio = constraint.minRatio ?? ZERO_QUANTITY;
  const maxRatio = constraint.maxRatio ?? ZERO_QUANTITY;
  if (numeratorRole === denominatorRole) {
    errors.push(
      invalid(
        ratioPath.child('denominatorRole'),
        denominatorRole,
        'numeratorRole and denominatorRole must differ',
      ),
    );
  }
  const numerator = target.roles?.get(numeratorRole);
  const denominator = target.roles?.get(denominatorRole);
  if (!numerator)
    errors.push(
      invalid(ratioPath.child('numeratorRole'), numeratorRole, 'numeratorRole must exist in roles'),
    );
  if (!denominator) {
    errors.push(
      invalid(ratioPath.child('denominatorRole'), denominatorRole, 'denominatorRole must exist in roles'),
    );
  }
  if (compareQuantities(minRatio, maxRatio) > 0) {
    errors.push(invalid(ratioPath.child('minRatio'), quantityText(minRatio), 'minRatio must be <= maxRatio'));
  }
  if (!numerator || !denominator) return errors;
  const numeratorMin = numerator.minReplicas ?? 0;
  const numeratorMax = numerator.maxReplicas ?? 0;
  const denominatorMin = denominator.minReplicas ?? 0;
  const denominatorMax = denominator.maxReplicas ?? 0;
  if ((numeratorMin === 0) !== (denominatorMin === 0)) {
    errors.push(invalid(ratioPath, 'scale-to-zero bounds', 'ratio roles must be scalable-to-zero together'));
  }
  const low = quantityFloat(minRatio);
  const high = quantityFloat(maxRatio);
  if (!Number.isFinite(low) || !Number.isFinite(high)) {
    errors.push(invalid(ratioPath, 'ratio', 'ratio values must be finite'));
  } else if (low < 0 || high <= 0) {
    errors.push(invalid(ratioPath, 'ratio', 'minRatio must be >= 0 and maxRatio must be > 0'));
  } else {
    if (denominatorMax > 0 && numeratorMin / denominatorMax > high) {
      errors.push(
        invalid(ratioPath, 'bounds', 'ratioConstraint is not achievable within role replica bounds'),
      );
    }
    if (denominatorMin > 0 && numeratorMax / denominatorMin < low) {
      errors.push(
        invalid(ratioPath, 'bounds', 'ratioConstraint is not achievable within role replica bounds'),
      );
    }
  }
  return errors;
}

function disaggregatedErrors(spec: Spec | undefined): FieldError[] {
  const target = spec?.disaggregatedTarget;
  if (target === undefined) return [];
  const policyMetrics = spec?.metrics ?? [];
  // Go ranges over the roles map in random order; here they come in the object's order.
  const errors = [...(target.roles ?? new Map<string, RoleParam>()).entries()].flatMap(([name, role]) =>
    roleErrors(name, role, policyMetrics),
  );
  return [...errors, ...ratioErrors(target)];
}

/** A window outside 0…30 minutes, shown as json.Marshal writes a Duration (`"31m0s"`). */
function windowError(path: FieldPath, window: GoDuration | undefined, detail: string): FieldError[] {
  if (window === undefined || (window.ms >= 0 && window.ms <= MAX_WINDOW_MS)) return [];
  return [invalid(path, marshalledDuration(window.ms), detail)];
}

function behaviorErrors(spec: Spec | undefined): FieldError[] {
  const behavior = spec?.behavior;
  const scaleDown = SPEC.child('behavior', 'scaleDown');
  const stable = SPEC.child('behavior', 'scaleUp', 'stablePolicy');
  const panic = SPEC.child('behavior', 'scaleUp', 'panicPolicy');
  const stablePolicy = behavior?.scaleUp?.stablePolicy;
  const panicPolicy = behavior?.scaleUp?.panicPolicy;
  return [
    ...windowError(
      scaleDown.child('period'),
      behavior?.scaleDown?.period,
      'stable policy period must be between 0 and 30 minutes',
    ),
    ...windowError(
      scaleDown.child('stabilizationWindow'),
      behavior?.scaleDown?.stabilizationWindow,
      'stable policy stabilization window must be between 0 and 30 minutes',
    ),
    ...windowError(
      stable.child('period'),
      stablePolicy?.period,
      'stable policy period must be between 0 and 30 minutes',
    ),
    ...windowError(
      stable.child('stabilizationWindow'),
      stablePolicy?.stabilizationWindow,
      'stable policy stabilization window must be between 0 and 30 minutes',
    ),
    // Not a pointer in Kthena's type: an absent period is a zero Duration, which passes.
    ...windowError(
      panic.child('period'),
      panicPolicy?.period,
      'panic policy period must be between 0 and 30 minutes',
    ),
    ...windowError(
      panic.child('panicModeHold'),
      panicPolicy?.panicModeHold,
      'panic policy panic mode hold must be between 0 and 30 minutes',
    ),
  ];
}

function checkPolicy(policy: AutoscalingPolicy): FieldError[] {
  const spec = policy.spec;
  const metrics = spec?.metrics ?? [];
  const needsMetrics =
    (spec?.homogeneousTarget !== undefined || spec?.heterogeneousTarget !== undefined) &&
    metrics.length === 0;
  return [
    ...metricListErrors(metrics, SPEC.child('metrics')),
    ...targetErrors(spec),
    ...(needsMetrics ? [required(SPEC.child('metrics'), 'at least one metric must be set')] : []),
    ...disaggregatedErrors(spec),
    ...behaviorErrors(spec),
  ];
}

export const validateWorkloadAutoscalingPolicy: Rule = (request) => {
  if (request.operation === 'DELETE' || !request.object) return decisionOf(PASSED);
  const decoded = decodeAutoscalingPolicy(request.object);
  if (!decoded.ok) return decisionOf(findings(decoded.error), decodeFailed);
  return decisionOf(findings(checkPolicy(decoded.value)), validationFailed);
};
