/** Requests and answers for the Kthena v1.0.0 rule tests. */
import assert from 'node:assert/strict';
import type { AdmissionRequest, Decision, KubeObject } from '../../../../../webhook/admission/types.js';
import type { Rule } from '../../../../../webhook/state.js';
import { admissionRequest } from '../../../../harness/requests.js';
import { stateSnapshot } from '../../../../harness/state.js';

const GROUPS = {
  workload: 'workload.serving.volcano.sh',
  networking: 'networking.serving.volcano.sh',
} as const;

export interface KindOf {
  group: keyof typeof GROUPS;
  kind: string;
  resource: string;
}

export function servingRequest(
  kind: KindOf,
  object: KubeObject,
  operation: AdmissionRequest['operation'] = 'CREATE',
): AdmissionRequest {
  return admissionRequest({
    group: GROUPS[kind.group],
    version: 'v1alpha1',
    kind: kind.kind,
    resource: kind.resource,
    namespace: 'ml',
    operation,
    object,
    ...(operation === 'UPDATE' ? { oldObject: object } : {}),
  });
}

const state = stateSnapshot();

export const decide = (
  rule: Rule,
  kind: KindOf,
  object: KubeObject,
  operation?: AdmissionRequest['operation'],
): Decision => rule(servingRequest(kind, object, operation), state);

export function assertAllowed(decision: Decision): void {
  assert.ok(decision.allowed, decision.allowed ? '' : decision.message);
}

/** The field errors of a `validation failed:` refusal, one per line. */
export function errorsOf(decision: Decision, heading = 'validation failed:'): string[] {
  assert.ok(!decision.allowed, 'expected a denial');
  assert.equal(decision.code, 400);
  const [head, ...lines] = decision.message.split('\n');
  assert.equal(head, heading);
  return lines.map((line) => line.replace(/^ {2}- /, ''));
}
