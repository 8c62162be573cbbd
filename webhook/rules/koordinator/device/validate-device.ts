/**
 * Koordinator's verify_device_resource.go (gate ValidatePodDeviceResource; docs/rules/validate-pod.md): the GPU requests of each container must be
 * consistent: not whole GPUs and shared GPUs at once, whole GPUs as a percentage (≤ 100, or a
 * multiple of 100), and shared GPUs with either a memory amount or a memory ratio that, like the
 * core count, divides evenly among the shares.
 */
import type { AdmissionRequest, JsonValue } from '../../../admission/types.js';
import { asArray, asObject } from '../../../util/json.js';
import { atField, FieldPath, forbidden, invalid, type FieldError } from '../../shared/field-errors.js';
import { findings, PASSED, type Findings } from '../../shared/findings.js';
import { wholeUnits } from './device-resource-spec.js';
import { MAX_SHOWN_VALUE_CHARS, truncate } from '../../../util/bounded-text.js';
import { canonicalQuantity, writtenAs } from '../../../util/quantity.js';

const PATH = FieldPath.of('pod', 'spec', 'containers[*]', 'resources', 'requests');

/**
 * Quantity.Value() and the text as Go prints it (Quantity.String()), for messages (cut to
 * MAX_SHOWN_VALUE_CHARS: a valid quantity can still be long); one that cannot be read is added to
 * `unreadable`, naming the field.
 */
function amount(
  requests: Record<string, JsonValue>,
  name: string,
  path: FieldPath,
  unreadable: FieldError[],
): { units: bigint; text: string } | undefined {
  const value = requests[name];
  const units = wholeUnits(value, path.key(name), unreadable);
  return units === undefined
    ? undefined
    : { units, text: truncate(canonicalQuantity(writtenAs(value)), MAX_SHOWN_VALUE_CHARS) };
}

function checkContainer(
  requests: Record<string, JsonValue>,
  path: FieldPath,
  errors: FieldError[],
  unreadable: FieldError[],
): void {
  const read = (name: string): { units: bigint; text: string } | undefined =>
    amount(requests, name, path, unreadable);
  const gpu = read('koordinator.sh/gpu');
  const shared = read('koordinator.sh/gpu.shared');
  if (gpu && shared) {
    errors.push(forbidden(PATH, 'Forbidden declare GPU and GPU share at same time'));
    return;
  }
  if (gpu) {
    if (gpu.units === 0n) errors.push(invalid(PATH, gpu.text, 'the requested GPU must be greater than zero'));
    else if (gpu.units > 100n && gpu.units % 100n !== 0n) {
      errors.push(invalid(PATH, gpu.text, 'the requested GPU must be percentage of 100'));
    }
  }
  if (!shared) return;
  // As Koordinator: a zero share is one error; the memory checks still run, only the
  // multiple-of-shared checks need a share to divide by.
  if (shared.units === 0n)
    errors.push(invalid(PATH, shared.text, 'the requested GPU must be greater than zero'));
  if ((read('huawei.com/npu-core')?.units ?? 0n) !== 0n) return;
  const memory = read('koordinator.sh/gpu-memory')?.units ?? 0n;
  const ratio = read('koordinator.sh/gpu-memory-ratio');
  const ratioUnits = ratio?.units ?? 0n;
  if (memory === 0n && ratioUnits === 0n)
    errors.push(forbidden(PATH, 'GPU memory and GPU memory ratio all is zero'));
  else if (memory !== 0n && ratioUnits !== 0n) {
    errors.push(forbidden(PATH, 'declare GPU memory and GPU memory ratio at same time'));
  }
  if (shared.units === 0n) return;
  const core = read('koordinator.sh/gpu-core');
  if (core && core.units % shared.units !== 0n) {
    errors.push(invalid(PATH, core.text, 'the requested gpuCore must multiple of shared'));
  }
  if (ratio && ratio.units % shared.units !== 0n) {
    errors.push(invalid(PATH, ratio.text, 'the requested gpuMemoryRatio must multiple of shared'));
  }
}

export function checkDeviceRequests(request: AdmissionRequest): Findings {
  const pod = request.object;
  if (!pod) return PASSED;
  const errors: FieldError[] = [];
  // Only the first quantity that cannot be read is reported, and then nothing else is.
  const unreadable: FieldError[] = [];
  for (const [index, container] of asArray(asObject(pod.spec)?.containers).entries()) {
    const requests = asObject(asObject(asObject(container)?.resources)?.requests);
    const path = FieldPath.of('spec', 'containers').index(index).child('resources', 'requests');
    if (requests) checkContainer(requests, path, errors, unreadable);
  }
  if (unreadable[0]) {
    // A pod already holding such a quantity got in around this webhook; refusing its updates
    // would only block its finalizers and status, not the quantity, which is immutable.
    if (request.operation !== 'CREATE') return PASSED;
    return findings([atField(FieldPath.of('device validation'), unreadable[0].toString())]);
  }
  return findings(errors);
}
