/**
 * /validate-workload-ai-v1alpha1-modelserving: Kthena v1.0.0's ModelServing validator
 * (`pkg/model-serving-controller/webhook/validator.go`). Its nine rules, all run, every error
 * reported in Kthena's order: the names the controller will generate, role names, container images,
 * replicas, the rolling-update configuration, per-role maxUnavailable, the gang policy, worker
 * replicas, and the pairing of recovery policy and rollout strategy.
 */
import type { Rule } from '../../../state.js';
import { decisionOf, findings, PASSED } from '../../shared/findings.js';
import {
  type FieldError,
  FieldPath,
  forbidden,
  GoStringer,
  invalid,
  required,
} from '../../shared/field-errors.js';
import { decodeFailedAs, validationFailed } from '../denials.js';
import { marshalledNumber, marshalledString } from '../go-values.js';
import { type ModelServing, decodeModelServing } from '../types/workload.js';
import { imageErrors } from '../worker-checks.js';
import { intOrPercentErrors, scaledValue, shownIntOrString } from './int-or-percent.js';

type Spec = NonNullable<ModelServing['spec']>;
type Role = NonNullable<NonNullable<Spec['template']>['roles']>[number];

const ROLES = FieldPath.of('spec', 'template', 'roles');
const ROLLING_UPDATE = FieldPath.of('spec', 'rolloutStrategy', 'rollingUpdateConfiguration');

const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS1035_PROBLEM =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

/** apimachinery's IsDNS1035Label: its problems, in its order. */
function dns1035Problems(name: string): string[] {
  const problems: string[] = [];
  // Go counts bytes.
  if (Buffer.byteLength(name, 'utf8') > 63) problems.push('must be no more than 63 characters');
  if (!DNS1035_LABEL.test(name)) problems.push(DNS1035_PROBLEM);
  return problems;
}

const rolesOf = (serving: ModelServing): Role[] => serving.spec?.template?.roles ?? [];

function generatedNameErrors(serving: ModelServing): FieldError[] {
  const name = serving.metadata?.name ?? '';
  const replicas = serving.spec?.replicas ?? 1;
  return rolesOf(serving).flatMap((role) => {
    const generated = `${name}-${replicas}-${role.name ?? ''}-${role.replicas ?? 1}-${role.workerReplicas ?? 0}`;
    const problems = dns1035Problems(generated);
    if (problems.length === 0) return [];
    return [invalid(FieldPath.of('metadata', 'name'), name, `invalid name: ${problems.join('; ')}`)];
  });
}

function roleNameErrors(serving: ModelServing): FieldError[] {
  return rolesOf(serving).flatMap((role, i) => {
    const name = role.name ?? '';
    const problems = dns1035Problems(name);
    if (problems.length === 0) return [];
    return [
      invalid(
        ROLES.index(i).child('name'),
        name,
        `role name must be a valid DNS-1035 label (lowercase alphanumeric characters or '-', must start with a letter): ${problems.join('; ')}`,
      ),
    ];
  });
}

function containerImageErrors(serving: ModelServing): FieldError[] {
  return rolesOf(serving).flatMap((role, i) => [
    ...(role.entryTemplate?.spec?.containers ?? []).flatMap((container, j) =>
      imageErrors(
        ROLES.index(i).child('entryTemplate', 'spec', 'containers').index(j).child('image'),
        container.image,
      ),
    ),
    ...(role.workerTemplate?.spec?.containers ?? []).flatMap((container, j) =>
      imageErrors(
        ROLES.index(i).child('workerTemplate', 'spec', 'containers').index(j).child('image'),
        container.image,
      ),
    ),
  ]);
}

function replicaErrors(serving: ModelServing): FieldError[] {
  const errors: FieldError[] = [];
  const replicas = serving.spec?.replicas;
  if (replicas === undefined || replicas < 0) {
    errors.push(
      invalid(
        FieldPath.of('spec', 'replicas'),
        marshalledNumber(replicas),
        'replicas must be a non-negative integer',
      ),
    );
  }
  const roles = serving.spec?.template?.roles;
  if (roles === undefined || roles.length === 0) {
    // A nil slice marshals as null, an empty one as [].
    errors.push(
      invalid(ROLES, new GoStringer(roles === undefined ? 'null' : '[]'), 'roles must be specified'),
    );
    return errors;
  }
  roles.forEach((role, i) => {
    if (role.replicas === undefined || role.replicas < 0) {
      errors.push(
        invalid(
          ROLES.index(i).child('replicas'),
          marshalledNumber(role.replicas),
          'role replicas must be a non-negative integer',
        ),
      );
    }
  });
  return errors;
}

function rollingUpdateErrors(serving: ModelServing): FieldError[] {
  const strategy = serving.spec?.rolloutStrategy;
  const configuration = strategy?.rollingUpdateConfiguration;
  if (configuration === undefined) return [];
  if (strategy?.type === 'RoleRollingUpdate') {
    return [
      forbidden(
        ROLLING_UPDATE,
        'rollingUpdateConfiguration is only valid when rolloutStrategy.type is ServingGroupRollingUpdate',
      ),
    ];
  }
  const maxUnavailable = configuration.maxUnavailable;
  const maxUnavailablePath = ROLLING_UPDATE.child('maxUnavailable');
  const errors = [
    ...intOrPercentErrors(maxUnavailable, maxUnavailablePath),
    ...intOrPercentErrors(configuration.partition, ROLLING_UPDATE.child('partition')),
  ];
  const replicas = serving.spec?.replicas;
  if (replicas !== undefined && maxUnavailable !== undefined) {
    const scaled = scaledValue(maxUnavailable, replicas);
    if (!scaled.ok) {
      errors.push(
        invalid(
          maxUnavailablePath,
          shownIntOrString(maxUnavailable),
          `invalid maxUnavailable: ${scaled.error}`,
        ),
      );
    } else if (scaled.value === 0) {
      errors.push(invalid(ROLLING_UPDATE, '', 'maxUnavailable cannot be 0'));
    }
  }
  return errors;
}

