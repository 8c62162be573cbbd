import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../../../../../webhook/admission/types.js';
import { parseFeatureGates, replaceResourcesCounted } from '../../../../../../webhook/feature-gates.js';
import { checkPodQuota } from '../../../../../../webhook/rules/koordinator/quota/pod-quota.js';
import { podRequests } from '../../../../../../webhook/rules/koordinator/quota/pod-requests.js';
import { quotaView } from '../../../../../../webhook/rules/koordinator/quota/quota-view.js';
import {
  REPLACE_RESOURCES_ANNOTATION,
  transformReplaceResources,
} from '../../../../../../webhook/rules/koordinator/quota/replace-resources.js';
import { parseQuantity } from '../../../../../../webhook/util/quantity.js';
import { stateSnapshot } from '../../../../../harness/state.js';
import { admissionRequest } from '../../../../../harness/requests.js';

function pod(annotation: string, requests: Record<string, string>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'team', annotations: { [REPLACE_RESOURCES_ANNOTATION]: annotation } },
    spec: {
      containers: [{ name: 'c', resources: { requests, limits: requests } }],
      initContainers: [{ name: 'i', resources: { requests: { cpu: '500m' } } }],
      overhead: { cpu: '100m', memory: '64Mi' },
      resources: { requests: { memory: '2Gi' } },
    },
  };
}

describe('the replace-resources transform (Koordinator v1.8.0)', () => {
  it('renames cpu as its milli-value, erases what maps to nothing, in containers, init containers and overhead', () => {
    const transformed = transformReplaceResources(
      pod('cpu:kubernetes.io/batch-cpu, memory: ,bad', { cpu: '1', memory: '1Gi' }),
    );
    const requests = podRequests(transformed);
    assert.equal(requests.get('cpu'), undefined);
    assert.equal(requests.get('kubernetes.io/batch-cpu'), parseQuantity('1100'));
    // Pod-level resources are left as they are.
    assert.equal(requests.get('memory'), parseQuantity('2Gi'));
  });

  it('skips a rename where the list holds its target already, and leaves a pod without the annotation alone', () => {
    const both = transformReplaceResources(
      pod('cpu:kubernetes.io/batch-cpu', { cpu: '1', 'kubernetes.io/batch-cpu': '5' }),
    );
    const container = (both.spec as { containers: { resources: { requests: Record<string, string> } }[] })
      .containers[0];
    assert.deepEqual(container?.resources.requests, { cpu: '1', 'kubernetes.io/batch-cpu': '5' });
    const plain = pod('', { cpu: '1' });
    assert.equal(transformReplaceResources(plain), plain);
  });

  it('counts the transformed pod in quota admission only with both gates on', () => {
    const state = stateSnapshot({
      elasticQuotas: [
        quotaView({ metadata: { name: 'team', namespace: 'team' }, spec: { max: { cpu: '2' }, min: {} } }),
      ],
    });
    const request = admissionRequest({
      kind: 'Pod',
      resource: 'pods',
      namespace: 'team',
      name: 'p',
      operation: 'CREATE',
      object: pod('cpu:kubernetes.io/batch-cpu', { cpu: '3' }),
    });
    const options = { quotaAdmission: true, quotaAdmissionOnUpdate: false };
    assert.equal(checkPodQuota(request, state, options).errors.length, 1);
    assert.equal(checkPodQuota(request, state, { ...options, replaceResources: true }).errors.length, 0);
    const gates = parseFeatureGates(
      'ElasticQuotaEvaluationTransformPod=true,ReplaceResourcesTransformer=true',
    );
    assert.equal(replaceResourcesCounted(gates), true);
    assert.equal(
      replaceResourcesCounted(parseFeatureGates('ElasticQuotaEvaluationTransformPod=true')),
      false,
    );
  });
});
