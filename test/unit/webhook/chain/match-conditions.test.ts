/**
 * Every match condition the webhook table can produce, evaluated over every input shape that
 * decides it, against what the condition means (written in its webhook's folder, examples.ts,
 * independently of its CEL); and an
 * erring condition under each failure policy, through the chain's matcher, as the API server
 * dispatches it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../../../webhook/admission/types.js';
import { CelError, compileCel } from '../../../../webhook/chain/cel.js';
import { matchWebhook } from '../../../../webhook/chain/match-webhook.js';
import { webhookTable, type WebhookEntry } from '../../../../webhook/table.js';
import { WEBHOOKS } from '../../../../webhook/webhooks/index.js';
import { conditionExample, tableConditions } from '../../../harness/match-conditions.js';
import { webhookExamples } from '../../../harness/webhook-examples.js';
import { admissionRequest } from '../../../harness/requests.js';

describe('the webhook table’s match conditions', () => {
  const conditions = tableConditions();

  it('are those the webhooks’ folders describe, under every context the table is built with', () => {
    const described = WEBHOOKS.flatMap(({ name }) => Object.keys(webhookExamples(name).conditions ?? {}));
    assert.deepEqual([...new Set(conditions.map(({ name }) => name))].sort(), [...new Set(described)].sort());
    assert.ok(described.includes('requests-gpu') && described.includes('managed-configmaps'));
    // An empty ConfigMap list and an empty GPU resource list are among them.
    assert.ok(conditions.some(({ context }) => context.configMaps.length === 0));
    assert.ok(conditions.some(({ context }) => context.gpuResourceNames.length === 0));
  });

  it('evaluate to what they mean on every input', () => {
    let evaluated = 0;
    const outcomes = new Set<string>();
    for (const condition of conditions) {
      const program = compileCel(condition.expression);
      const { inputs, meaning } = conditionExample(condition);
      for (const variables of inputs()) {
        const result = program.evaluate(variables);
        const got = result instanceof CelError ? 'error' : result;
        const expected = meaning(variables, condition.context);
        assert.equal(
          got,
          expected,
          `${condition.name} (${condition.expression}) on ${JSON.stringify(variables)}`,
        );
        outcomes.add(`${condition.name}=${String(expected)}`);
        evaluated += 1;
      }
    }
    assert.ok(evaluated > 2000, `${evaluated} evaluations`);
    // Each condition is seen both true and false; requests-gpu also erring.
    for (const name of new Set(conditions.map((condition) => condition.name)))
      for (const outcome of ['true', 'false'])
        assert.ok(outcomes.has(`${name}=${outcome}`), `${name}=${outcome}`);
    assert.ok(outcomes.has('requests-gpu=error'));
  });

  it('that err skip the webhook under failurePolicy Ignore and refuse the request under Fail', () => {
    // The table of a context with one GPU resource name: the GPU-class webhook has failurePolicy Ignore.
    const gpuCondition = conditions.find(
      ({ name, context }) => name === 'requests-gpu' && context.gpuResourceNames.length === 1,
    );
    assert.ok(gpuCondition);
    const { context } = gpuCondition;
    const podWithoutContainers: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: {},
    };
    const request = admissionRequest({
      kind: 'Pod',
      resource: 'pods',
      namespace: 'team-a',
      name: 'p',
      object: podWithoutContainers,
    });
    const match = { namespaceLabels: () => ({ 'tenant.kubenexus.io/tier': 'gold' }), namespaced: true };
    const gpuClass = (overrides = {}): WebhookEntry => {
      const entry = webhookTable({ ...context, overrides }).find(({ name }) =>
        name.startsWith('mutate-pod-gpu-class.'),
      );
      assert.ok(entry);
      return entry;
    };
    const ignoring = gpuClass();
    assert.equal(ignoring.failurePolicy, 'Ignore');
    const skipped = matchWebhook(ignoring, request, match);
    assert.equal(skipped.call, false);
    assert.match(
      'reason' in skipped ? skipped.reason : '',
      /matchCondition errors \(ignored\): requests-gpu: no such key: containers/,
    );

    const failing = gpuClass({ 'mutate-pod-gpu-class': { failurePolicy: 'Fail' } });
    const refused = matchWebhook(failing, request, match);
    assert.equal(refused.call, 'refuse');
    assert.match(
      'message' in refused ? refused.message : '',
      /failed to evaluate match conditions of webhook mutate-pod-gpu-class\.admission-operator\.io: requests-gpu: no such key: containers/,
    );

    // A condition the simulator cannot compile (a Kubernetes-only function) is the simulation's
    // failure, not the request's: it throws, worded for `admit` and the audits alike.
    const kubernetesOnly = {
      ...ignoring,
      matchConditions: [{ name: 'quantity', expression: "quantity('1') == quantity('1')" }],
    };
    assert.throws(
      () => matchWebhook(kubernetesOnly, request, match),
      /^Error: mutate-pod-gpu-class\.admission-operator\.io matchConditions\[quantity\]: this match condition cannot be evaluated outside the API server: /,
    );
  });
});
