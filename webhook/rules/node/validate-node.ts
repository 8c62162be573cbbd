/**
 * /validate-node: Koordinator's check that a relabelled node does not fall under two node
 * strategies of one slo-controller-config key
 * (https://github.com/koordinator-sh/koordinator/blob/main/pkg/webhook/node/plugins/sloconfig/slo_plugin.go), plus a check Koordinator
 * lacks (docs/rules/validate-node.md): a node's resource-amplification ratio annotation must be a JSON object whose every ratio
 * is a finite number from 1 to the admin's bound; otherwise the node is refused, naming the
 * resource.
 */
import { allow, badRequest } from '../../admission/decisions.js';
import type { AdmissionRequest, Decision, KubeObject } from '../../admission/types.js';
import { SLO_CONFIG_NAME } from '../../names.js';
import type { Rule, StateSnapshot } from '../../state.js';
import { asObject, labelsOf, parseJsonText } from '../../util/json.js';
import { sloConfigStrategyConflicts } from '../slo-config/node-strategy-conflicts.js';
import { AMPLIFICATION_RATIO_ANNOTATION } from './keys.js';

export interface NodeValidationOptions {
  /** --max-amplification-ratio. */
  maxRatio: number;
  /** Where slo-controller-config lives. */
  sloConfigNamespace: string;
}

function ratioProblems(node: KubeObject, maxRatio: number): Decision | undefined {
  const text = asObject(node.metadata.annotations)?.[AMPLIFICATION_RATIO_ANNOTATION];
  if (text === undefined || text === '') return undefined;
  const path = `metadata.annotations[${AMPLIFICATION_RATIO_ANNOTATION}]`;
  if (typeof text !== 'string')
    return badRequest(`${path}: must be a JSON object of ratios, e.g. {"cpu": 1.5}`);
  let ratios: unknown;
  try {
    ratios = parseJsonText(text);
  } catch {
    return badRequest(`${path}: not valid JSON; must be a JSON object of ratios, e.g. {"cpu": 1.5}`);
  }
  if (typeof ratios !== 'object' || ratios === null || Array.isArray(ratios)) {
    return badRequest(`${path}: must be a JSON object of ratios, e.g. {"cpu": 1.5}`);
  }
  const problems: string[] = [];
  for (const [resource, ratio] of Object.entries(ratios)) {
    if (typeof ratio !== 'number' || !Number.isFinite(ratio))
      problems.push(`${path}.${resource}: ratio ${JSON.stringify(ratio)} must be a finite number`);
    else if (ratio < 1)
      problems.push(
        `${path}.${resource}: ratio ${ratio} must be at least 1 (a node cannot report less than it has)`,
      );
    else if (ratio > maxRatio)
      problems.push(
        `${path}.${resource}: ratio ${ratio} exceeds the maximum ${maxRatio} (--max-amplification-ratio)`,
      );
  }
  return problems.length === 0 ? undefined : badRequest(problems.join('; '));
}

/**
 * On UPDATE, a label change that puts the node under two strategies of one key is refused. On
 * CREATE Koordinator only logs the conflict; the creator gets it as a warning here.
 */
function strategyConflict(
  request: AdmissionRequest,
  node: KubeObject,
  state: StateSnapshot,
  sloConfigNamespace: string,
): Decision | undefined {
  const labels = labelsOf(node);
  if (request.operation === 'UPDATE' && request.oldObject) {
    const before = labelsOf(request.oldObject);
    const same =
      Object.keys(before).length === Object.keys(labels).length &&
      Object.entries(labels).every(([key, value]) => before[key] === value);
    if (same) return undefined;
  }
  const name = typeof node.metadata.name === 'string' ? node.metadata.name : (request.name ?? '');
  const conflict = sloConfigStrategyConflicts(
    state.configMap(sloConfigNamespace, SLO_CONFIG_NAME)?.data,
    name,
    labels,
  );
  if (!conflict) return undefined;
  return request.operation === 'UPDATE' ? badRequest(conflict) : allow([conflict]);
}

export function nodeValidator(options: NodeValidationOptions): Rule {
  return (request, state) => {
    const node = request.object;
    if (!node || request.subResource) return allow();
    return (
      ratioProblems(node, options.maxRatio) ??
      strategyConflict(request, node, state, options.sloConfigNamespace) ??
      allow()
    );
  };
}
