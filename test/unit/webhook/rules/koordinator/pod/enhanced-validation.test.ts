import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Decision, KubeObject } from '../../../../../../webhook/admission/types.js';
import { podValidator } from '../../../../../../webhook/rules/koordinator/pod/validate-pod.js';
import { admissionRequest } from '../../../../../harness/requests.js';
import { stateSnapshot } from '../../../../../harness/state.js';

const validate = (enhancedValidation = true) =>
  podValidator({
    skipValidatingPriority: false,
    quotaAdmission: false,
    quotaAdmissionOnUpdate: false,
    validateDeviceRequests: false,
    enhancedValidation,
    enhancedValidationNamespace: 'koordinator-system',
  });

function config(data: Record<string, string>) {
  return stateSnapshot({
    configMaps: [
      {
        namespace: 'koordinator-system',
        name: 'pod-enhanced-validator-config',
        uid: 'u',
        resourceVersion: '1',
        data,
      },
    ],
  });
}

const RULES = JSON.stringify([
  { name: 'team-label', requiredLabels: ['team', 'cost-center'], namespaceWhitelist: ['', 'kube-public'] },
  { name: 'owner', requiredLabels: ['owner'] },
]);

function pod(labels: Record<string, string>, namespace = 'apps'): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace, labels },
    spec: { containers: [] },
  };
}

const check = (object: KubeObject, data: Record<string, string>, gate = true): Decision =>
  validate(gate)(
    admissionRequest({
      kind: 'Pod',
      resource: 'pods',
      namespace: object.metadata.namespace as string,
      object,
    }),
    config(data),
  );

describe('/validate-pod enhanced validation', () => {
  it('refuses a pod missing required labels, in Koordinator’s words, naming the rule and the ConfigMap', () => {
    const decision = check(pod({ owner: 'me' }), { enable: ' TRUE ', rules: RULES });
    assert.deepEqual(decision, {
      allowed: false,
      code: 400,
      reason: 'BadRequest',
      message:
        'metadata.labels: required labels are missing: [team cost-center] (rule "team-label" of ConfigMap koordinator-system/pod-enhanced-validator-config)',
    });
    const one = check(pod({ team: 'a', 'cost-center': 'b' }), { enable: 'true', rules: RULES });
    assert.equal(
      one.allowed ? '' : one.message,
      `metadata.labels: required label 'owner' is missing (rule "owner" of ConfigMap koordinator-system/pod-enhanced-validator-config)`,
    );
  });

  it('admits complete pods, whitelisted namespaces, pods that opt out, and everything when disabled or gated off', () => {
    const complete = pod({ team: 'a', 'cost-center': 'b', owner: 'c' });
    assert.equal(check(complete, { enable: 'true', rules: RULES }).allowed, true);
    assert.equal(check(pod({ owner: 'c' }, 'kube-public'), { enable: 'true', rules: RULES }).allowed, true);
    assert.equal(
      check(pod({ 'pod.koordinator.sh/skip-enhanced-validation': 'true' }), { enable: 'true', rules: RULES })
        .allowed,
      true,
    );
    assert.equal(check(pod({}), { enable: 'false', rules: RULES }).allowed, true);
    assert.equal(check(pod({}), {}).allowed, true);
    assert.equal(check(pod({}), { enable: 'true', rules: RULES }, false).allowed, true);
  });

  it('does not enforce rules that do not parse, and says so in a warning', () => {
    const decision = check(pod({}), { enable: 'true', rules: '[{"name": 1}]' });
    assert.equal(decision.allowed, true);
    assert.match(decision.warnings?.[0] ?? '', /pod-enhanced-validator-config data\[rules\]\[0\]: must be/);
    const broken = check(pod({}), { enable: 'true', rules: '{' });
    assert.match(broken.warnings?.[0] ?? '', /data\[rules\]: not valid JSON/);
  });
});
