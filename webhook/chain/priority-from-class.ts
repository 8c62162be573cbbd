/**
 * The API server's Priority admission plugin, which runs before any webhook: our pod rules read
 * spec.priority, so the chain resolves it from the PriorityClass in the state as the plugin would.
 */
import type { JsonObject, KubeObject } from '../admission/types.js';
import type { StateSnapshot } from '../state.js';

/**
 * What the API server's own admission does to a pod before webhooks see it and that our rules
 * read: the Priority plugin resolves spec.priorityClassName into spec.priority.
 */
export function priorityFromClass(object: KubeObject, state: StateSnapshot, notes: string[]): KubeObject {
  const spec = object.spec;
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) return object;
  const className = spec.priorityClassName;
  if (typeof className !== 'string' || className === '' || spec.priority !== undefined) return object;
  const priorityClass = state.priorityClass(className);
  if (!priorityClass) {
    notes.push(
      `PriorityClass ${JSON.stringify(className)} is not in the state: spec.priority left unset (the API server refuses the pod if the class does not exist)`,
    );
    return object;
  }
  const next: JsonObject = { ...spec, priority: priorityClass.value };
  if (spec.preemptionPolicy === undefined)
    next.preemptionPolicy = priorityClass.preemptionPolicy ?? 'PreemptLowerPriority';
  return { ...object, spec: next };
}
