import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { enforce, enforceAll } from '../../../../webhook/enforcement/apply-enforcement.js';
import {
  actionFor,
  actionOfName,
  describeEnforcement,
  MAX_ENFORCEMENT_CHARS,
  readEnforcement,
  type EnforcementAction,
} from '../../../../webhook/enforcement/enforcement.js';
import { FieldPath } from '../../../../webhook/rules/shared/field-errors.js';
import type { JsonPatch } from '../../../../webhook/admission/response.js';
import type { Decision } from '../../../../webhook/admission/types.js';
import type { Judgement } from '../../../../webhook/server/decide.js';
import type { WebhookEntry } from '../../../../webhook/table.js';

const known = ['validate-pod', 'mutate-pod', 'mutate-pod-gpu-class'];
const FLAG = FieldPath.of('--enforcement');

describe('readEnforcement', () => {
  it('reads webhook=action entries separated by commas or newlines, with * for the rest', () => {
    const parsed = readEnforcement('validate-pod=warn,\n# rolling out\n*=dryrun\n', known, FLAG);
    assert.ok(parsed.ok);
    assert.equal(actionFor(parsed.value, 'validate-pod'), 'warn');
    assert.equal(actionFor(parsed.value, 'mutate-pod'), 'dryrun');
    assert.equal(describeEnforcement(parsed.value), '*=dryrun,validate-pod=warn');
  });

  it('is deny for every webhook when empty', () => {
    const parsed = readEnforcement('', known, FLAG);
    assert.ok(parsed.ok);
    assert.equal(actionFor(parsed.value, 'mutate-pod'), 'deny');
  });

  it('names every problem with the entry it is in', () => {
    const parsed = readEnforcement(
      'validate-pod, mutate-pod=audit, nope=warn, validate-pod=warn, validate-pod=deny',
      known,
      FieldPath.of('data', 'enforcement'),
    );
    assert.ok(!parsed.ok);
    assert.deepEqual(parsed.error.map(String), [
      'data.enforcement: entry "validate-pod" is not webhook=action',
      'data.enforcement.mutate-pod: action must be one of deny, warn, dryrun, got "audit"',
      'data.enforcement: unknown webhook "nope"; known: mutate-pod, mutate-pod-gpu-class, validate-pod',
      'data.enforcement.validate-pod: named twice',
    ]);
  });

  it('refuses a text longer than its bound without reading it', () => {
    const parsed = readEnforcement('x'.repeat(MAX_ENFORCEMENT_CHARS + 1), known, FLAG);
    assert.ok(!parsed.ok);
    assert.match(parsed.error[0]?.toString() ?? '', /longer than 4096 characters/);
  });
});

const entry = (type: WebhookEntry['type'], failurePolicy: WebhookEntry['failurePolicy']): WebhookEntry => ({
  name: `${type}-${failurePolicy}.admission-operator.io`,
  path: '/x',
  type,
  failurePolicy,
  resourceRules: [],
  timeoutSeconds: 10,
  namespaceSelector: {},
  objectSelector: {},
  matchConditions: [],
  featureGate: 'PodValidatingWebhook',
  handler: () => ({ allowed: true }),
});

const refused: Judgement = {
  decision: { allowed: false, code: 403, message: 'spec.x: nope', warnings: ['rule warning'] },
  outcome: 'denied',
};
const failed: Judgement = {
  decision: {
    allowed: false,
    code: 500,
    reason: 'InternalError',
    message: 'internal error in webhook x: boom',
  },
  outcome: 'error',
};
const patch: JsonPatch = [{ op: 'add', path: '/metadata/labels', value: { a: 'b' } }];
const patched: Judgement & { patch: JsonPatch } = {
  decision: { allowed: true, mutated: { apiVersion: 'v1', kind: 'Pod', metadata: { labels: { a: 'b' } } } },
  outcome: 'patched',
  patch,
};

function run(kind: WebhookEntry, judgement: Judgement & { patch?: JsonPatch }, action: EnforcementAction) {
  return enforce(kind, judgement, action);
}

const kinds = [entry('validating', 'Fail'), entry('mutating', 'Fail'), entry('mutating', 'Ignore')];

