import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Decision, JsonObject, KubeObject } from '../../../../../../webhook/admission/types.js';
import { validateModelRoute } from '../../../../../../webhook/rules/kthena/router/validate-model-route.js';
import { validateModelServer } from '../../../../../../webhook/rules/kthena/router/validate-model-server.js';
import { assertAllowed, decide, errorsOf, type KindOf } from '../serving-requests.js';

const ROUTE: KindOf = { group: 'networking', kind: 'ModelRoute', resource: 'modelroutes' };
const SERVER: KindOf = { group: 'networking', kind: 'ModelServer', resource: 'modelservers' };

const route = (spec: JsonObject): KubeObject => ({
  apiVersion: 'networking.serving.volcano.sh/v1alpha1',
  kind: 'ModelRoute',
  metadata: { name: 'r', namespace: 'ml' },
  spec,
});
const target = (modelServerName: string, weight?: number): JsonObject => ({
  modelServerName,
  ...(weight === undefined ? {} : { weight }),
});
const rules = [{ name: 'default', targetModels: [target('server-a', 70), target('server-b', 30)] }];
/** The router's refusal text as it joins its lines. */
const reasonOf = (decision: Decision): string => {
  assert.ok(!decision.allowed, 'expected a denial');
  assert.equal(decision.code, 400);
  return decision.message;
};
const reason = (spec: JsonObject): string => reasonOf(decide(validateModelRoute, ROUTE, route(spec)));

describe('validateModelRoute (Kthena v1.0.0 kthena-router/webhook/validator.go, its TestValidateModelRoute)', () => {
  it('allows a model name, LoRA adapters or both, and default and zero weights', () => {
    const specs: JsonObject[] = [
      { modelName: 'm', rules },
      { loraAdapters: ['a', 'b'], rules },
      { modelName: 'm', loraAdapters: ['a'], rules },
      { modelName: 'm', rules: [{ targetModels: [target('a'), target('b', 0)] }] },
    ];
    for (const spec of specs) {
      assertAllowed(decide(validateModelRoute, ROUTE, route(spec)));
    }
  });

  it('words each refusal as the upstream test expects', () => {
    assert.equal(
      reason({ rules }),
      'validation failed:   - spec: Required value: either modelName or loraAdapters must be specified',
    );
    assert.equal(
      reason({ loraAdapters: ['', 'b', ''], rules }),
      'validation failed:   - spec.loraAdapters[0]: Invalid value: "": lora adapter name cannot be an empty string  - spec.loraAdapters[2]: Invalid value: "": lora adapter name cannot be an empty string',
    );
    assert.equal(
      reason({ modelName: 'm', rules: [...rules, { targetModels: [] }] }),
      'validation failed:   - spec.rules[1].targetModels: Required value: each rule must have at least one target model',
    );
    assert.equal(
      reason({ modelName: 'm', rules: [{ targetModels: [target('', 10)] }] }),
      'validation failed:   - spec.rules[0].targetModels[0].modelServerName: Invalid value: "": modelServerName cannot be an empty string',
    );
    assert.equal(
      reason({ modelName: 'm', rules: [{ targetModels: [target('a', 0), target('b', 0)] }] }),
      'validation failed:   - spec.rules[0].targetModels: Invalid value: 0: total weight must be greater than zero',
    );
    assert.equal(
      reason({
        modelName: 'm',
        rules: [{ modelMatch: { headers: { 'x-user': { regex: '[' } } }, targetModels: [target('a')] }],
      }),
      'validation failed:   - spec.rules[0].modelMatch.headers[x-user].regex: Invalid value: "[": error parsing regexp: missing closing ]: `[`',
    );
    assert.equal(
      reason({
        modelName: 'm',
        rules: [{ modelMatch: { uri: { regex: '[' } }, targetModels: [target('a')] }],
      }),
      'validation failed:   - spec.rules[0].modelMatch.uri.regex: Invalid value: "[": error parsing regexp: missing closing ]: `[`',
    );
    assert.equal(
      reason({ modelName: 'm', rules: [null] }),
      'validation failed:   - spec.rules[0]: Invalid value: null: rule must not be nil',
    );
    assert.equal(
      reason({ rules: [{ targetModels: [] }] }),
      'validation failed:   - spec: Required value: either modelName or loraAdapters must be specified  - spec.rules[0].targetModels: Required value: each rule must have at least one target model',
    );
  });

  it('sums weights as Go’s uint32, which wraps to zero at 2^32', () => {
    assert.equal(
      reason({ modelName: 'm', rules: [{ targetModels: [target('a', 4294967295), target('b', 1)] }] }),
      'validation failed:   - spec.rules[0].targetModels: Invalid value: 0: total weight must be greater than zero',
    );
  });

  it('refuses what does not decode, as failed to decode modelRoute', () => {
    assert.deepEqual(
      errorsOf(decide(validateModelRoute, ROUTE, route({ modelName: 3 })), 'failed to decode modelRoute:'),
      ['spec.modelName: Invalid value: 3: must be a string'],
    );
  });
});

describe('validateModelServer (Kthena v1.0.0: checks nothing)', () => {
  const server = (spec: JsonObject): KubeObject => ({
    apiVersion: 'networking.serving.volcano.sh/v1alpha1',
    kind: 'ModelServer',
    metadata: { name: 's', namespace: 'ml' },
    spec,
  });

  it('admits any ModelServer that decodes', () => {
    assertAllowed(
      decide(validateModelServer, SERVER, server({ inferenceEngine: 'vLLM', workloadPort: { port: 8000 } })),
    );
    assertAllowed(decide(validateModelServer, SERVER, server({})));
  });

  it('refuses what does not decode, as failed to decode modelServer', () => {
    const [error] = errorsOf(
      decide(validateModelServer, SERVER, server({ trafficPolicy: { timeout: 'soon' } })),
      'failed to decode modelServer:',
    );
    assert.match(
      error ?? '',
      /^spec\.trafficPolicy\.timeout: Invalid value: "soon": must be a duration such as "30s" or "1m30s"/,
    );
  });
});
