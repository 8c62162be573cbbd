/**
 * The admission chain with webhooks of the test's own: the API server's reinvocation, fail-open
 * of failurePolicy Ignore, match-condition errors, and patches applied as the API server does.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import type { KubeObject } from '../../../../webhook/admission/types.js';
import { admissionMetrics } from '../../../../webhook/metrics/admission-metrics.js';
import type { Rule } from '../../../../webhook/state.js';
import type { WebhookEntry } from '../../../../webhook/table.js';
import { applyPatch } from '../../../../webhook/chain/apply-patch.js';
import type { AdmissionInput } from '../../../../webhook/chain/call-webhook.js';
import { runChain } from '../../../../webhook/chain/run-chain.js';
import { fieldPath } from '../../../../operator/cli/admit/output.js';
import { stateSnapshot } from '../../../harness/state.js';

function entry(
  name: string,
  type: WebhookEntry['type'],
  handler: Rule,
  extra: Partial<WebhookEntry> = {},
): WebhookEntry {
  return {
    name: `${name}.admission-operator.io`,
    path: `/${name}`,
    type,
    resourceRules: [
      {
        apiGroups: [''],
        apiVersions: ['v1'],
        resources: ['pods'],
        operations: ['CREATE'],
        scope: 'Namespaced',
      },
    ],
    failurePolicy: 'Fail',
    timeoutSeconds: 10,
    namespaceSelector: {},
    objectSelector: {},
    matchConditions: [],
    featureGate: 'PodMutatingWebhook',
    handler,
    ...extra,
  };
}

/** A mutating rule that sets one label, counting its calls. */
function labeller(key: string, value: () => string, calls: { count: number }): Rule {
  return (request) => {
    calls.count += 1;
    const object = request.object as KubeObject;
    const labels = (object.metadata.labels ?? {}) as Record<string, string>;
    if (labels[key] === value()) return { allowed: true };
    return {
      allowed: true,
      mutated: { ...object, metadata: { ...object.metadata, labels: { ...labels, [key]: value() } } },
    };
  };
}

const pod: KubeObject = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'ns' },
  spec: { containers: [] },
};
const input: AdmissionInput = {
  kind: { group: '', version: 'v1', kind: 'Pod' },
  resource: { group: '', version: 'v1', resource: 'pods' },
  namespaced: true,
  namespace: 'ns',
  operation: 'CREATE',
  object: pod,
  oldObject: null,
};
const base = {
  state: stateSnapshot(),
  logger: pino({ level: 'silent' }),
  metrics: admissionMetrics(),
  namespaceLabels: (name: string) => ({ 'kubernetes.io/metadata.name': name }),
};

