/**
 * /validate/modelroute: Kthena v1.0.0's ModelRoute validator (`pkg/kthena-router/webhook/validator.go`):
 * a model name or LoRA adapters, no empty adapter name, and per rule at least one target, named
 * targets, a total weight above zero (an absent weight counts 100; the sum is Go's uint32, which
 * wraps) and header and URI regexes that compile as Go's regexp (RE2). Every error is reported,
 * joined as the router joins them.
 */
import type { Rule } from '../../../state.js';
import { goRegexpProblem } from '../../../util/go-regexp.js';
import { decisionOf, findings, PASSED } from '../../shared/findings.js';
import { type FieldError, FieldPath, GoStringer, invalid, required } from '../../shared/field-errors.js';
import { decodeFailedAs, routeValidationFailed } from '../denials.js';
import { type ModelMatch, type ModelRoute, decodeModelRoute } from '../types/networking.js';

const SPEC = FieldPath.of('spec');
const DEFAULT_WEIGHT = 100;

/** The regex at `path`, if it is one Go cannot compile. */
function regexError(regex: string | undefined, path: FieldPath): FieldError[] {
  const problem = regex === undefined ? undefined : goRegexpProblem(regex);
  return regex === undefined || problem === undefined ? [] : [invalid(path, regex, problem)];
}

function regexErrors(match: ModelMatch, path: FieldPath): FieldError[] {
  // Go ranges over the headers map in random order; here they come in the object's order.
  const headers = [...(match.headers ?? new Map<string, { regex?: string }>())].flatMap(([key, header]) =>
    regexError(header.regex, path.child('headers').key(key).child('regex')),
  );
  return [...headers, ...regexError(match.uri?.regex, path.child('uri', 'regex'))];
}

function checkRoute(route: ModelRoute): FieldError[] {
  const errors: FieldError[] = [];
  const spec = route.spec;
  const adapters = spec?.loraAdapters ?? [];
  if ((spec?.modelName ?? '') === '' && adapters.length === 0) {
    errors.push(required(SPEC, 'either modelName or loraAdapters must be specified'));
  }
  adapters.forEach((adapter, i) => {
    if (adapter === '') {
      errors.push(
        invalid(SPEC.child('loraAdapters').index(i), adapter, 'lora adapter name cannot be an empty string'),
      );
    }
  });
  (spec?.rules ?? []).forEach((rule, i) => {
    const rulePath = SPEC.child('rules').index(i);
    if (rule === undefined) {
      errors.push(invalid(rulePath, new GoStringer('null'), 'rule must not be nil'));
      return;
    }
    const targets = rule.targetModels ?? [];
    if (targets.length === 0) {
      errors.push(required(rulePath.child('targetModels'), 'each rule must have at least one target model'));
      return;
    }
    let total = 0;
    targets.forEach((target, j) => {
      // A null target is a nil pointer, which Kthena dereferences (its handler panics): refused
      // here as an unnamed target.
      const name = target?.modelServerName ?? '';
      if (name === '') {
        errors.push(
          invalid(
            rulePath.child('targetModels').index(j).child('modelServerName'),
            name,
            'modelServerName cannot be an empty string',
          ),
        );
      }
      total = (total + (target?.weight ?? DEFAULT_WEIGHT)) >>> 0;
    });
    if (total === 0) {
      errors.push(invalid(rulePath.child('targetModels'), total, 'total weight must be greater than zero'));
    }
    if (rule.modelMatch) errors.push(...regexErrors(rule.modelMatch, rulePath.child('modelMatch')));
  });
  return errors;
}

export const validateModelRoute: Rule = (request) => {
  if (request.operation === 'DELETE' || !request.object) return decisionOf(PASSED);
  const decoded = decodeModelRoute(request.object);
  if (!decoded.ok) return decisionOf(findings(decoded.error), decodeFailedAs('modelRoute'));
  return decisionOf(findings(checkRoute(decoded.value)), routeValidationFailed);
};
