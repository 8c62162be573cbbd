/**
 * Kthena's AutoscalingPolicy defaults, the same in the registry webhook and in v1.0.0's
 * `/mutate/autoscalingpolicy` (`pkg/autoscaler/webhook/autoscalingpolicy_mutator.go`).
 *
 * A part is "empty" when it equals Go's zero value of its struct (every pointer field absent,
 * strings "", durations 0); an empty part is replaced whole by Kthena's default, a non-empty one
 * only gets a missing stabilization window. Steps, in Kthena's order:
 * 1. empty behavior: the whole default behavior, and nothing else;
 * 2. empty scaleDown: its default; else a missing scaleDown.stabilizationWindow becomes "5m";
 * 3. empty scaleUp: its default, and nothing else;
 * 4. empty scaleUp.stablePolicy: its default; else a missing stabilizationWindow becomes "0s";
 * 5. empty scaleUp.panicPolicy: its default.
 * The API server applies the CRD's defaults before this runs, so in a cluster a present
 * scaleDown or panicPolicy is never empty.
 */
import { allow, mutate } from '../../../admission/decisions.js';
import type { JsonObject, JsonValue, KubeObject } from '../../../admission/types.js';
import type { Rule } from '../../../state.js';
import type { Result } from '../../../util/result.js';
import type { FieldError } from '../../shared/field-errors.js';
import { decisionOf, findings } from '../../shared/findings.js';
import { decodeFailed } from '../denials.js';
import type { Behavior } from '../types/workload.js';

type StablePolicy = NonNullable<Behavior['scaleDown']>;
type PanicPolicy = NonNullable<NonNullable<Behavior['scaleUp']>['panicPolicy']>;

// Kthena's defaults as its Go structs marshal them (so "1m0s", not "1m"), in Go's field order.
const defaultScaleDown = (): JsonObject => ({
  instances: 0,
  percent: 100,
  period: '1m0s',
  selectPolicy: 'Or',
  stabilizationWindow: '5m0s',
});
const defaultStablePolicy = (): JsonObject => ({
  instances: 4,
  percent: 100,
  period: '1m0s',
  selectPolicy: 'Or',
  stabilizationWindow: '0s',
});
const defaultPanicPolicy = (): JsonObject => ({
  percent: 0,
  period: '0s',
  panicThresholdPercent: 200,
  panicModeHold: '0s',
});
const defaultScaleUp = (): JsonObject => ({
  stablePolicy: defaultStablePolicy(),
  panicPolicy: defaultPanicPolicy(),
});
const defaultBehavior = (): JsonObject => ({ scaleUp: defaultScaleUp(), scaleDown: defaultScaleDown() });

/** Kthena's own literals for a missing window (not the "5m0s" its Go structs would print). */
const DEFAULT_SCALE_DOWN_STABILIZATION_WINDOW = '5m';
const DEFAULT_SCALE_UP_STABILIZATION_WINDOW = '0s';

const isEmptyStablePolicy = (policy: StablePolicy | undefined): boolean =>
  policy === undefined ||
  (policy.instances === undefined &&
    policy.percent === undefined &&
    policy.period === undefined &&
    (policy.selectPolicy ?? '') === '' &&
    policy.stabilizationWindow === undefined);

const isEmptyPanicPolicy = (policy: PanicPolicy | undefined): boolean =>
  policy === undefined ||
  (policy.percent === undefined &&
    // A plain Duration in Go, not a pointer: "0s" is its zero value, as is absent.
    (policy.period?.ms ?? 0) === 0 &&
    policy.panicThresholdPercent === undefined &&
    policy.panicModeHold === undefined);

/** `parent[key]` as an object, first replacing whatever is there that is not one. */
function objectAt(parent: JsonObject, key: string): JsonObject {
  const value: JsonValue | undefined = parent[key];
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value;
  const created: JsonObject = {};
  parent[key] = created;
  return created;
}

/**
 * Applies Kthena's steps to `spec` (the raw copy) as `behavior` (its decoded form) describes it, and
 * returns the paths it set, as Kthena's patch would name them.
 */
function applyDefaults(behavior: Behavior | undefined, spec: JsonObject): string[] {
  const scaleDown = behavior?.scaleDown;
  const scaleUp = behavior?.scaleUp;
  const scaleDownEmpty = isEmptyStablePolicy(scaleDown);
  const stableEmpty = isEmptyStablePolicy(scaleUp?.stablePolicy);
  const panicEmpty = isEmptyPanicPolicy(scaleUp?.panicPolicy);

  if (scaleDownEmpty && stableEmpty && panicEmpty) {
    spec.behavior = defaultBehavior();
    return ['/spec/behavior'];
  }
  const set: string[] = [];
  const rawBehavior = objectAt(spec, 'behavior');
  if (scaleDownEmpty) {
    rawBehavior.scaleDown = defaultScaleDown();
    set.push('/spec/behavior/scaleDown');
  } else if (scaleDown?.stabilizationWindow === undefined) {
    objectAt(rawBehavior, 'scaleDown').stabilizationWindow = DEFAULT_SCALE_DOWN_STABILIZATION_WINDOW;
    set.push('/spec/behavior/scaleDown/stabilizationWindow');
  }
  if (stableEmpty && panicEmpty) {
    rawBehavior.scaleUp = defaultScaleUp();
    return [...set, '/spec/behavior/scaleUp'];
  }
  const rawScaleUp = objectAt(rawBehavior, 'scaleUp');
  if (stableEmpty) {
    rawScaleUp.stablePolicy = defaultStablePolicy();
    set.push('/spec/behavior/scaleUp/stablePolicy');
  } else if (scaleUp?.stablePolicy?.stabilizationWindow === undefined) {
    objectAt(rawScaleUp, 'stablePolicy').stabilizationWindow = DEFAULT_SCALE_UP_STABILIZATION_WINDOW;
    set.push('/spec/behavior/scaleUp/stablePolicy/stabilizationWindow');
  }
  if (panicEmpty) {
    rawScaleUp.panicPolicy = defaultPanicPolicy();
    set.push('/spec/behavior/scaleUp/panicPolicy');
  }
  return set;
}

/** A policy as the rules read it: the behavior is all the defaults look at. */
interface WithBehavior {
  spec?: { behavior?: Behavior };
}

/** The mutating rule for a kind decoded by `decode`. */
export function behaviorDefaulter(decode: (object: KubeObject) => Result<WithBehavior, FieldError[]>): Rule {
  return (request) => {
    if (request.operation === 'DELETE' || !request.object) return allow();
    const decoded = decode(request.object);
    if (!decoded.ok) return decisionOf(findings(decoded.error), decodeFailed);
    const mutated = structuredClone(request.object);
    // Kthena's `add /spec/behavior` would fail to apply to an object without a spec; creating the
    // spec gives the same outcome (the schema then requires spec.metrics) with a clearer message.
    const set = applyDefaults(decoded.value.spec?.behavior, objectAt(mutated, 'spec'));
    // Kthena answers an unchanged policy with the patch `null`; no patch at all is the valid form.
    if (set.length === 0) return allow();
    // `fields` only reaches the decision's log line; `action` is also a metric label.
    return { ...mutate(mutated), audit: { action: 'defaulted', fields: set.join(',') } };
  };
}