describe('admission chain', () => {
  it('reinvokes an IfNeeded webhook once when a later one changed the object, as the API server does', () => {
    const first = { count: 0 };
    const second = { count: 0 };
    const webhooks = [
      entry(
        'first',
        'mutating',
        labeller('a', () => 'x', first),
        { reinvocationPolicy: 'IfNeeded' },
      ),
      entry(
        'second',
        'mutating',
        labeller('b', () => 'y', second),
        { reinvocationPolicy: 'Never' },
      ),
    ];
    const verdict = runChain(input, { ...base, webhooks });
    assert.equal(verdict.allowed, true);
    assert.deepEqual(
      verdict.calls.map((call) => [call.webhook, call.round]),
      [
        ['first', 1],
        ['second', 1],
        ['first', 2],
      ],
    );
    assert.equal(second.count, 1);
    assert.deepEqual(verdict.object?.metadata.labels, { a: 'x', b: 'y' });
  });

  it('does not reinvoke a Never webhook, nor anyone when nothing changed after them', () => {
    const calls = { count: 0 };
    const webhooks = [
      entry(
        'only',
        'mutating',
        labeller('a', () => 'x', calls),
        { reinvocationPolicy: 'IfNeeded' },
      ),
    ];
    const verdict = runChain(input, { ...base, webhooks });
    assert.equal(calls.count, 1);
    assert.equal(verdict.calls.length, 1);
  });

  it('lets a failing failurePolicy=Ignore mutating webhook pass the object unchanged with the server’s warning', () => {
    const webhooks = [
      entry(
        'flaky',
        'mutating',
        () => {
          throw new Error('boom');
        },
        { failurePolicy: 'Ignore' },
      ),
    ];
    const verdict = runChain(input, { ...base, webhooks });
    assert.equal(verdict.allowed, true);
    assert.match(
      verdict.calls[0]?.warnings[0] ?? '',
      /flaky\.admission-operator\.io left the object unchanged: internal error in webhook/,
    );
  });

  it('refuses with the rule’s message under failurePolicy Fail and stops the chain', () => {
    const validated = { count: 0 };
    const webhooks = [
      entry('deny', 'mutating', () => ({ allowed: false, code: 403, message: 'no' })),
      entry('check', 'validating', () => {
        validated.count += 1;
        return { allowed: true };
      }),
    ];
    const verdict = runChain(input, { ...base, webhooks });
    assert.deepEqual(verdict.denial, { webhook: 'deny', code: 403, message: 'no' });
    assert.equal(validated.count, 0);
  });

  it('honours namespace selectors and match conditions; a condition that errs refuses under Fail, skips under Ignore', () => {
    const called = { count: 0 };
    const rule: Rule = () => {
      called.count += 1;
      return { allowed: true };
    };
    const selected = entry('selected', 'validating', rule, {
      namespaceSelector: { matchExpressions: [{ key: 'tier', operator: 'Exists' }] },
    });
    assert.equal(runChain(input, { ...base, webhooks: [selected] }).calls.length, 0);
    const labelled = runChain(input, {
      ...base,
      webhooks: [selected],
      namespaceLabels: () => ({ tier: 'gold' }),
    });
    assert.equal(labelled.calls.length, 1);

    const erring = { name: 'labels', expression: "object.metadata.labels['x'] == 'y'" };
    const failing = runChain(input, {
      ...base,
      webhooks: [entry('strict', 'validating', rule, { matchConditions: [erring] })],
    });
    assert.equal(failing.allowed, false);
    assert.match(
      failing.denial?.message ?? '',
      /failed to evaluate match conditions of webhook strict.*no such key: labels/,
    );
    const ignoring = runChain(input, {
      ...base,
      webhooks: [
        entry('lenient', 'validating', rule, { matchConditions: [erring], failurePolicy: 'Ignore' }),
      ],
    });
    assert.equal(ignoring.allowed, true);
    assert.equal(ignoring.calls.length, 0);
  });

  it('cuts an object nested deeper than the server reads, as the server does', () => {
    let deep: Record<string, unknown> = {};
    const root = deep;
    for (let i = 0; i < 600; i += 1) deep = deep.next = {};
    const webhooks = [entry('check', 'validating', () => ({ allowed: true }))];
    const verdict = runChain(
      { ...input, object: { ...pod, spec: root } as KubeObject },
      { ...base, webhooks },
    );
    assert.equal(verdict.allowed, false);
    assert.match(verdict.denial?.message ?? '', /nested deeper than 512 levels; no rule was run/);
  });

  it('applies patches as RFC 6902 does and prints their paths as field paths', () => {
    const patched = applyPatch(pod, [
      { op: 'add', path: '/metadata/labels', value: { 'a/b': 'c' } },
      { op: 'replace', path: '/metadata/name', value: 'q' },
      { op: 'add', path: '/spec/containers/0', value: { name: 'x' } },
      { op: 'remove', path: '/metadata/namespace' },
    ]);
    assert.deepEqual(patched, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'q', labels: { 'a/b': 'c' } },
      spec: { containers: [{ name: 'x' }] },
    });
    assert.deepEqual(pod.metadata, { name: 'p', namespace: 'ns' });
    assert.equal(
      fieldPath('/spec/nodeSelector/gpu.nvidia.com~1class'),
      'spec.nodeSelector[gpu.nvidia.com/class]',
    );
    assert.equal(fieldPath('/spec/containers/0/resources'), 'spec.containers[0].resources');
  });
});