function roleMaxUnavailableErrors(serving: ModelServing): FieldError[] {
  const roleRollingUpdate = serving.spec?.rolloutStrategy?.type === 'RoleRollingUpdate';
  return rolesOf(serving).flatMap((role, i) => {
    const maxUnavailable = role.maxUnavailable;
    if (maxUnavailable === undefined) return [];
    const path = ROLES.index(i).child('maxUnavailable');
    const shown = shownIntOrString(maxUnavailable);
    const errors = intOrPercentErrors(maxUnavailable, path);
    if (!roleRollingUpdate) {
      errors.push(
        forbidden(path, 'maxUnavailable is only valid when rolloutStrategy.type is RoleRollingUpdate'),
      );
    }
    const replicas = role.replicas ?? 1;
    const scaled = scaledValue(maxUnavailable, replicas);
    if (!scaled.ok) errors.push(invalid(path, shown, `invalid maxUnavailable: ${scaled.error}`));
    else if (scaled.value === 0) errors.push(invalid(path, shown, 'maxUnavailable cannot be 0'));
    else if (scaled.value > replicas) {
      errors.push(invalid(path, shown, `maxUnavailable cannot be greater than replicas (${replicas})`));
    }
    return errors;
  });
}

function gangPolicyErrors(serving: ModelServing): FieldError[] {
  const minRoleReplicas = serving.spec?.template?.gangPolicy?.minRoleReplicas;
  if (minRoleReplicas === undefined) return [];
  const path = FieldPath.of('spec', 'template', 'gangPolicy', 'minRoleReplicas');
  // The last role of a name wins, as in Go's map.
  const roles = new Map(rolesOf(serving).map((role) => [role.name ?? '', role]));
  const errors: FieldError[] = [];
  // Go ranges over the map in random order; here the entries come in the object's order.
  for (const [name, min] of minRoleReplicas) {
    const role = roles.get(name);
    if (role === undefined) {
      errors.push(invalid(path.key(name), name, `role ${name} does not exist in template.roles`));
      continue;
    }
    const replicas = role.replicas ?? 1;
    if (min > replicas) {
      errors.push(
        invalid(
          path.key(name),
          min,
          `minRoleReplicas (${min}) for role ${name} cannot exceed replicas (${replicas})`,
        ),
      );
    }
    if (min < 0)
      errors.push(invalid(path.key(name), min, `minRoleReplicas for role ${name} must be non-negative`));
  }
  return errors;
}

function workerReplicaErrors(serving: ModelServing): FieldError[] {
  return rolesOf(serving).flatMap((role, i) => {
    const errors: FieldError[] = [];
    const workers = role.workerReplicas ?? 0;
    if (workers < 0) {
      errors.push(
        invalid(
          ROLES.index(i).child('workerReplicas'),
          workers,
          'workerReplicas must be a non-negative integer',
        ),
      );
    }
    if (workers > 0 && role.workerTemplate === undefined) {
      errors.push(
        required(
          ROLES.index(i).child('workerTemplate'),
          'workerTemplate is required when workerReplicas is greater than 0',
        ),
      );
    }
    return errors;
  });
}

function recoveryAndRolloutErrors(serving: ModelServing): FieldError[] {
  const recoveryPolicy = serving.spec?.recoveryPolicy || 'RoleRecreate';
  const strategy = serving.spec?.rolloutStrategy;
  const rolloutType = strategy?.type || 'ServingGroupRollingUpdate';
  if (recoveryPolicy !== 'ServingGroupRecreate' || rolloutType !== 'RoleRollingUpdate') return [];
  // Both are named string types: shown JSON-marshalled.
  const [path, shown] =
    strategy === undefined
      ? [FieldPath.of('spec', 'recoveryPolicy'), recoveryPolicy]
      : [FieldPath.of('spec', 'rolloutStrategy', 'type'), rolloutType];
  return [
    invalid(
      path,
      marshalledString(shown),
      `incompatible recoveryPolicy and rolloutStrategy.type after applying defaults: recoveryPolicy=${recoveryPolicy}, rolloutStrategy.type=${rolloutType}; valid pairs: (ServingGroupRecreate,ServingGroupRollingUpdate) or (RoleRecreate,RoleRollingUpdate)`,
    ),
  ];
}

const RULES: readonly ((serving: ModelServing) => FieldError[])[] = [
  generatedNameErrors,
  roleNameErrors,
  containerImageErrors,
  replicaErrors,
  rollingUpdateErrors,
  roleMaxUnavailableErrors,
  gangPolicyErrors,
  workerReplicaErrors,
  recoveryAndRolloutErrors,
];

export const validateModelServing: Rule = (request) => {
  if (request.operation === 'DELETE' || !request.object) return decisionOf(PASSED);
  const decoded = decodeModelServing(request.object);
  if (!decoded.ok) return decisionOf(findings(decoded.error), decodeFailedAs('modelServing'));
  const serving = decoded.value;
  return decisionOf(findings(RULES.flatMap((rule) => rule(serving))), validationFailed);
};
