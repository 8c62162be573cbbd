/**
 * The Kubernetes QoS class of a pod (Guaranteed, Burstable, BestEffort), as kubelet's GetPodQOS
 * computes it from cpu and memory: Koordinator derives a default QoS class from it.
 */
import type { JsonObject } from '../../../admission/types.js';
import { asObject, podContainers } from '../../../util/json.js';
import { quantityAt } from '../../../util/quantity.js';

export type KubeQoS = 'Guaranteed' | 'Burstable' | 'BestEffort';

const COMPUTE = ['cpu', 'memory'] as const;

function amount(list: JsonObject | undefined, name: string, path: string): bigint | undefined {
  const value = list?.[name];
  return value === undefined ? undefined : quantityAt(value, `${path}[${name}]`);
}

/** Throws a QuantityFieldError, naming the field, on a cpu or memory amount that cannot be read. */
export function kubeQoS(pod: JsonObject): KubeQoS {
  const reported = asObject(pod.status)?.qosClass;
  if (reported === 'Guaranteed' || reported === 'Burstable' || reported === 'BestEffort') return reported;
  const containers = podContainers(pod);
  let anyResource = false;
  let guaranteed = true;
  for (const { container, path } of containers) {
    const resources = asObject(asObject(container)?.resources);
    const requests = asObject(resources?.requests);
    const limits = asObject(resources?.limits);
    for (const name of COMPUTE) {
      const limit = amount(limits, name, `${path}.resources.limits`);
      // The API server defaults a missing request to the limit before admission.
      const request = amount(requests, name, `${path}.resources.requests`) ?? limit;
      if ((request ?? 0n) > 0n || (limit ?? 0n) > 0n) anyResource = true;
      if (limit === undefined || request !== limit) guaranteed = false;
    }
  }
  if (!anyResource) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}