for (const kind of kinds) {
  describe(`enforce on a ${kind.type} failurePolicy=${kind.failurePolicy} webhook`, () => {
    it('deny keeps the judgement as it is', () => {
      assert.deepEqual(run(kind, refused, 'deny'), { ...refused, enforcement: 'deny' });
      assert.deepEqual(run(kind, patched, 'deny'), { ...patched, enforcement: 'deny' });
    });

    it('warn admits a refusal with its message as a warning, and keeps a patch', () => {
      const warned = run(kind, refused, 'warn');
      assert.deepEqual(warned.decision, {
        allowed: true,
        warnings: [
          'rule warning',
          `${kind.name.replace('.admission-operator.io', '')} would refuse this (enforcement warn): spec.x: nope`,
        ],
      } satisfies Decision);
      assert.equal(warned.outcome, 'would-deny');
      assert.equal(warned.wouldRefuse, 'spec.x: nope');
      assert.deepEqual(run(kind, patched, 'warn'), { ...patched, enforcement: 'warn' });
      const error = run(kind, failed, 'warn');
      assert.equal(error.decision.allowed, true);
      assert.equal(error.outcome, 'error', 'an error stays counted as one');
    });

    it('dryrun admits silently, drops the patch and lists what it would change', () => {
      const dry = run(kind, refused, 'dryrun');
      assert.deepEqual(dry.decision, { allowed: true });
      assert.equal(dry.outcome, 'would-deny');
      const dryPatch = run(kind, patched, 'dryrun');
      assert.deepEqual(dryPatch.decision, { allowed: true });
      assert.equal(dryPatch.patch, undefined);
      assert.equal(dryPatch.outcome, 'would-patch');
      assert.deepEqual(dryPatch.wouldChange, ['add /metadata/labels']);
      assert.equal(run(kind, failed, 'dryrun').outcome, 'error');
    });
  });
}

describe('a step enforced apart from its webhook (validate-pod/colocation)', () => {
  const withSteps = ['validate-pod', 'validate-pod/colocation'];
  const webhook = { ...entry('validating', 'Fail'), name: 'validate-pod.admission-operator.io' };
  const stepRefused = (otherwise: Decision): Judgement => ({
    decision: {
      allowed: false,
      code: 400,
      message: 'Pod: Forbidden: BE',
      step: { name: 'colocation', otherwise },
    },
    outcome: 'denied',
  });
  const read = (text: string) => {
    const parsed = readEnforcement(text, withSteps, FLAG);
    assert.ok(parsed.ok, String(parsed.ok || parsed.error));
    return parsed.value;
  };

  it('is named <webhook>/<step>; * does not name it, and unnamed it denies, so the webhook decides', () => {
    assert.equal(actionOfName(read('validate-pod/colocation=warn'), 'validate-pod/colocation'), 'warn');
    assert.equal(actionOfName(read('*=dryrun'), 'validate-pod/colocation'), 'deny');
    assert.equal(actionOfName(read('*=dryrun'), 'validate-pod'), 'dryrun');
  });

  it('deny keeps the step refusal', () => {
    const judged = enforceAll(webhook, stepRefused({ allowed: true }), read(''));
    assert.equal(judged.decision.allowed, false);
    assert.equal(judged.step, undefined);
  });

  it('warn answers what the later steps decide, with the step refusal as a warning', () => {
    const admitted = enforceAll(
      webhook,
      stepRefused({ allowed: true }),
      read('validate-pod/colocation=warn'),
    );
    assert.deepEqual(admitted.decision, {
      allowed: true,
      warnings: ['validate-pod/colocation would refuse this (enforcement warn): Pod: Forbidden: BE'],
    });
    assert.equal(admitted.outcome, 'would-deny');
    assert.deepEqual(admitted.step, { name: 'validate-pod/colocation', action: 'warn' });
    assert.equal(admitted.wouldRefuse, 'Pod: Forbidden: BE');

    const quota: Decision = { allowed: false, code: 400, message: 'exceeded quota' };
    const refused = enforceAll(webhook, stepRefused(quota), read('validate-pod/colocation=warn'));
    assert.equal(refused.decision.allowed, false, 'a later step still refuses');
    assert.equal(refused.decision.allowed ? '' : refused.decision.message, 'exceeded quota');
    assert.equal(refused.outcome, 'denied');
  });

  it('dryrun answers the later steps silently; the webhook warn then softens what they refuse', () => {
    const silent = enforceAll(
      webhook,
      stepRefused({ allowed: true }),
      read('validate-pod/colocation=dryrun'),
    );
    assert.deepEqual(silent.decision, { allowed: true });
    const quota: Decision = { allowed: false, code: 400, message: 'exceeded quota' };
    const warned = enforceAll(
      webhook,
      stepRefused(quota),
      read('validate-pod/colocation=dryrun,validate-pod=warn'),
    );
    assert.deepEqual(warned.decision, {
      allowed: true,
      warnings: ['validate-pod would refuse this (enforcement warn): exceeded quota'],
    });
    assert.equal(warned.wouldRefuse, 'exceeded quota');
  });
});
