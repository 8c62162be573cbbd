/**
 * Koordinator's QoS and priority classes of a pod: the "raw" values validation reads (from the
 * pod's labels and spec.priority), and the defaults mutation derives from the kube QoS.
 */
import type { JsonObject } from '../../../admission/types.js';
import { asObject, labelsOf } from '../../../util/json.js';
import { success, type Result } from '../../../util/result.js';
import type { FieldError } from '../../shared/field-errors.js';
import { kubeQoS } from './kube-qos.js';

export const QOS_LABEL = 'koordinator.sh/qosClass';
export const PRIORITY_CLASS_LABEL = 'koordinator.sh/priority-class';
export const PRIORITY_LABEL = 'koordinator.sh/priority';

const QOS_CLASSES = ['LSE', 'LSR', 'LS', 'BE', 'SYSTEM'] as const;
export type QoSClass = (typeof QOS_CLASSES)[number] | '';

/** spec.priority ranges of Koordinator's priority classes. */
const PRIORITY_RANGES = [
  { name: 'koord-prod', min: 9000, max: 9999 },
  { name: 'koord-mid', min: 7000, max: 7999 },
  { name: 'koord-batch', min: 5000, max: 5999 },
  { name: 'koord-free', min: 3000, max: 3999 },
] as const;
export type PriorityClass = (typeof PRIORITY_RANGES)[number]['name'] | '';

/** The QoS label when it holds a known class; anything else counts as none. */
export function rawQoS(pod: JsonObject | null): QoSClass {
  const value = labelsOf(pod)[QOS_LABEL];
  return (QOS_CLASSES as readonly string[]).includes(value ?? '') ? (value as QoSClass) : '';
}

/**
 * The priority-class label when present (an unknown value is none, without falling back to
 * spec.priority, as Koordinator does); else the class whose range holds spec.priority.
 */
export function rawPriorityClass(pod: JsonObject | null): PriorityClass {
  const label = labelsOf(pod)[PRIORITY_CLASS_LABEL];
  if (label !== undefined) return PRIORITY_RANGES.find((range) => range.name === label)?.name ?? '';
  const priority = asObject(pod?.spec)?.priority;
  if (typeof priority !== 'number') return '';
  return PRIORITY_RANGES.find((range) => priority >= range.min && priority <= range.max)?.name ?? '';
}

const QOS_OF_KUBE_QOS = { Guaranteed: 'LSR', Burstable: 'LS', BestEffort: 'BE' } as const;

/** The raw QoS, else the one the kube QoS implies (Guaranteed: LSR, Burstable: LS, BestEffort: BE). */
function qosWithDefault(pod: JsonObject): Result<QoSClass, FieldError> {
  const raw = rawQoS(pod);
  if (raw !== '') return success(raw);
  const kube = kubeQoS(pod);
  return kube.ok ? success(QOS_OF_KUBE_QOS[kube.value]) : kube;
}

/** The raw priority class, else the one the QoS implies (BE: koord-batch, every other class: koord-prod). */
export function priorityClassWithDefault(pod: JsonObject): Result<PriorityClass, FieldError> {
  const raw = rawPriorityClass(pod);
  if (raw !== '') return success(raw);
  const qos = qosWithDefault(pod);
  if (!qos.ok) return qos;
  if (qos.value === 'BE') return success('koord-batch');
  return success(qos.value === '' ? '' : 'koord-prod');
}
