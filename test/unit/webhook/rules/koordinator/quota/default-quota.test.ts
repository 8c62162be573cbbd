import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AdmissionRequest, Decision, KubeObject } from '../../../../../../webhook/admission/types.js';
import { defaultElasticQuota } from '../../../../../../webhook/rules/koordinator/quota/default-quota.js';
import { quotaView } from '../../../../../../webhook/rules/koordinator/quota/quota-view.js';
import { stateSnapshot } from '../../../../../harness/state.js';
import { admissionRequest, ELASTIC_QUOTA } from '../../../../../harness/requests.js';

function quota(
  name: string,
  labels: Record<string, string> = {},
  annotations: Record<string, string> = {},
  max: Record<string, string> | null = { cpu: '10', memory: '20Gi' },
): KubeObject {
  return {
    apiVersion: 'scheduling.sigs.k8s.io/v1alpha1',
    kind: 'ElasticQuota',
    metadata: { name, namespace: 'team', labels, annotations },
    spec: { ...(max ? { max } : {}), min: { cpu: '1' } },
  };
}

function review(object: KubeObject, operation: 'CREATE' | 'UPDATE' = 'CREATE'): AdmissionRequest {
  return admissionRequest({
    ...ELASTIC_QUOTA,
    namespace: 'team',
    operation,
    object,
    oldObject: operation === 'UPDATE' ? object : null,
  });
}

const parentQuota = quotaView(
  quota('parent', {
    'quota.scheduling.koordinator.sh/is-parent': 'true',
    'quota.scheduling.koordinator.sh/tree-id': 't1',
  }),
);
const state = stateSnapshot({ elasticQuotas: [parentQuota] });

function metadataOf(decision: Decision): {
  labels: Record<string, string>;
  annotations: Record<string, string>;
} {
  assert.ok(decision.allowed && decision.mutated, JSON.stringify(decision));
  return decision.mutated.metadata as { labels: Record<string, string>; annotations: Record<string, string> };
}

describe('defaultElasticQuota', () => {
  it('hangs a quota without a parent under the root and defaults the shared weight to max', () => {
    const { labels, annotations } = metadataOf(defaultElasticQuota(review(quota('q')), state));
    assert.equal(labels['quota.scheduling.koordinator.sh/parent'], 'koordinator-root-quota');
    assert.equal(labels['quota.scheduling.koordinator.sh/tree-id'], undefined);
    assert.equal(
      annotations['quota.scheduling.koordinator.sh/shared-weight'],
      '{"cpu":"10","memory":"20Gi"}',
    );
  });

  it("inherits the parent's tree id", () => {
    const decision = defaultElasticQuota(
      review(quota('child', { 'quota.scheduling.koordinator.sh/parent': 'parent' })),
      state,
    );
    assert.equal(metadataOf(decision).labels['quota.scheduling.koordinator.sh/tree-id'], 't1');
  });

  it('keeps an explicit tree id', () => {
    const decision = defaultElasticQuota(
      review(
        quota('child', {
          'quota.scheduling.koordinator.sh/parent': 'parent',
          'quota.scheduling.koordinator.sh/tree-id': 'mine',
        }),
      ),
      state,
    );
    assert.equal(metadataOf(decision).labels['quota.scheduling.koordinator.sh/tree-id'], 'mine');
  });

  it('refuses a child of a parent that does not exist', () => {
    const decision = defaultElasticQuota(
      review(quota('orphan', { 'quota.scheduling.koordinator.sh/parent': 'ghost' })),
      state,
    );
    assert.equal(decision.allowed, false);
    assert.ok(!decision.allowed);
    assert.equal(decision.code, 400);
    assert.equal(
      decision.message,
      'metadata.labels[quota.scheduling.koordinator.sh/parent]: fill quota orphan failed, parent not exist',
    );
  });

  it('aligns an explicit shared weight with max: adds the missing keys, drops the extra ones', () => {
    const decision = defaultElasticQuota(
      review(quota('q', {}, { 'quota.scheduling.koordinator.sh/shared-weight': '{"cpu":"3","gpu":"1"}' })),
      state,
    );
    assert.equal(
      metadataOf(decision).annotations['quota.scheduling.koordinator.sh/shared-weight'],
      '{"cpu":"3","memory":"20Gi"}',
    );
  });

  it('leaves an aligned shared weight as written', () => {
    const written = '{"memory":"1Gi","cpu":"3"}';
    const decision = defaultElasticQuota(
      review(quota('q', {}, { 'quota.scheduling.koordinator.sh/shared-weight': written })),
      state,
    );
    assert.equal(metadataOf(decision).annotations['quota.scheduling.koordinator.sh/shared-weight'], written);
  });

  it('refuses a shared weight that is not a JSON object, naming the annotation', () => {
    const decision = defaultElasticQuota(
      review(quota('q', {}, { 'quota.scheduling.koordinator.sh/shared-weight': '[1' })),
      state,
    );
    assert.ok(!decision.allowed);
    assert.match(
      decision.message,
      /^metadata\.annotations\[quota\.scheduling\.koordinator\.sh\/shared-weight\]: fillDefaultQuotaInfo unmarshal sharedWeight failed:must be a JSON object/,
    );
  });

  it('sets no shared weight when there is no max', () => {
    const { annotations } = metadataOf(defaultElasticQuota(review(quota('q', {}, {}, null)), state));
    assert.equal(annotations['quota.scheduling.koordinator.sh/shared-weight'], undefined);
  });

  it('leaves the root quota and UPDATEs alone', () => {
    assert.deepEqual(defaultElasticQuota(review(quota('koordinator-root-quota')), state), { allowed: true });
    assert.deepEqual(defaultElasticQuota(review(quota('q'), 'UPDATE'), state), { allowed: true });
  });
});
