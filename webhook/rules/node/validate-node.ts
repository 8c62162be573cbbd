/**
 * /validate-node: what the seeds promise and Koordinator omits. A node's resource-amplification
 * ratio annotation must be a JSON object whose every ratio is a finite number from 1 to the
 * admin's bound; otherwise the node update is refused, naming the resource. (Koordinator's own
 * node validator, the slo-controller-config selector conflict check, joins this chain with the
 * SLO config rules.)
 */
import { allow, deny } from '../../admission/decisions.js';
import type { Rule } from '../../state.js';
import { AMPLIFICATION_RATIO_ANNOTATION } from './keys.js';
import { asObject } from '../../util/json.js';

export function nodeValidator(maxRatio: number): Rule {
  return (request) => {
    const node = request.object;
    if (!node || request.subResource) return allow();
    const text = asObject(node.metadata.annotations)?.[AMPLIFICATION_RATIO_ANNOTATION];
    if (text === undefined || text === '') return allow();
    const path = `metadata.annotations[${AMPLIFICATION_RATIO_ANNOTATION}]`;
    if (typeof text !== 'string')
      return deny(`${path}: must be a JSON object of ratios, e.g. {"cpu": 1.5}`, 400, 'BadRequest');
    let ratios: unknown;
    try {
      ratios = JSON.parse(text);
    } catch (error) {
      return deny(`${path}: not valid JSON: ${(error as Error).message}`, 400, 'BadRequest');
    }
    if (typeof ratios !== 'object' || ratios === null || Array.isArray(ratios)) {
      return deny(`${path}: must be a JSON object of ratios, e.g. {"cpu": 1.5}`, 400, 'BadRequest');
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
    return problems.length === 0 ? allow() : deny(problems.join('; '), 400, 'BadRequest');
  };
}
