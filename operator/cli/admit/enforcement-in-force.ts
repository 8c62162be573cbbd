/**
 * The enforcement `admit` judges under, found where the running operator finds its own: the
 * `enforcement` key of its ConfigMap (read with the rest of the state, from --state files or the
 * cluster) when present and valid, else its --enforcement flag. The flag lives only in the
 * operator's Deployment (args or the ADMISSION_ENFORCEMENT variable), so with --cluster it is
 * read from there; the operator publishes it nowhere else, and reading the two places it reads
 * itself gives the same answer without a copy that could go stale. An explicit --enforcement on
 * the command line wins over all of it; without --cluster, ADMISSION_ENFORCEMENT stands in for
 * the Deployment's, as the other table flags do.
 */
import { AppsV1Api, type KubeConfig, type V1Container } from '@kubernetes/client-node';
import {
  DENY_ALL,
  describeEnforcement,
  readEnforcement,
  type Enforcement,
} from '../../../webhook/enforcement/enforcement.js';
import { ENFORCEMENT_KEY, OPERATOR_CONFIG_NAME } from '../../../webhook/names.js';
import { FieldPath } from '../../../webhook/rules/shared/field-errors.js';
import { enforceableNames } from '../../../webhook/table.js';
import { truncate } from '../../../webhook/util/bounded-text.js';
import type { StateSnapshot } from '../../../webhook/state.js';
import { StateError } from './state.js';

const ENV_NAME = 'ADMISSION_ENFORCEMENT';
/** The chart's label on the operator's Deployment. */
const OPERATOR_DEPLOYMENT_SELECTOR = 'app.kubernetes.io/name=admission-operator';

export interface EnforcementInForce {
  enforcement: Enforcement;
  /** Where it was read, for the line admit prints about it. */
  source: string;
  warnings: string[];
}

/** Parses the operator's flag as the operator does; the operator itself would not start with a bad one. */
function parseOperatorFlag(text: string, where: string): Enforcement {
  const read = readEnforcement(text, enforceableNames(), FieldPath.of(where));
  if (!read.ok) throw new StateError(read.error.join('; '));
  return read.value;
}

/** The --enforcement value of a container's command line or environment (the flag wins, as in the operator). */
export function enforcementOfContainer(container: V1Container): string | undefined {
  const argv = [...(container.command ?? []), ...(container.args ?? [])];
  let found: string | undefined;
  argv.forEach((arg, index) => {
    if (arg.startsWith('--enforcement=')) found = arg.slice('--enforcement='.length);
    else if (arg === '--enforcement' && argv[index + 1] !== undefined) found = argv[index + 1];
  });
  return found ?? container.env?.find((variable) => variable.name === ENV_NAME)?.value;
}

/** The operator Deployment's --enforcement text ('' when it sets none), and where it was found. */
async function deploymentFlag(
  kubeConfig: KubeConfig,
  namespace: string,
): Promise<{ text: string; source: string } | { error: string }> {
  let deployments;
  try {
    deployments = await kubeConfig
      .makeApiClient(AppsV1Api)
      .listNamespacedDeployment({ namespace, labelSelector: OPERATOR_DEPLOYMENT_SELECTOR });
  } catch (error) {
    return { error: truncate(error instanceof Error ? error.message : String(error), 512) };
  }
  const found = deployments.items.map((deployment) => {
    const texts = (deployment.spec?.template.spec?.containers ?? [])
      .map(enforcementOfContainer)
      .filter((text): text is string => text !== undefined);
    return { name: deployment.metadata?.name ?? '', text: texts[0] ?? '' };
  });
  if (found.length === 0) {
    return { error: `no Deployment labelled ${OPERATOR_DEPLOYMENT_SELECTOR} in namespace ${namespace}` };
  }
  const distinct = new Set(found.map((each) => each.text));
  if (distinct.size > 1) {
    return {
      error: `the Deployments ${found.map((each) => each.name).join(', ')} in namespace ${namespace} set different --enforcement flags`,
    };
  }
  return { text: found[0]?.text ?? '', source: `--enforcement of Deployment ${namespace}/${found[0]?.name}` };
}

export interface EnforcementSources {
  /** --enforcement on admit's command line. */
  flag: Enforcement | undefined;
  env: NodeJS.ProcessEnv;
  /** The state as loaded (files and, with --cluster, the cluster). */
  state: StateSnapshot;
  operatorNamespace: string;
  /** With --cluster: where to read the operator's Deployment. */
  cluster: KubeConfig | undefined;
}

export async function enforcementInForce(sources: EnforcementSources): Promise<EnforcementInForce> {
  if (sources.flag !== undefined) {
    return { enforcement: sources.flag, source: '--enforcement', warnings: [] };
  }
  const warnings: string[] = [];
  const configMap = sources.state.configMap(sources.operatorNamespace, OPERATOR_CONFIG_NAME);
  const text = configMap?.data[ENFORCEMENT_KEY];
  const where = `ConfigMap ${sources.operatorNamespace}/${OPERATOR_CONFIG_NAME} data.${ENFORCEMENT_KEY}`;
  if (text !== undefined) {
    const read = readEnforcement(text, enforceableNames(), FieldPath.of(where));
    if (read.ok) return { enforcement: read.value, source: where, warnings };
    warnings.push(
      `${read.error.join('; ')}: the operator ignores it and keeps its last valid enforcement, which admit cannot know; judging under its flag instead`,
    );
  }
  if (sources.cluster) {
    const flag = await deploymentFlag(sources.cluster, sources.operatorNamespace);
    if ('error' in flag) {
      warnings.push(`cannot read the operator's --enforcement (${flag.error}): judging as deny`);
      return { enforcement: DENY_ALL, source: 'default (deny)', warnings };
    }
    return { enforcement: parseOperatorFlag(flag.text, flag.source), source: flag.source, warnings };
  }
  const fromEnv = sources.env[ENV_NAME];
  if (fromEnv !== undefined) {
    return { enforcement: parseOperatorFlag(fromEnv, ENV_NAME), source: ENV_NAME, warnings };
  }
  return { enforcement: DENY_ALL, source: 'default (deny)', warnings };
}

/** The line admit prints about the enforcement it judges under, when it is not deny everywhere. */
export function enforcementNote({ enforcement, source }: EnforcementInForce): string | undefined {
  const described = describeEnforcement(enforcement);
  return described === describeEnforcement(DENY_ALL)
    ? undefined
    : `enforcement ${described} (from ${source})`;
}
