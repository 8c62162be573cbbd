/**
 * The Kubernetes QoS class of a pod (Guaranteed, Burstable, BestEffort), as kubelet's GetPodQOS
 * computes it from cpu and memory: Koordinator derives a default QoS class from it.
 */
import type { JsonObject } from '../../../admission/types.js';
import { asObject } from '../../../util/json.js';
import { podContainers } from '../../shared/pod-containers.js';
import { quantityOf } from '../../../util/quantity.js';
import { failure, success, type Result } from '../../../util/result.js';
import { atField, type FieldError, type FieldPath } from '../../shared/field-errors.js';

export type KubeQoS = 'Guaranteed' | 'Burstable' | 'BestEffort';

const COMPUTE = ['cpu', 'memory'] as const;

/**
 * The amount of `name` in the container's `kind` list; undefined when absent, or when it cannot be
 * read: then `errors` says why (the path is built only then: this runs for every container).
 */
function amount(
  resources: JsonObject | undefined,
  kind: 'limits' | 'requests',
  name: string,
  container: FieldPath,
  errors: FieldError[],
): bigint | undefined {
  const value = asObject(resources?.[kind])?.[name];
  if (value === undefined) return undefined;
  const read = quantityOf(value);
  if (read.ok) return read.value;
  errors.push(atField(container.child('resources', kind).key(name), read.error));
  return undefined;
}

/** The pod's QoS class; an error naming the field for a cpu or memory amount that cannot be read. */
export function kubeQoS(pod: JsonObject): Result<KubeQoS, FieldError> {
  const reported = asObject(pod.status)?.qosClass;
  if (reported === 'Guaranteed' || reported === 'Burstable' || reported === 'BestEffort')
    return success(reported);
  const containers = podContainers(pod);
  let anyResource = false;
  let guaranteed = true;
  for (const { container, path } of containers) {
    const resources = asObject(asObject(container)?.resources);
    for (const name of COMPUTE) {
      const errors: FieldError[] = [];
      const limit = amount(resources, 'limits', name, path, errors);
      // The API server defaults a missing request to the limit before admission.
      const request = amount(resources, 'requests', name, path, errors) ?? limit;
      if (errors[0]) return failure(errors[0]);
      if ((request ?? 0n) > 0n || (limit ?? 0n) > 0n) anyResource = true;
      if (limit === undefined || request !== limit) guaranteed = false;
    }
  }
  if (!anyResource) return success('BestEffort');
  return success(guaranteed ? 'Guaranteed' : 'Burstable');
}
