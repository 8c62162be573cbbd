import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JsonObject, KubeObject } from '../../../../../../webhook/admission/types.js';
import { validateModelServing } from '../../../../../../webhook/rules/kthena/model-serving/validate-model-serving.js';
import { assertAllowed, decide, errorsOf, type KindOf } from '../serving-requests.js';

const SERVING: KindOf = { group: 'workload', kind: 'ModelServing', resource: 'modelservings' };
const entry = { spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } };
const role = (fields: JsonObject = {}): JsonObject => ({
  name: 'role1',
  replicas: 1,
  entryTemplate: entry,
  workerReplicas: 0,
  ...fields,
});

const serving = (spec: JsonObject, name = 'sample'): KubeObject => ({
  apiVersion: 'workload.serving.volcano.sh/v1alpha1',
  kind: 'ModelServing',
  metadata: { name, namespace: 'ml' },
  spec: { schedulerName: 'volcano', replicas: 1, template: { roles: [role()] }, ...spec },
});
const validate = (object: KubeObject): string[] => errorsOf(decide(validateModelServing, SERVING, object));
const DNS1035 =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const PERCENT =
  "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";

describe('validateModelServing (Kthena v1.0.0 model-serving-controller/webhook/validator.go)', () => {
  it('allows a plain ModelServing', () => {
    assertAllowed(decide(validateModelServing, SERVING, serving({})));
  });

  it('refuses a name whose generated pod names exceed 63 characters (TestValidPodNameLength)', () => {
    const name = 'this-is-a-very-long-name-that-exceeds-the-allowed-length-for-generated-name';
    assert.deepEqual(
      validate(serving({ template: { roles: [role({ workerReplicas: 2, workerTemplate: {} })] } }, name)),
      // Cut to 64 characters here (docs/rules/kthena.md, "Long values"); Kthena shows it whole.
      [
        `metadata.name: Invalid value: "${name.slice(0, 48)}…(27 more chars)": invalid name: must be no more than 63 characters`,
      ],
    );
  });

  it('refuses role names that are no DNS-1035 label (TestValidateRoleNames)', () => {
    const roles = ['Prefill', '1role', 'role-'].map((name) => role({ name }));
    assert.deepEqual(validate(serving({ template: { roles } })), [
      // Only "sample-1-Prefill-1-0" of the generated names is no DNS-1035 label.
      `metadata.name: Invalid value: "sample": invalid name: ${DNS1035}`,
      ...['Prefill', '1role', 'role-'].map(
        (name, i) =>
          `spec.template.roles[${i}].name: Invalid value: "${name}": role name must be a valid DNS-1035 label (lowercase alphanumeric characters or '-', must start with a letter): ${DNS1035}`,
      ),
    ]);
  });

  it('checks replicas: absent, negative, no roles (TestValidatorReplicas)', () => {
    const object = serving({ template: { roles: [role({ replicas: -1 })] } });
    delete (object.spec as JsonObject).replicas;
    assert.deepEqual(validate(object), [
      'spec.replicas: Invalid value: null: replicas must be a non-negative integer',
      'spec.template.roles[0].replicas: Invalid value: -1: role replicas must be a non-negative integer',
    ]);
    assert.deepEqual(validate(serving({ template: { roles: [] } })), [
      'spec.template.roles: Invalid value: []: roles must be specified',
    ]);
    assert.deepEqual(validate(serving({ template: {} })), [
      'spec.template.roles: Invalid value: null: roles must be specified',
    ]);
  });

  it('checks the rolling update configuration (TestValidateRollingUpdateConfiguration)', () => {
    const rollout = (
      rollingUpdateConfiguration: JsonObject,
      type = 'ServingGroupRollingUpdate',
    ): KubeObject => serving({ replicas: 3, rolloutStrategy: { type, rollingUpdateConfiguration } });
    assertAllowed(decide(validateModelServing, SERVING, rollout({ maxUnavailable: 1, partition: '50%' })));
    assert.deepEqual(validate(rollout({ maxUnavailable: 1 }, 'RoleRollingUpdate')), [
      'spec.rolloutStrategy.rollingUpdateConfiguration: Forbidden: rollingUpdateConfiguration is only valid when rolloutStrategy.type is ServingGroupRollingUpdate',
    ]);
    assert.deepEqual(validate(rollout({ maxUnavailable: 'invalid' })), [
      `spec.rolloutStrategy.rollingUpdateConfiguration.maxUnavailable: Invalid value: "invalid": ${PERCENT}`,
      'spec.rolloutStrategy.rollingUpdateConfiguration.maxUnavailable: Invalid value: "invalid": invalid maxUnavailable: invalid value for IntOrString: invalid type: string is not a percentage',
    ]);
    assert.deepEqual(validate(rollout({ maxUnavailable: 0 })), [
      'spec.rolloutStrategy.rollingUpdateConfiguration: Invalid value: "": maxUnavailable cannot be 0',
    ]);
    assert.deepEqual(validate(rollout({ maxUnavailable: 1, partition: -1 })), [
      'spec.rolloutStrategy.rollingUpdateConfiguration.partition: Invalid value: -1: must be a non-negative integer',
    ]);
    assert.deepEqual(validate(rollout({ maxUnavailable: 1, partition: '101%' })), [
      'spec.rolloutStrategy.rollingUpdateConfiguration.partition: Invalid value: "101%": must be a valid percent value (0-100)',
    ]);
  });

  it('checks a role’s maxUnavailable (TestValidateMaxUnavailableForRoles)', () => {
    const withRole = (maxUnavailable: JsonObject[string], type = 'RoleRollingUpdate'): KubeObject =>
      serving({ rolloutStrategy: { type }, template: { roles: [role({ replicas: 2, maxUnavailable })] } });
    assertAllowed(decide(validateModelServing, SERVING, withRole(2)));
    assert.deepEqual(validate(withRole(0)), [
      'spec.template.roles[0].maxUnavailable: Invalid value: 0: maxUnavailable cannot be 0',
    ]);
    assert.deepEqual(validate(withRole(1, 'ServingGroupRollingUpdate')), [
      'spec.template.roles[0].maxUnavailable: Forbidden: maxUnavailable is only valid when rolloutStrategy.type is RoleRollingUpdate',
    ]);
    assert.deepEqual(validate(withRole('200%')), [
      'spec.template.roles[0].maxUnavailable: Invalid value: "200%": must be a valid percent value (0-100)',
      'spec.template.roles[0].maxUnavailable: Invalid value: "200%": maxUnavailable cannot be greater than replicas (2)',
    ]);
  });

  it('checks the gang policy against the roles (TestValidateGangPolicy)', () => {
    assert.deepEqual(
      validate(
        serving({
          template: { gangPolicy: { minRoleReplicas: { ghost: 1, role1: 2, other: 0 } }, roles: [role()] },
        }),
      ),
      [
        'spec.template.gangPolicy.minRoleReplicas[ghost]: Invalid value: "ghost": role ghost does not exist in template.roles',
        'spec.template.gangPolicy.minRoleReplicas[role1]: Invalid value: 2: minRoleReplicas (2) for role role1 cannot exceed replicas (1)',
        'spec.template.gangPolicy.minRoleReplicas[other]: Invalid value: "other": role other does not exist in template.roles',
      ],
    );
    assert.deepEqual(
      validate(serving({ template: { gangPolicy: { minRoleReplicas: { role1: -1 } }, roles: [role()] } })),
      [
        'spec.template.gangPolicy.minRoleReplicas[role1]: Invalid value: -1: minRoleReplicas for role role1 must be non-negative',
      ],
    );
  });

  it('checks worker replicas and their template (TestValidateWorkerReplicas)', () => {
    assert.deepEqual(
      validate(
        serving({
          template: { roles: [role({ workerReplicas: 1 }), role({ name: 'b', workerReplicas: -1 })] },
        }),
      ),
      [
        'spec.template.roles[0].workerTemplate: Required value: workerTemplate is required when workerReplicas is greater than 0',
        'spec.template.roles[1].workerReplicas: Invalid value: -1: workerReplicas must be a non-negative integer',
      ],
    );
  });

  it('refuses ServingGroupRecreate with RoleRollingUpdate (TestValidateRecoveryPolicyAndRolloutStrategy)', () => {
    const message =
      'incompatible recoveryPolicy and rolloutStrategy.type after applying defaults: recoveryPolicy=ServingGroupRecreate, rolloutStrategy.type=RoleRollingUpdate; valid pairs: (ServingGroupRecreate,ServingGroupRollingUpdate) or (RoleRecreate,RoleRollingUpdate)';
    assert.deepEqual(
      validate(
        serving({ recoveryPolicy: 'ServingGroupRecreate', rolloutStrategy: { type: 'RoleRollingUpdate' } }),
      ),
      [`spec.rolloutStrategy.type: Invalid value: "RoleRollingUpdate": ${message}`],
    );
    const specs: JsonObject[] = [
      {},
      { recoveryPolicy: 'ServingGroupRecreate' },
      { recoveryPolicy: 'RoleRecreate', rolloutStrategy: { type: 'RoleRollingUpdate' } },
      { recoveryPolicy: 'RoleRecreate', rolloutStrategy: { type: 'ServingGroupRollingUpdate' } },
    ];
    for (const spec of specs) {
      assertAllowed(decide(validateModelServing, SERVING, serving(spec)));
    }
  });

  it('checks the images of entry and worker containers', () => {
    const bad = { spec: { containers: [{ name: 'c', image: 'a b' }] } };
    assert.deepEqual(
      validate(
        serving({
          template: { roles: [role({ entryTemplate: bad, workerReplicas: 1, workerTemplate: bad })] },
        }),
      ),
      [
        'spec.template.roles[0].entryTemplate.spec.containers[0].image: Invalid value: "a b": invalid container image reference: image cannot contain spaces',
        'spec.template.roles[0].workerTemplate.spec.containers[0].image: Invalid value: "a b": invalid container image reference: image cannot contain spaces',
      ],
    );
  });

  it('refuses what does not decode, as failed to decode modelServing', () => {
    assert.deepEqual(
      errorsOf(
        decide(validateModelServing, SERVING, serving({ replicas: '1' })),
        'failed to decode modelServing:',
      ),
      ['spec.replicas: Invalid value: "1": must be an int32 (a whole number from -2147483648 to 2147483647)'],
    );
  });
});
