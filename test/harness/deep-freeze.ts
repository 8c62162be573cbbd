import type { JsonValue } from '../../webhook/admission/types.js';

/**
 * Freezes `value` and everything inside it, so code under test that writes to it throws (ES
 * modules run in strict mode): a test that passes a frozen input checks that the input is not changed.
 */
export function deepFreeze<T extends JsonValue>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}
