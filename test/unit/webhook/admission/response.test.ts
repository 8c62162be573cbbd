import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admissionResponse, serializeReview } from '../../../../webhook/admission/response.js';
import type { AdmissionRequest, KubeObject } from '../../../../webhook/admission/types.js';

const object: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } };
const request: AdmissionRequest = {
  uid: 'u"1',
  kind: { group: '', version: 'v1', kind: 'Pod' },
  resource: { group: '', version: 'v1', resource: 'pods' },
  operation: 'CREATE',
  userInfo: {},
  object,
  oldObject: null,
  dryRun: false,
};

describe('serializeReview', () => {
  it('writes the same JSON as JSON.stringify, with or without a patch', () => {
    const mutated = { ...object, metadata: { name: 'p', labels: { a: 'é"\\' } } };
    for (const review of [
      admissionResponse(request, { allowed: true, mutated, warnings: ['w"'] }),
      admissionResponse(request, { allowed: true }),
      admissionResponse(request, { allowed: false, code: 403, message: 'no "way"' }),
    ]) {
      assert.deepEqual(JSON.parse(serializeReview(review)), JSON.parse(JSON.stringify(review)));
    }
  });
});
