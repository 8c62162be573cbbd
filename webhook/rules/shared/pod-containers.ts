import type { JsonObject, JsonValue } from '../../admission/types.js';
import { asArray, asObject } from '../../util/json.js';
import { FieldPath } from './field-errors.js';

/** A pod's containers, then its init containers, each with the field path messages name it by. */
export function podContainers(pod: JsonObject): { container: JsonValue; path: FieldPath }[] {
  const spec = asObject(pod.spec);
  return [
    ...asArray(spec?.containers).map((container, index) => ({
      container,
      path: FieldPath.of('spec', 'containers').index(index),
    })),
    ...asArray(spec?.initContainers).map((container, index) => ({
      container,
      path: FieldPath.of('spec', 'initContainers').index(index),
    })),
  ];
}
