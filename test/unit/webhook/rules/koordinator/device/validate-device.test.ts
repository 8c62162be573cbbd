import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AdmissionRequest, KubeObject } from '../../../../../../webhook/admission/types.js';
import { checkDeviceRequests } from '../../../../../../webhook/rules/koordinator/device/validate-device.js';
import { aggregate } from '../../../../../../webhook/rules/shared/findings.js';
import { podValidator } from '../../../../../../webhook/rules/koordinator/pod/validate-pod.js';
import { stateSnapshot } from '../../../../../harness/state.js';
import { admissionRequest } from '../../../../../harness/requests.js';

function review(...containers: Record<string, string>[]): AdmissionRequest {
  const object = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'team' },
    spec: { containers: containers.map((requests, i) => ({ name: `c${i}`, resources: { requests } })) },
  } as KubeObject;
  return admissionRequest({ kind: 'Pod', resource: 'pods', namespace: 'team', object });
}

const P = 'pod.spec.containers[*].resources.requests';
const message = (requests: Record<string, string>): string | undefined => {
  const found = checkDeviceRequests(review(requests));
  return found.errors.length > 0 ? aggregate(found.errors) : undefined;
};

describe('checkDeviceRequests', () => {
  it('accepts whole-GPU percentages and consistent shares', () => {
    const accepted: Record<string, string>[] = [
      { 'koordinator.sh/gpu': '70' },
      { 'koordinator.sh/gpu': '200' },
      {
        'koordinator.sh/gpu.shared': '2',
        'koordinator.sh/gpu-core': '100',
        'koordinator.sh/gpu-memory-ratio': '100',
      },
      { 'koordinator.sh/gpu.shared': '1', 'koordinator.sh/gpu-memory': '8Gi' },
      { 'koordinator.sh/gpu.shared': '1', 'huawei.com/npu-core': '2' },
    ];
    for (const requests of accepted) {
      assert.equal(message(requests), undefined, JSON.stringify(requests));
    }
  });

  const refused: [Record<string, string>, string][] = [
    [
      { 'koordinator.sh/gpu': '100', 'koordinator.sh/gpu.shared': '1' },
      `${P}: Forbidden: Forbidden declare GPU and GPU share at same time`,
    ],
    [{ 'koordinator.sh/gpu': '0' }, `${P}: Invalid value: "0": the requested GPU must be greater than zero`],
    [
      { 'koordinator.sh/gpu': '150' },
      `${P}: Invalid value: "150": the requested GPU must be percentage of 100`,
    ],
    [
      // As Koordinator v1.7.0 (checked against it by the differential suite): the memory checks
      // still run after a zero share.
      { 'koordinator.sh/gpu.shared': '0' },
      `[${P}: Invalid value: "0": the requested GPU must be greater than zero, ${P}: Forbidden: GPU memory and GPU memory ratio all is zero]`,
    ],
    [
      { 'koordinator.sh/gpu.shared': '0', 'koordinator.sh/gpu-memory-ratio': '50' },
      `${P}: Invalid value: "0": the requested GPU must be greater than zero`,
    ],
    [{ 'koordinator.sh/gpu.shared': '1' }, `${P}: Forbidden: GPU memory and GPU memory ratio all is zero`],
    [
      {
        'koordinator.sh/gpu.shared': '1',
        'koordinator.sh/gpu-memory': '1Gi',
        'koordinator.sh/gpu-memory-ratio': '50',
      },
      `${P}: Forbidden: declare GPU memory and GPU memory ratio at same time`,
    ],
    [
      {
        'koordinator.sh/gpu.shared': '2',
        'koordinator.sh/gpu-core': '75',
        'koordinator.sh/gpu-memory-ratio': '100',
      },
      `${P}: Invalid value: "75": the requested gpuCore must multiple of shared`,
    ],
    [
      { 'koordinator.sh/gpu.shared': '2', 'koordinator.sh/gpu-memory-ratio': '75' },
      `${P}: Invalid value: "75": the requested gpuMemoryRatio must multiple of shared`,
    ],
  ];
  for (const [requests, expected] of refused) {
    it(`refuses ${JSON.stringify(requests)}`, () => {
      assert.equal(message(requests), expected);
    });
  }

  it('runs in /validate-pod only with its gate', () => {
    const bad = review({ 'koordinator.sh/gpu': '150' });
    const options = {
      skipValidatingPriority: false,
      quotaAdmission: true,
      quotaAdmissionOnUpdate: false,
      enhancedValidation: false,
      enhancedValidationNamespace: 'koordinator-system',
    };
    assert.equal(
      podValidator({ ...options, validateDeviceRequests: false })(bad, stateSnapshot()).allowed,
      true,
    );
    assert.equal(
      podValidator({ ...options, validateDeviceRequests: true })(bad, stateSnapshot()).allowed,
      false,
    );
  });
});
