import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AdmissionRequest, KubeObject, Operation } from '../../../../../webhook/admission/types.js';
import { validateTierMapping } from '../../../../../webhook/rules/kubenexus/validate-tier-mapping.js';
import { stateSnapshot } from '../../../../harness/state.js';

const rule = validateTierMapping('admission-system');

function review(
  operation: Operation,
  name: string,
  data: unknown,
  namespace = 'admission-system',
): AdmissionRequest {
  const object = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data } as KubeObject;
  return {
    uid: 'u',
    kind: { group: '', version: 'v1', kind: 'ConfigMap' },
    resource: { group: '', version: 'v1', resource: 'configmaps' },
    namespace,
    operation,
    userInfo: {},
    object: operation === 'DELETE' ? null : object,
    oldObject: operation === 'CREATE' ? null : object,
    dryRun: false,
  };
}

describe('validateTierMapping', () => {
  it('allows a valid mapping on CREATE and UPDATE', () => {
    for (const operation of ['CREATE', 'UPDATE'] as const) {
      const decision = rule(
        review(operation, 'gpu-tier-mapping', { 'mapping.yaml': 'tiers: {gold: h100}' }),
        stateSnapshot(),
      );
      assert.equal(decision.allowed, true);
    }
  });

  it('refuses an invalid one with every problem and its path', () => {
    const decision = rule(
      review('UPDATE', 'gpu-tier-mapping', { 'mapping.yaml': 'tiers:\n  gold: []\n  silver: "a 100"' }),
      stateSnapshot(),
    );
    assert.equal(decision.allowed, false);
    assert.ok(!decision.allowed);
    assert.equal(decision.code, 422);
    assert.equal(
      decision.message,
      [
        'ConfigMap admission-system/gpu-tier-mapping is not a valid GPU tier mapping:',
        '  - data[mapping.yaml].tiers.gold: needs at least one GPU class (a string or a list of strings)',
        `  - data[mapping.yaml].tiers.silver: "a 100" is not a valid label value: must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
      ].join('\n'),
    );
  });

  it('allows DELETE (the default mapping then applies)', () => {
    assert.equal(rule(review('DELETE', 'gpu-tier-mapping', {}), stateSnapshot()).allowed, true);
  });

  it('leaves other ConfigMaps alone', () => {
    assert.equal(rule(review('CREATE', 'other', { x: 'y' }), stateSnapshot()).allowed, true);
    assert.equal(
      rule(review('CREATE', 'gpu-tier-mapping', { x: 'y' }, 'elsewhere'), stateSnapshot()).allowed,
      true,
    );
  });
});
