import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admissionResponse, serializeReview, warningText } from '../../../../webhook/admission/response.js';
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

describe('warnings', () => {
  // The API server drops, without a word, a warning holding a control character (Go's
  // unicode.IsControl); Kthena's refusals are multi-line, so ours in warn said nothing.
  const goIsControl = (char: string): boolean => {
    const code = char.codePointAt(0) ?? 0;
    return code < 0x20 || (code >= 0x7f && code < 0xa0);
  };

  it('carry no control character, a line break and its indent becoming one space', () => {
    const message =
      "validate-modelbooster would refuse this (enforcement warn): validation failed:\n  - spec.backend.workers: Invalid value: 2: If backend type is 'vLLM', there must be exactly one worker";
    const review = admissionResponse(request, {
      allowed: true,
      warnings: [message, 'a\tb\r\nc\u0085d\u007fe'],
    });
    const warnings = review.response.warnings ?? [];
    assert.deepEqual(warnings, [
      "validate-modelbooster would refuse this (enforcement warn): validation failed: - spec.backend.workers: Invalid value: 2: If backend type is 'vLLM', there must be exactly one worker",
      'a b c d e',
    ]);
    for (const warning of warnings) assert.ok(![...warning].some(goIsControl), JSON.stringify(warning));
  });

  it('keep printable text as it is, quotes and non-ASCII letters included', () => {
    assert.equal(warningText('quota "team-a" · é 名'), 'quota "team-a" · é 名');
  });
});
