/**
 * /validate-pod's first two steps (Koordinator's verify_annotations.go and
 * cluster_colocation_profile.go; docs/rules/validate-pod.md): the reserve-pod annotation is
 * forbidden; then the colocation checks: QoS class, priority class and sub-priority are
 * immutable; batch resources need QoS BE; some QoS × priority pairs are forbidden; LSR and LSE
 * pods need whole CPUs, all reported together, as Koordinator's aggregate does.
 */
import type { AdmissionRequest } from '../../../admission/types.js';
import {
  atField,
  FieldPath,
  forbidden,
  invalid,
  required,
  type FieldError,
} from '../../shared/field-errors.js';
import { findings, PASSED, type Findings } from '../../shared/findings.js';
import { podRequestsFormatted } from '../quota/pod-requests.js';
import { labelsOf } from '../../../util/json.js';
import { goQuantityString } from '../../../util/quantity.js';
import {
  PRIORITY_LABEL,
  QOS_LABEL,
  rawPriorityClass,
  rawQoS,
  type PriorityClass,
  type QoSClass,
} from './priority-qos.js';

export const RESERVE_POD_ANNOTATION = 'scheduling.koordinator.sh/reserve-pod';

export const FORBIDDEN_PAIRS: Partial<Record<QoSClass, readonly PriorityClass[]>> = {
  BE: ['', 'koord-prod'],
  LSR: ['', 'koord-mid', 'koord-batch', 'koord-free'],
};

const NANOS_PER_CORE = 1_000_000_000n;

export interface ColocationOptions {
  /** Gate ColocationProfileSkipValidatingPriority: the sub-priority label may change on UPDATE. */
  skipValidatingPriority: boolean;
}

/** Koordinator's verify_annotations.go: a pod may not claim to be a reservation's placeholder. */
export function checkReservePod(request: AdmissionRequest): Findings {
  const annotations = request.object?.metadata.annotations;
  if (
    typeof annotations === 'object' &&
    annotations !== null &&
    !Array.isArray(annotations) &&
    RESERVE_POD_ANNOTATION in annotations
  ) {
    return findings([
      forbidden(FieldPath.of('annotations', RESERVE_POD_ANNOTATION), 'cannot set in annotations'),
    ]);
  }
  return PASSED;
}

/**
 * Koordinator's cluster_colocation_profile.go: the QoS and priority checks, which v1.8.0 enforces
 * and v1.7.0 discarded (docs/rules/validate-pod.md, "The colocation step"); /validate-pod
 * enforces them as the step `colocation`, which an admin can set to warn apart from the webhook.
 */
export function checkColocation(request: AdmissionRequest, options: ColocationOptions): Findings {
  const pod = request.object;
  if (!pod) return PASSED;
  const errors: FieldError[] = [];
  const qos = rawQoS(pod);
  const priorityClass = rawPriorityClass(pod);
  if (request.operation === 'UPDATE' && request.oldObject) {
    if (rawQoS(request.oldObject) !== qos)
      errors.push(invalid(FieldPath.of('labels', QOS_LABEL), qos, 'field is immutable'));
    if (rawPriorityClass(request.oldObject) !== priorityClass) {
      errors.push(invalid(FieldPath.of('spec', 'priority'), priorityClass, 'field is immutable'));
    }
    const before = labelsOf(request.oldObject)[PRIORITY_LABEL];
    const after = labelsOf(pod)[PRIORITY_LABEL];
    if (!options.skipValidatingPriority && before !== after) {
      errors.push(invalid(FieldPath.of('labels', PRIORITY_LABEL), after ?? '', 'field is immutable'));
    }
  }

  // On UPDATE an unreadable quantity (immutable, so it got in around this webhook) counts as
  // none: refusing every update would only block the pod's finalizers and status.
  const unreadable: FieldError[] = [];
  // With Go's format of each sum: the whole-CPU message prints the sum as Go's String() does.
  const requests = podRequestsFormatted(pod, request.operation === 'CREATE' ? unreadable : undefined);
  if (unreadable[0])
    return findings([atField(FieldPath.of('colocation validation'), unreadable[0].toString())]);
  const batch =
    (requests.get('kubernetes.io/batch-cpu')?.nanos ?? 0n) !== 0n ||
    (requests.get('kubernetes.io/batch-memory')?.nanos ?? 0n) !== 0n;
  if (batch && qos !== 'BE') {
    errors.push(
      required(
        FieldPath.of('labels', QOS_LABEL),
        'must specify koordinator QoS BE with koordinator colocation resources',
      ),
    );
  }
  if (FORBIDDEN_PAIRS[qos]?.includes(priorityClass)) {
    errors.push(
      forbidden(
        FieldPath.of('Pod'),
        `koordinator.sh/qosClass=${qos} and priorityClass=${priorityClass} cannot be used in combination`,
      ),
    );
  }
  if (qos === 'LSR' || qos === 'LSE') {
    const sum = requests.get('cpu');
    const cpu = sum?.nanos ?? 0n;
    const path = FieldPath.of('pod', 'spec', 'containers[*]', 'resources', 'requests');
    // Koordinator's message says LSR for LSE pods too; kept for users who match on it.
    if (cpu === 0n) errors.push(required(path, 'LSR Pod must declare the requested CPUs'));
    else if (cpu % NANOS_PER_CORE !== 0n) {
      const text = goQuantityString(cpu, sum?.format ?? 'DecimalSI');
      errors.push(invalid(path, text, 'the requested CPUs of LSR Pod must be integer'));
    }
  }
  return findings(errors);
}
