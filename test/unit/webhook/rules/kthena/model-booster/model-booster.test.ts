import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JsonObject, KubeObject } from '../../../../../../webhook/admission/types.js';
import { mutateModelBooster } from '../../../../../../webhook/rules/kthena/model-booster/mutate-model-booster.js';
import { validateModelBooster } from '../../../../../../webhook/rules/kthena/model-booster/validate-model-booster.js';
import { assertAllowed, decide, errorsOf, type KindOf } from '../serving-requests.js';

const BOOSTER: KindOf = { group: 'workload', kind: 'ModelBooster', resource: 'modelboosters' };

function booster(backend: JsonObject): KubeObject {
  return {
    apiVersion: 'workload.serving.volcano.sh/v1alpha1',
    kind: 'ModelBooster',
    metadata: { name: 'test-model', namespace: 'ml' },
    spec: {
      backend: { name: 'backend1', type: 'vLLM', modelURI: 'hf://Qwen/Qwen2.5-0.5B-Instruct', ...backend },
    },
  };
}

const server = { type: 'server', pods: 1, image: 'test-image:latest' };

describe('validateModelBooster (Kthena v1.0.0 model_validator.go)', () => {
  it('allows a vLLM backend with one server worker (TestValidateModel_NoErrors)', () => {
    assertAllowed(decide(validateModelBooster, BOOSTER, booster({ replicas: 1, workers: [server] })));
  });

  it('refuses more than 1000000 replicas (TestValidateModel_ErrorFormatting)', () => {
    assert.deepEqual(
      errorsOf(decide(validateModelBooster, BOOSTER, booster({ replicas: 1000001, workers: [server] }))),
      ['spec.backend.replicas: Invalid value: 1000001: replicas (1000001) cannot exceed 1000000'],
    );
  });

  it('refuses a vLLM backend with a prefill and a decode worker instead of one server', () => {
    const workers = [
      { type: 'prefill', image: 'vllm' },
      { type: 'decode', image: 'vllm' },
    ];
    assert.deepEqual(errorsOf(decide(validateModelBooster, BOOSTER, booster({ replicas: 1, workers }))), [
      "spec.backend.workers: Invalid value: 2: If backend type is 'vLLM', there must be exactly one worker",
    ]);
  });

  it('shows a worker type JSON-quoted, as apimachinery v0.34 shows a named string type', () => {
    assert.deepEqual(
      errorsOf(
        decide(
          validateModelBooster,
          BOOSTER,
          booster({ type: 'SGLang', replicas: 1, workers: [{ type: '<p>' }] }),
        ),
      ),
      [
        `spec.backend.workers[0].type: Invalid value: "\\u003cp\\u003e": If backend type is 'SGLang', the worker type must be 'server'`,
      ],
    );
  });

  it('lists every error in Kthena order: bounds, images, worker types', () => {
    const workers = [
      { type: 'server', image: 'bad image' },
      { type: 'decode', image: ' \t' },
      { type: 'prefill', image: 'ok\tfine' },
    ];
    assert.deepEqual(
      errorsOf(
        decide(
          validateModelBooster,
          BOOSTER,
          booster({ type: 'vLLMDisaggregated', replicas: 2000000, workers }),
        ),
      ),
      [
        'spec.backend.replicas: Invalid value: 2000000: replicas (2000000) cannot exceed 1000000',
        'spec.backend.workers[0].image: Invalid value: "bad image": invalid container image reference: image cannot contain spaces',
        'spec.backend.workers[1].image: Invalid value: " \\t": invalid container image reference: image cannot be empty or whitespace only',
        `spec.backend.workers[0].type: Invalid value: "server": If backend type is 'vLLMDisaggregated', all workers must be type 'prefill' or 'decode'`,
      ],
    );
  });

  it('allows MindIEDisaggregated controller and coordinator workers and refuses a server one', () => {
    const workers = ['prefill', 'decode', 'controller', 'coordinator', 'server'].map((type) => ({ type }));
    assert.deepEqual(
      errorsOf(
        decide(validateModelBooster, BOOSTER, booster({ type: 'MindIEDisaggregated', replicas: 1, workers })),
      ),
      [
        `spec.backend.workers[4].type: Invalid value: "server": If backend type is 'MindIEDisaggregated', all workers must be type 'prefill', 'decode', 'controller', or 'coordinator' (not 'server')`,
      ],
    );
  });

  it('refuses an object that does not decode as the Go types, naming the field', () => {
    assert.deepEqual(
      errorsOf(
        decide(validateModelBooster, BOOSTER, booster({ replicas: 'two' })),
        'failed to decode object:',
      ),
      [
        'spec.backend.replicas: Invalid value: "two": must be an int32 (a whole number from -2147483648 to 2147483647)',
      ],
    );
  });
});

describe('mutateModelBooster (Kthena v1.0.0 model_mutator.go)', () => {
  it('admits a ModelBooster unchanged on CREATE and UPDATE (Kthena sets no default)', () => {
    for (const operation of ['CREATE', 'UPDATE'] as const) {
      const decision = decide(
        mutateModelBooster,
        BOOSTER,
        booster({ replicas: 1, workers: [server] }),
        operation,
      );
      assert.deepEqual(decision, { allowed: true });
    }
  });

  it('refuses what does not decode', () => {
    assert.deepEqual(
      errorsOf(decide(mutateModelBooster, BOOSTER, booster({ workers: {} })), 'failed to decode object:'),
      ['spec.backend.workers: Invalid value: "object": must be a list'],
    );
  });
});
