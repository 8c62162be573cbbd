/**
 * The three slo-controller-config keys Koordinator's webhook leaves unchecked (docs/rules/validate-configmap.md),
 * checked here: their shapes as the slo-controller and koordlet decode them
 * (`apis/configuration/slo_controller_config.go`, `apis/slo/v1alpha1/host_application.go`), and the
 * bounds those readers enforce later, where a bad value is only logged and the node silently keeps
 * its old setting. Each bound says where it comes from.
 */
import { type FieldError, type FieldPath, invalid, required } from '../../shared/field-errors.js';
import { labelKeyProblem } from '../../../util/k8s-names.js';
import { list, map, struct } from '../../../util/go-decode/composites.js';
import { goAnyObject, goBool, goFloat64, goString } from '../../../util/go-decode/scalars.js';
import { tagged } from '../../../util/go-decode/tags.js';
import { NODE_PROFILE } from './node-selectors.js';

// koordlet puts the application in cgroup `<base>/<parentDir>/<relativePath>`, or `<qos dir>/<name>`
// without a cgroupPath (pkg/koordlet/util GetHostAppCgroupRelativePath); the accepted values are those
// it, and the host-application user manual, know.
const HOST_APPLICATION = struct({
  name: goString,
  priority: tagged(goString, 'oneof=koord-prod koord-mid koord-batch koord-free'),
  qos: tagged(goString, 'oneof=LSE LSR LS BE SYSTEM'),
  cgroupPath: struct({
    base: tagged(goString, 'oneof=CgroupRoot Kubepods KubepodsBurstable KubepodsBesteffort'),
    parentDir: goString,
    relativePath: goString,
  }),
  strategy: goAnyObject,
});

export const HOST_APPLICATION_CONFIG = struct({
  applications: list(HOST_APPLICATION),
  nodeConfigs: list(struct({ ...NODE_PROFILE, applications: list(HOST_APPLICATION) })),
});

type HostApplicationConfig = NonNullable<ReturnType<typeof HOST_APPLICATION_CONFIG>>;
type HostApplication = NonNullable<ReturnType<typeof HOST_APPLICATION>>;

/**
 * What tags cannot say about host applications: each needs a name, unique in its list (koordlet
 * keys an application's CPU statistics by name, and names its default cgroup after it), and no path
 * part may climb out of the cgroup base with `..`.
 */
export function hostApplicationProblems(config: HostApplicationConfig, root: FieldPath): FieldError[] {
  const errors: FieldError[] = [];
  const checkList = (applications: readonly (HostApplication | undefined)[], path: FieldPath): void => {
    const seen = new Set<string>();
    for (const [index, application] of applications.entries()) {
      const at = path.index(index);
      const name = application?.name ?? '';
      if (name === '') {
        errors.push(
          required(at.child('name'), "koordlet names the application's cgroup and metrics after it"),
        );
      } else if (seen.has(name)) {
        errors.push(invalid(at.child('name'), name, 'must be unique within applications'));
      }
      seen.add(name);
      const parts: [FieldPath, string | undefined][] = [
        [at.child('name'), application?.name],
        [at.child('cgroupPath', 'parentDir'), application?.cgroupPath?.parentDir],
        [at.child('cgroupPath', 'relativePath'), application?.cgroupPath?.relativePath],
      ];
      for (const [partPath, value] of parts) {
        if (value !== undefined && value.split('/').includes('..')) {
          errors.push(
            invalid(partPath, value, "must not contain a '..' segment (it would leave the cgroup base)"),
          );
        }
      }
    }
  };
  checkList(config.applications ?? [], root.child('applications'));
  for (const [index, nodeConfig] of (config.nodeConfigs ?? []).entries()) {
    checkList(nodeConfig?.applications ?? [], root.child('nodeConfigs').index(index).child('applications'));
  }
  return errors;
}

// The slo-controller's cpunormalization plugin refuses a ratio outside [defaultMinRatio, defaultMaxRatio]
// = [1.0, 5.0] when it computes a node's ratio (pkg/slo-controller/noderesource/plugins/cpunormalization/
// plugin.go, isCPUNormalizationRatioValid). defaultRatio gets the same range: it is a ratio of the same kind.
const normalizationRatio = tagged(goFloat64, 'min=1,max=5');

const CPU_NORMALIZATION_STRATEGY = {
  enable: goBool,
  defaultRatio: normalizationRatio,
  ratioModel: map(
    struct({
      baseRatio: normalizationRatio,
      hyperThreadEnabledRatio: normalizationRatio,
      turboEnabledRatio: normalizationRatio,
      hyperThreadTurboEnabledRatio: normalizationRatio,
    }),
  ),
};

export const CPU_NORMALIZATION_CONFIG = struct({
  ...CPU_NORMALIZATION_STRATEGY,
  nodeConfigs: list(struct({ ...NODE_PROFILE, ...CPU_NORMALIZATION_STRATEGY })),
});

/**
 * resource-amplification-config. The resourceamplification plugin refuses any ratio below 1
 * (pkg/slo-controller/noderesource/plugins/resourceamplification/plugin.go,
 * validateResourceAmplificationRatios); the ratios end up in the node annotation that /validate-node
 * bounds by --max-amplification-ratio, so that bound applies here too when given. A null ratio is
 * Go's 0. Keys are resource names.
 */
export function resourceAmplificationConfig(maxRatio?: number) {
  const ratio = tagged(goFloat64, maxRatio === undefined ? 'min=1' : `min=1,max=${String(maxRatio)}`);
  const strategy = { enable: goBool, resourceAmplificationRatio: map(ratio, 0) };
  return struct({ ...strategy, nodeConfigs: list(struct({ ...NODE_PROFILE, ...strategy })) });
}

type ResourceAmplificationConfig = NonNullable<ReturnType<ReturnType<typeof resourceAmplificationConfig>>>;

/** Ratio keys must be resource names (qualified names such as `cpu` or `example.com/gpu`). */
export function resourceAmplificationProblems(
  config: ResourceAmplificationConfig,
  root: FieldPath,
): FieldError[] {
  const errors: FieldError[] = [];
  const checkKeys = (ratios: ReadonlyMap<string, number> | undefined, path: FieldPath): void => {
    for (const resource of ratios?.keys() ?? []) {
      const problem = labelKeyProblem(resource);
      if (problem !== undefined)
        errors.push(invalid(path.key(resource), resource, `not a resource name: ${problem}`));
    }
  };
  checkKeys(config.resourceAmplificationRatio, root.child('resourceAmplificationRatio'));
  for (const [index, nodeConfig] of (config.nodeConfigs ?? []).entries()) {
    checkKeys(
      nodeConfig?.resourceAmplificationRatio,
      root.child('nodeConfigs').index(index).child('resourceAmplificationRatio'),
    );
  }
  return errors;
}
