/**
 * metav1.LabelSelector evaluation, as apimachinery's LabelSelectorAsSelector reads it: matchLabels
 * and matchExpressions are ANDed; NotIn and DoesNotExist match when the key is absent. A selector
 * that apimachinery would refuse to convert (an unknown operator, In/NotIn without values,
 * Exists/DoesNotExist with values) is reported as an error rather than guessed at.
 */
import type { JsonValue } from '../admission/types.js';
import { asArray, asObject } from './json.js';
import { failure, success, type Result } from './result.js';
import { own } from './own.js';

export type SelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

export interface SelectorRequirement {
  key: string;
  operator: SelectorOperator;
  values: readonly string[];
}

/** A parsed selector: every requirement must hold. No requirements match everything. */
export interface LabelSelector {
  requirements: readonly SelectorRequirement[];
}

const OPERATORS: readonly string[] = ['In', 'NotIn', 'Exists', 'DoesNotExist'];

/** Parses a LabelSelector from JSON; `path` prefixes error messages (e.g. `spec.selector`). */
export function parseLabelSelector(value: JsonValue | undefined, path: string): Result<LabelSelector> {
  if (value === undefined || value === null) return success({ requirements: [] });
  const object = asObject(value);
  if (!object) return failure(`${path}: must be a label selector object`);
  const requirements: SelectorRequirement[] = [];
  const matchLabels = object.matchLabels;
  if (matchLabels !== undefined && matchLabels !== null) {
    const labels = asObject(matchLabels);
    if (!labels) return failure(`${path}.matchLabels: must be a map of strings`);
    for (const [key, label] of Object.entries(labels)) {
      if (typeof label !== 'string') return failure(`${path}.matchLabels[${key}]: must be a string`);
      requirements.push({ key, operator: 'In', values: [label] });
    }
  }
  for (const [index, item] of asArray(object.matchExpressions).entries()) {
    const at = `${path}.matchExpressions[${index}]`;
    const expression = asObject(item);
    const key = expression?.key;
    const operator = expression?.operator;
    if (typeof key !== 'string' || key === '') return failure(`${at}.key: Required value`);
    if (typeof operator !== 'string' || !OPERATORS.includes(operator)) {
      return failure(
        `${at}.operator: Unsupported value: ${JSON.stringify(operator ?? null)}: supported values: "In", "NotIn", "Exists", "DoesNotExist"`,
      );
    }
    const values = asArray(expression?.values);
    if (!values.every((each) => typeof each === 'string')) return failure(`${at}.values: must be strings`);
    const needsValues = operator === 'In' || operator === 'NotIn';
    if (needsValues && values.length === 0) {
      return failure(`${at}.values: Required value: must be specified when operator is ${operator}`);
    }
    if (!needsValues && values.length > 0) {
      return failure(`${at}.values: Forbidden: may not be specified when operator is ${operator}`);
    }
    requirements.push({ key, operator: operator as SelectorOperator, values: values });
  }
  return success({ requirements });
}

export function selectorMatches(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  return selector.requirements.every(({ key, operator, values }) => {
    const value = own(labels, key);
    switch (operator) {
      case 'In':
        return value !== undefined && values.includes(value);
      case 'NotIn':
        return value === undefined || !values.includes(value);
      case 'Exists':
        return value !== undefined;
      case 'DoesNotExist':
        return value === undefined;
    }
  });
}

/** True when the selector has no requirements (nil or `{}`): it matches everything without a lookup. */
export function selectsEverything(selector: LabelSelector): boolean {
  return selector.requirements.length === 0;
}
