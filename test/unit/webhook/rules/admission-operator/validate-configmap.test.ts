import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Decision } from '../../../../../webhook/admission/types.js';
import { configMapValidator } from '../../../../../webhook/rules/admission-operator/validate-configmap.js';
import { admissionRequest } from '../../../../harness/requests.js';
import { stateSnapshot } from '../../../../harness/state.js';

const validate = configMapValidator({
  operatorNamespace: 'admission-system',
  koordinatorNamespace: 'koordinator-system',
  maxAmplificationRatio: 10,
  webhookNames: () => ['validate-pod', 'mutate-pod'],
});

const write = (namespace: string, name: string, data: Record<string, string>, withName = true): Decision =>
  validate(
    admissionRequest({
      kind: 'ConfigMap',
      resource: 'configmaps',
      namespace,
      ...(withName ? { name } : {}),
      object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data },
    }),
    stateSnapshot(),
  );

describe('/validate-configmap dispatch', () => {
  it('checks slo-controller-config in the Koordinator namespace, naming the key, path and bound', () => {
    const bad = { 'system-config': '{"clusterStrategy":{"watermarkScaleFactor":500}}' };
    const decision = write('koordinator-system', 'slo-controller-config', bad);
    assert.ok(!decision.allowed);
    assert.match(
      decision.message,
      /data\[system-config\]: clusterStrategy\.watermarkScaleFactor: Invalid value: 500: must be at most 400/,
    );
    const good = { 'system-config': '{"clusterStrategy":{"watermarkScaleFactor":150}}' };
    assert.equal(write('koordinator-system', 'slo-controller-config', good).allowed, true);
  });

  it('checks the tier mapping in the operator namespace, also when the request carries no name', () => {
    const decision = write('admission-system', 'gpu-tier-mapping', { 'tiers.yaml': ': not yaml' }, false);
    assert.equal(decision.allowed, false);
  });

  it('refuses pod-enhanced-validator-config rules that do not parse, enabled or not, naming the rule', () => {
    const name = 'pod-enhanced-validator-config';
    const decision = write('koordinator-system', name, {
      enable: 'false',
      rules: '[{"name": "x", "requiredLabels": "team"}]',
    });
    assert.ok(!decision.allowed);
    assert.equal(
      decision.message,
      'ConfigMap koordinator-system/pod-enhanced-validator-config data[rules][0]: must be {"name": string, "requiredLabels": [string], "namespaceWhitelist": [string]}',
    );
    const good = { enable: 'true', rules: '[{"name": "x", "requiredLabels": ["team"]}]' };
    assert.equal(write('koordinator-system', name, good).allowed, true);
  });

  it('leaves ConfigMaps of the same names elsewhere alone', () => {
    const bad = { 'system-config': '{"clusterStrategy":{"watermarkScaleFactor":500}}' };
    assert.equal(write('default', 'slo-controller-config', bad).allowed, true);
    assert.equal(write('default', 'gpu-tier-mapping', { 'tiers.yaml': ': not yaml' }).allowed, true);
  });
});

describe('/validate-configmap: the operator ConfigMap', () => {
  it('accepts a valid enforcement and the ConfigMap without one', () => {
    assert.ok(
      write('admission-system', 'admission-operator', { enforcement: 'validate-pod=warn\n*=dryrun' }).allowed,
    );
    assert.ok(write('admission-system', 'admission-operator', {}).allowed);
  });

  it('refuses an unknown webhook, a bad action and an unknown key, naming each', () => {
    const decision = write('admission-system', 'admission-operator', {
      enforcement: 'validate-pods=warn,mutate-pod=audit',
      enforcment: 'x',
    });
    assert.ok(!decision.allowed);
    assert.equal(decision.code, 422);
    assert.match(
      decision.message,
      /data\.enforcement: unknown webhook "validate-pods"; known: mutate-pod, validate-pod/,
    );
    assert.match(
      decision.message,
      /data\.enforcement\.mutate-pod: action must be one of deny, warn, dryrun, got "audit"/,
    );
    assert.match(decision.message, /data\["enforcment"\]: unknown key; known: enforcement/);
  });

  it('leaves a ConfigMap of the same name in another namespace alone', () => {
    assert.ok(write('default', 'admission-operator', { enforcement: 'nonsense' }).allowed);
  });
});
