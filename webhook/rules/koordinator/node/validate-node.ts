/**
 * /validate-node: Koordinator's check that a relabelled node does not fall under two node
 * strategies of one slo-controller-config key
 * (slo_plugin.go), plus a check Koordinator
 * lacks (docs/rules/validate-node.md): a node's resource-amplification ratio annotation must be a JSON object whose every ratio
 * is a finite number from 1 to the admin's bound; otherwise the node is refused, naming the
 * resource.
 */
import type { AdmissionRequest, KubeObject } from '../../../admission/types.js';
import { SLO_CONFIG_NAME } from '../../../names.js';
import type { Rule, StateSnapshot } from '../../../state.js';
import { asObject, labelsOf, readJsonText } from '../../../util/json.js';
import { own } from '../../../util/own.js';
import { sloConfigStrategyConflicts } from '../slo-config/node-strategy-conflicts.js';
import {
  decisionOf,
  firstRefusal,
  findings,
  PASSED,
  warnings,
  type Findings,
} from '../../shared/findings.js';
import { atField, FieldPath, type FieldError } from '../../shared/field-errors.js';
import { AMPLIFICATION_RATIO_ANNOTATION } from './keys.js';

const RATIO = FieldPath.of('metadata', 'annotations').key(AMPLIFICATION_RATIO_ANNOTATION);

const refused = (message: string, path = FieldPath.root()): Findings => findings([atField(path, message)]);

/** Each problem on its own, joined by `; `. */
const joined = (errors: readonly FieldError[]): string => errors.map((error) => error.toString()).join('; ');

export interface NodeValidationOptions {
  /** --max-amplification-ratio. */
  maxRatio: number;
  /** Where slo-controller-config lives. */
  sloConfigNamespace: string;
}

function ratioProblems(node: KubeObject, maxRatio: number): Findings {
  const text = asObject(node.metadata.annotations)?.[AMPLIFICATION_RATIO_ANNOTATION];
  if (text === undefined || text === '') return PASSED;
  if (typeof text !== 'string') return refused(`must be a JSON object of ratios, e.g. {"cpu": 1.5}`, RATIO);
  const read = readJsonText(text);
  if (!read.ok) return refused(`not valid JSON; must be a JSON object of ratios, e.g. {"cpu": 1.5}`, RATIO);
  const ratios = read.value;
  if (typeof ratios !== 'object' || ratios === null || Array.isArray(ratios)) {
    return refused(`must be a JSON object of ratios, e.g. {"cpu": 1.5}`, RATIO);
  }
  const problems: FieldError[] = [];
  for (const [resource, ratio] of Object.entries(ratios)) {
    if (typeof ratio !== 'number' || !Number.isFinite(ratio))
      problems.push(atField(RATIO.child(resource), `ratio ${JSON.stringify(ratio)} must be a finite number`));
    else if (ratio < 1)
      problems.push(
        atField(
          RATIO.child(resource),
          `ratio ${ratio} must be at least 1 (a node cannot report less than it has)`,
        ),
      );
    else if (ratio > maxRatio)
      problems.push(
        atField(
          RATIO.child(resource),
          `ratio ${ratio} exceeds the maximum ${maxRatio} (--max-amplification-ratio)`,
        ),
      );
  }
  return findings(problems);
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
): Findings {
  const labels = labelsOf(node);
  if (request.operation === 'UPDATE' && request.oldObject) {
    const before = labelsOf(request.oldObject);
    const same =
      Object.keys(before).length === Object.keys(labels).length &&
      Object.entries(labels).every(([key, value]) => own(before, key) === value);
    if (same) return PASSED;
  }
  const name = typeof node.metadata.name === 'string' ? node.metadata.name : (request.name ?? '');
  const conflict = sloConfigStrategyConflicts(
    state.configMap(sloConfigNamespace, SLO_CONFIG_NAME)?.data,
    name,
    labels,
  );
  if (!conflict) return PASSED;
  return request.operation === 'UPDATE' ? refused(conflict) : warnings(conflict);
}

export function nodeValidator(options: NodeValidationOptions): Rule {
  return (request, state) => {
    const node = request.object;
    if (!node || request.subResource) return decisionOf(PASSED);
    const found = firstRefusal([
      (): Findings => ratioProblems(node, options.maxRatio),
      (): Findings => strategyConflict(request, node, state, options.sloConfigNamespace),
    ]);
    return decisionOf(found, joined);
  };
}
