/**
 * slo-controller-config checks through /validate-configmap's rule, as the problems its refusal
 * lists (one per `  - ` line, after the heading naming the ConfigMap); none when it is allowed.
 */
import assert from 'node:assert/strict';
import type { KubeObject } from '../../webhook/admission/types.js';
import {
  type NodeLabels,
  sloConfigValidator,
} from '../../webhook/rules/koordinator/slo-config/validate-slo-config.js';
import { admissionRequest } from './requests.js';
import { stateSnapshot } from './state.js';

export const SLO_CONFIG_NAMESPACE = 'koordinator-system';
export const SLO_CONFIG_NAME = 'slo-controller-config';
const HEADING = `ConfigMap ${SLO_CONFIG_NAMESPACE}/${SLO_CONFIG_NAME} is not a valid SLO configuration:\n`;
const ITEM = '  - ';

function configMap(data: Readonly<Record<string, string>>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: SLO_CONFIG_NAME, namespace: SLO_CONFIG_NAMESPACE },
    data: { ...data },
  };
}

/**
 * The problems of writing `newData` over `oldData` (null: a CREATE, so every non-empty key is
 * checked), with `nodes` as the cluster's nodes and `--max-amplification-ratio` when given.
 */
export function sloConfigProblemTexts(
  newData: Readonly<Record<string, string>>,
  oldData: Readonly<Record<string, string>> | null,
  nodes: Iterable<NodeLabels>,
  limits: { maxAmplificationRatio?: number } = {},
): string[] {
  const rule = sloConfigValidator({
    namespace: SLO_CONFIG_NAMESPACE,
    name: SLO_CONFIG_NAME,
    nodesOf: () => nodes,
    ...limits,
  });
  const request = admissionRequest({
    kind: 'ConfigMap',
    resource: 'configmaps',
    operation: oldData === null ? 'CREATE' : 'UPDATE',
    namespace: SLO_CONFIG_NAMESPACE,
    name: SLO_CONFIG_NAME,
    object: configMap(newData),
    oldObject: oldData === null ? null : configMap(oldData),
  });
  const decision = rule(request, stateSnapshot());
  if (decision.allowed) return [];
  assert.ok(decision.message.startsWith(`${HEADING}${ITEM}`), decision.message);
  return decision.message.slice(HEADING.length + ITEM.length).split(`\n${ITEM}`);
}
