import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type {
  AdmissionRequest,
  Decision,
  JsonObject,
  KubeObject,
} from '../../../../../webhook/admission/types.js';
import { validateModel } from '../../../../../webhook/rules/kthena/validate-model.js';
import { stateSnapshot } from '../../../../harness/state.js';
import { admissionRequest } from '../../../../harness/requests.js';

function model(spec: JsonObject, name = 'llama'): KubeObject {
  return {
    apiVersion: 'registry.volcano.sh/v1alpha1',
    kind: 'Model',
    metadata: { name, namespace: 'ml' },
    spec,
  };
}

/** A vLLM backend with one server worker and a fixed replica count: valid without autoscaling. */
function backend(overrides: JsonObject = {}): JsonObject {
  return {
    name: 'b0',
    type: 'vLLM',
    modelURI: 'hf://org/model',
    minReplicas: 1,
    maxReplicas: 1,
    workers: [{ type: 'server', image: 'vllm/vllm-openai:v0.10.0', replicas: 1, pods: 1 }],
    ...overrides,
  };
}

const POLICY: JsonObject = { metrics: [{ metricName: 'qps', targetValue: '100' }] };

/** A backend that satisfies model-level autoscaling (as the mutator leaves it). */
function scaledBackend(overrides: JsonObject = {}): JsonObject {
  return backend({ maxReplicas: 3, scalingCost: 10, scaleToZeroGracePeriod: '30s', ...overrides });
}

function request(
  object: KubeObject | null,
  operation: AdmissionRequest['operation'] = 'CREATE',
): AdmissionRequest {
  return admissionRequest({
    group: 'registry.volcano.sh',
    version: 'v1alpha1',
    kind: 'Model',
    resource: 'models',
    namespace: 'ml',
    operation,
    object,
  });
}

const state = stateSnapshot();
const decide = (object: KubeObject): Decision => validateModel(request(object), state);

/** The error lines of a Kthena "validation failed" denial. */
function errorsOf(decision: Decision): string[] {
  assert.ok(!decision.allowed, 'expected a denial');
  assert.equal(decision.code, 400);
  const [head, ...lines] = decision.message.split('\n');
  assert.equal(head, 'validation failed:');
  return lines.map((line) => {
    assert.ok(line.startsWith('  - '), line);
    return line.slice(4);
  });
}

function assertAllowed(decision: Decision): void {
  assert.ok(decision.allowed, decision.allowed ? '' : decision.message);
  assert.equal(decision.mutated, undefined);
}

describe('validateModel', () => {
  describe('valid models', () => {
    it('allows a model without autoscaling whose backends have fixed replica counts', () => {
      assertAllowed(
        decide(model({ backends: [backend(), backend({ name: 'b1', minReplicas: 2, maxReplicas: 2 })] })),
      );
    });

    it('allows model-level autoscaling with costs, grace periods and a cost expansion rate', () => {
      assertAllowed(
        decide(
          model({ autoscalingPolicy: POLICY, costExpansionRatePercent: 200, backends: [scaledBackend()] }),
        ),
      );
    });

    it('allows backend-level autoscaling', () => {
      assertAllowed(decide(model({ backends: [backend({ maxReplicas: 4, autoscalingPolicy: POLICY })] })));
    });

    it('allows DELETE and requests without an object', () => {
      assertAllowed(validateModel(request(null, 'DELETE'), state));
      assertAllowed(validateModel(request(null), state));
    });

    it('ignores fields it does not know, as Go does', () => {
      assertAllowed(decide(model({ backends: [backend({ futureField: { x: 1 } })], another: true })));
    });
  });

  it('formats the denial exactly as Kthena: a header, then one bulleted error per line, no trailing newline', () => {
    const decision = decide(model({ backends: [backend({ minReplicas: 3, maxReplicas: 2 })] }));
    assert.ok(!decision.allowed);
    assert.equal(decision.code, 400);
    assert.equal(decision.reason, 'BadRequest');
    assert.equal(
      decision.message,
      'validation failed:\n' +
        '  - spec.backends[0].minReplicas: Invalid value: 3: minReplicas cannot be greater than maxReplicas\n' +
        '  - spec.backends[0]: Invalid value: "minReplicas=3, maxReplicas=2": minReplicas and maxReplicas must be equal and > 0 when no autoscaling is set',
    );
  });

  describe('(1) scaleToZeroGracePeriod', () => {
    const withPeriod = (period: string): KubeObject =>
      model({
        autoscalingPolicy: POLICY,
        costExpansionRatePercent: 200,
        backends: [scaledBackend({ scaleToZeroGracePeriod: period })],
      });

    it('refuses more than 1800 seconds, showing the Go duration quoted', () => {
      assert.deepEqual(errorsOf(decide(withPeriod('31m'))), [
        'spec.backends[0].scaleToZeroGracePeriod: Invalid value: "31m0s": scaleToZeroGracePeriod cannot exceed 1800 seconds',
      ]);
      assert.deepEqual(errorsOf(decide(withPeriod('1800.5s'))), [
        'spec.backends[0].scaleToZeroGracePeriod: Invalid value: "30m0.5s": scaleToZeroGracePeriod cannot exceed 1800 seconds',
      ]);
      assert.deepEqual(errorsOf(decide(withPeriod('30m0.000000001s'))), [
        'spec.backends[0].scaleToZeroGracePeriod: Invalid value: "30m0.000000001s": scaleToZeroGracePeriod cannot exceed 1800 seconds',
      ]);
    });

    it('refuses a negative period', () => {
      assert.deepEqual(errorsOf(decide(withPeriod('-1m'))), [
        'spec.backends[0].scaleToZeroGracePeriod: Invalid value: "-1m0s": scaleToZeroGracePeriod cannot be negative',
      ]);
    });

    it('allows 0s and exactly 1800s', () => {
      for (const period of ['0s', '0', '1800s', '30m', '30m0s']) assertAllowed(decide(withPeriod(period)));
    });

    it('checks the range even without model-level autoscaling', () => {
      assert.deepEqual(errorsOf(decide(model({ backends: [backend({ scaleToZeroGracePeriod: '2h' })] }))), [
        'spec.backends[0].scaleToZeroGracePeriod: Invalid value: "2h0m0s": scaleToZeroGracePeriod cannot exceed 1800 seconds',
        'spec.backends[0].scaleToZeroGracePeriod: Forbidden: scaleToZeroGracePeriod must not be provided when model-level autoscaling is not set',
      ]);
    });
  });

  describe('(2) replica bounds', () => {
    it('refuses minReplicas above maxReplicas, for each backend', () => {
      const decision = decide(
        model({
          autoscalingPolicy: POLICY,
          costExpansionRatePercent: 200,
          backends: [
            scaledBackend({ minReplicas: 5, maxReplicas: 2 }),
            scaledBackend({ name: 'b1' }),
            scaledBackend({ name: 'b2', minReplicas: 4, maxReplicas: 3 }),
          ],
        }),
      );
      assert.deepEqual(errorsOf(decision), [
        'spec.backends[0].minReplicas: Invalid value: 5: minReplicas cannot be greater than maxReplicas',
        'spec.backends[2].minReplicas: Invalid value: 4: minReplicas cannot be greater than maxReplicas',
      ]);
    });

    it('refuses a sum of maxReplicas above 1000000', () => {
      const decision = decide(
        model({
          autoscalingPolicy: POLICY,
          costExpansionRatePercent: 200,
          backends: [
            scaledBackend({ maxReplicas: 600000 }),
            scaledBackend({ name: 'b1', maxReplicas: 400001 }),
          ],
        }),
      );
      assert.deepEqual(errorsOf(decision), [
        'spec.backends: Invalid value: 1000001: sum of maxReplicas across all backends (1000001) cannot exceed 1000000',
      ]);
    });

    it('allows a sum of exactly 1000000', () => {
      assertAllowed(
        decide(
          model({
            autoscalingPolicy: POLICY,
            costExpansionRatePercent: 200,
            backends: [
              scaledBackend({ maxReplicas: 600000 }),
              scaledBackend({ name: 'b1', maxReplicas: 400000 }),
            ],
          }),
        ),
      );
    });

    it('sums exactly where Kthena would wrap around int32 (a divergence)', () => {
      // Kthena's int32 sum of 2147483647 + 1 wraps to -2147483648 and lets this through.
      const decision = decide(
        model({
          autoscalingPolicy: POLICY,
          costExpansionRatePercent: 200,
          backends: [
            scaledBackend({ maxReplicas: 2147483647 }),
            scaledBackend({ name: 'b1', maxReplicas: 1 }),
          ],
        }),
      );
      assert.deepEqual(errorsOf(decision), [
        'spec.backends: Invalid value: 2147483648: sum of maxReplicas across all backends (2147483648) cannot exceed 1000000',
      ]);
    });
  });

  describe('(3) worker images', () => {
    const withImage = (image: string): KubeObject =>
      model({ backends: [backend({ workers: [{ type: 'server', image }] })] });

    it('refuses a whitespace-only image', () => {
      assert.deepEqual(errorsOf(decide(withImage('   '))), [
        'spec.backends[0].workers[0].image: Invalid value: "   ": invalid container image reference: image cannot be empty or whitespace only',
      ]);
      // Go's TrimSpace knows Unicode spaces too.
      assert.deepEqual(errorsOf(decide(withImage('\t\u3000\n'))), [
        'spec.backends[0].workers[0].image: Invalid value: "\\t\\u3000\\n": invalid container image reference: image cannot be empty or whitespace only',
      ]);
    });

    it('refuses an image containing an ASCII space', () => {
      assert.deepEqual(errorsOf(decide(withImage('nginx latest'))), [
        'spec.backends[0].workers[0].image: Invalid value: "nginx latest": invalid container image reference: image cannot contain spaces',
      ]);
      assert.deepEqual(errorsOf(decide(withImage(' nginx'))), [
        'spec.backends[0].workers[0].image: Invalid value: " nginx": invalid container image reference: image cannot contain spaces',
      ]);
    });

    it('allows an empty image, and tabs or newlines inside one (as Kthena did then)', () => {
      for (const image of [
        '',
        'nginx\tlatest',
        'nginx\nlatest',
        'registry.example.com:5000/team/img@sha256:abc',
      ]) {
        assertAllowed(decide(withImage(image)));
      }
    });

    it('checks every worker of every backend, by index', () => {
      const decision = decide(
        model({
          backends: [
            backend(),
            backend({
              name: 'b1',
              type: 'vLLMDisaggregated',
              workers: [
                { type: 'prefill', image: 'ok' },
                { type: 'decode', image: 'not ok' },
              ],
            }),
          ],
        }),
      );
      assert.deepEqual(errorsOf(decision), [
        'spec.backends[1].workers[1].image: Invalid value: "not ok": invalid container image reference: image cannot contain spaces',
      ]);
    });
  });

  describe('(4) autoscaling scope', () => {
    describe('without model-level autoscaling', () => {
      it('forbids cost and scaleToZeroGracePeriod per backend (interleaved), then costExpansionRatePercent', () => {
        const decision = decide(
          model({
            costExpansionRatePercent: 150,
            backends: [
              backend({ scalingCost: 5, scaleToZeroGracePeriod: '30s' }),
              backend({ name: 'b1', scalingCost: 7, scaleToZeroGracePeriod: '10s' }),
            ],
          }),
        );
        assert.deepEqual(errorsOf(decision), [
          'spec.backends[0].cost: Forbidden: cost must not be provided when model-level autoscaling is not set',
          'spec.backends[0].scaleToZeroGracePeriod: Forbidden: scaleToZeroGracePeriod must not be provided when model-level autoscaling is not set',
          'spec.backends[1].cost: Forbidden: cost must not be provided when model-level autoscaling is not set',
          'spec.backends[1].scaleToZeroGracePeriod: Forbidden: scaleToZeroGracePeriod must not be provided when model-level autoscaling is not set',
          'spec.costExpansionRatePercent: Forbidden: costExpansionRatePercent must not be provided when model-level autoscaling is not set',
        ]);
      });

      it('treats a scalingCost of 0 as not provided, and 0 costExpansionRatePercent as provided', () => {
        assertAllowed(decide(model({ backends: [backend({ scalingCost: 0 })] })));
        assert.deepEqual(errorsOf(decide(model({ costExpansionRatePercent: 0, backends: [backend()] }))), [
          'spec.costExpansionRatePercent: Forbidden: costExpansionRatePercent must not be provided when model-level autoscaling is not set',
        ]);
      });

      it('requires minReplicas >= 1 on backends with their own autoscaling', () => {
        const decision = decide(
          model({ backends: [backend({ minReplicas: 0, maxReplicas: 4, autoscalingPolicy: POLICY })] }),
        );
        assert.deepEqual(errorsOf(decision), [
          'spec.backends[0].minReplicas: Invalid value: 0: minReplicas must be >= 1 when backend-level autoscaling is set',
        ]);
      });

      it('counts an empty autoscalingPolicy object as set', () => {
        const decision = decide(
          model({ backends: [backend({ minReplicas: 0, maxReplicas: 4, autoscalingPolicy: {} })] }),
        );
        assert.deepEqual(errorsOf(decision), [
          'spec.backends[0].minReplicas: Invalid value: 0: minReplicas must be >= 1 when backend-level autoscaling is set',
        ]);
      });

      it('with no autoscaling at all, requires minReplicas == maxReplicas on every backend, at the backend path', () => {
        const decision = decide(
          model({
            backends: [
              backend({ minReplicas: 1, maxReplicas: 3 }),
              backend({ name: 'b1' }),
              backend({ name: 'b2', minReplicas: 0, maxReplicas: 2 }),
            ],
          }),
        );
        assert.deepEqual(errorsOf(decision), [
          'spec.backends[0]: Invalid value: "minReplicas=1, maxReplicas=3": minReplicas and maxReplicas must be equal and > 0 when no autoscaling is set',
          'spec.backends[2]: Invalid value: "minReplicas=0, maxReplicas=2": minReplicas and maxReplicas must be equal and > 0 when no autoscaling is set',
        ]);
      });

      it('leaves backends without a policy alone once some backend autoscales (mixed models)', () => {
        assertAllowed(
          decide(
            model({
              backends: [
                backend({ minReplicas: 1, maxReplicas: 4, autoscalingPolicy: POLICY }),
                backend({ name: 'b1', minReplicas: 1, maxReplicas: 9 }),
              ],
            }),
          ),
        );
      });
    });

    describe('with model-level autoscaling only (global scope)', () => {
      it('requires cost and scaleToZeroGracePeriod per backend, a positive minReplicas sum and a cost expansion rate', () => {
        const decision = decide(
          model({
            autoscalingPolicy: POLICY,
            backends: [
              backend({ minReplicas: 0, maxReplicas: 2 }),
              backend({ name: 'b1', minReplicas: 0, maxReplicas: 2, scalingCost: 3 }),
            ],
          }),
        );
        assert.deepEqual(errorsOf(decision), [
          'spec.backends[0].cost: Required value: cost must be provided when model-level autoscaling is set',
          'spec.backends[0].scaleToZeroGracePeriod: Required value: scaleToZeroGracePeriod must be provided when model-level autoscaling is set',
          'spec.backends[1].scaleToZeroGracePeriod: Required value: scaleToZeroGracePeriod must be provided when model-level autoscaling is set',
          'spec.backends: Invalid value: 0: sum of all minReplicas must be >= 1 when model-level autoscaling is set',
          'spec.costExpansionRatePercent: Required value: costExpansionRatePercent must be provided and > 0 when model-level autoscaling is set',
        ]);
      });

      it('refuses a negative minReplicas before the per-backend requirements', () => {
        const decision = decide(
          model({
            autoscalingPolicy: POLICY,
            costExpansionRatePercent: 200,
            backends: [
              scaledBackend({ minReplicas: -1 }),
              scaledBackend({ name: 'b1', minReplicas: 3, scalingCost: 0 }),
            ],
          }),
        );
        assert.deepEqual(errorsOf(decision), [
          'spec.backends[0].minReplicas: Invalid value: -1: minReplicas must be >= 0 when model-level autoscaling is set',
          'spec.backends[1].cost: Required value: cost must be provided when model-level autoscaling is set',
        ]);
      });

      it('accepts a sum of minReplicas of 1 spread over backends, and costExpansionRatePercent 0', () => {
        assertAllowed(
          decide(
            model({
              autoscalingPolicy: {},
              costExpansionRatePercent: 0,
              backends: [scaledBackend({ minReplicas: 0 }), scaledBackend({ name: 'b1', minReplicas: 1 })],
            }),
          ),
        );
      });
    });

    it('with both model-level and backend-level autoscaling, reports only that conflict', () => {
      const decision = decide(
        model({
          autoscalingPolicy: POLICY,
          backends: [
            backend({ minReplicas: 0, maxReplicas: 3, autoscalingPolicy: POLICY }),
            backend({ name: 'b1' }),
          ],
        }),
      );
      assert.deepEqual(errorsOf(decision), [
        'spec.autoscalingPolicyRef: Forbidden: spec.autoscalingPolicyRef and spec.backends[].autoscalingPolicyRef cannot both be set; choose model-level or backend-level autoscaling, not both',
      ]);
    });
  });

  describe('(5) worker types per backend type', () => {
    const withBackend = (overrides: JsonObject): KubeObject => model({ backends: [backend(overrides)] });

    for (const type of ['vLLM', 'SGLang', 'MindIE']) {
      it(`${type}: exactly one worker, of type server`, () => {
        assert.deepEqual(
          errorsOf(
            decide(
              withBackend({
                type,
                workers: [
                  { type: 'server', image: 'a' },
                  { type: 'server', image: 'b' },
                ],
              }),
            ),
          ),
          [
            `spec.backends[0].workers: Invalid value: 2: If backend type is '${type}', there must be exactly one worker`,
          ],
        );
        assert.deepEqual(errorsOf(decide(withBackend({ type, workers: [] }))), [
          `spec.backends[0].workers: Invalid value: 0: If backend type is '${type}', there must be exactly one worker`,
        ]);
        assert.deepEqual(errorsOf(decide(withBackend({ type, workers: [{ type: 'prefill' }] }))), [
          `spec.backends[0].workers[0].type: Invalid value: "prefill": If backend type is '${type}', the worker type must be 'server'`,
        ]);
        assertAllowed(decide(withBackend({ type, workers: [{ type: 'server' }] })));
      });
    }

    it('an omitted worker type is "" here (the CRD defaults it to server before admission)', () => {
      assert.deepEqual(errorsOf(decide(withBackend({ workers: [{ image: 'x' }] }))), [
        `spec.backends[0].workers[0].type: Invalid value: "": If backend type is 'vLLM', the worker type must be 'server'`,
      ]);
    });

    it('counts a missing workers list as zero workers', () => {
      const { workers: _workers, ...withoutWorkers } = backend();
      assert.deepEqual(errorsOf(decide(model({ backends: [withoutWorkers] }))), [
        `spec.backends[0].workers: Invalid value: 0: If backend type is 'vLLM', there must be exactly one worker`,
      ]);
    });

    it('vLLMDisaggregated: every worker prefill or decode, with no count check', () => {
      const decision = decide(
        withBackend({
          type: 'vLLMDisaggregated',
          workers: [{ type: 'prefill' }, { type: 'server' }, { type: 'decode' }, { type: 'controller' }],
        }),
      );
      assert.deepEqual(errorsOf(decision), [
        `spec.backends[0].workers[1].type: Invalid value: "server": If backend type is 'vLLMDisaggregated', all workers must be type 'prefill' or 'decode'`,
        `spec.backends[0].workers[3].type: Invalid value: "controller": If backend type is 'vLLMDisaggregated', all workers must be type 'prefill' or 'decode'`,
      ]);
      assertAllowed(decide(withBackend({ type: 'vLLMDisaggregated', workers: [{ type: 'prefill' }] })));
    });

    it('MindIEDisaggregated: prefill, decode, controller or coordinator, never server', () => {
      const decision = decide(
        withBackend({
          type: 'MindIEDisaggregated',
          workers: [
            { type: 'prefill' },
            { type: 'decode' },
            { type: 'controller' },
            { type: 'coordinator' },
            { type: 'server' },
          ],
        }),
      );
      assert.deepEqual(errorsOf(decision), [
        `spec.backends[0].workers[4].type: Invalid value: "server": If backend type is 'MindIEDisaggregated', all workers must be type 'prefill', 'decode', 'controller', or 'coordinator' (not 'server')`,
      ]);
    });

    it('leaves an unknown backend type to the CRD enum', () => {
      assertAllowed(
        decide(withBackend({ type: 'TensorRT', workers: [{ type: 'anything' }, { type: 'x' }] })),
      );
    });
  });

  describe('(6) LoRA adapter names', () => {
    const adapter = (name: string): JsonObject => ({ name, artifactURL: `hf://org/${name}` });

    it('refuses an adapter named like the Model object (not spec.name)', () => {
      const decision = decide(
        model(
          { name: 'other', backends: [backend({ loraAdapters: [adapter('llama'), adapter('other')] })] },
          'llama',
        ),
      );
      assert.deepEqual(errorsOf(decision), [
        'spec.backends[0].loraAdapters[0].name: Invalid value: "llama": lora name cannot be the same as model name',
      ]);
    });

    it('refuses the second and later uses of a name within one backend, but not across backends', () => {
      const decision = decide(
        model({
          backends: [
            backend({ loraAdapters: [adapter('a'), adapter('b'), adapter('a'), adapter('a')] }),
            backend({ name: 'b1', loraAdapters: [adapter('a')] }),
          ],
        }),
      );
      assert.deepEqual(errorsOf(decision), [
        'spec.backends[0].loraAdapters[2].name: Invalid value: "a": lora name must be unique within the backend',
        'spec.backends[0].loraAdapters[3].name: Invalid value: "a": lora name must be unique within the backend',
      ]);
    });

    it('reports both problems for a repeated adapter named like the model', () => {
      const decision = decide(
        model({ backends: [backend({ loraAdapters: [adapter('llama'), adapter('llama')] })] }),
      );
      assert.deepEqual(errorsOf(decision), [
        'spec.backends[0].loraAdapters[0].name: Invalid value: "llama": lora name cannot be the same as model name',
        'spec.backends[0].loraAdapters[1].name: Invalid value: "llama": lora name cannot be the same as model name',
        'spec.backends[0].loraAdapters[1].name: Invalid value: "llama": lora name must be unique within the backend',
      ]);
    });

    it('with generateName the object name is empty, and so an empty adapter name matches it', () => {
      const object = model({ backends: [backend({ loraAdapters: [adapter('')] })] });
      object.metadata = { generateName: 'llama-', namespace: 'ml' };
      assert.deepEqual(errorsOf(decide(object)), [
        'spec.backends[0].loraAdapters[0].name: Invalid value: "": lora name cannot be the same as model name',
      ]);
    });
  });

  it('accumulates the errors of every rule, in Kthena rule order', () => {
    const decision = decide(
      model({
        backends: [
          backend({
            name: 'b0',
            minReplicas: 4,
            maxReplicas: 2,
            scalingCost: 1,
            scaleToZeroGracePeriod: '-5s',
            workers: [
              { type: 'decode', image: 'a b' },
              { type: 'server', image: ' ' },
            ],
            loraAdapters: [{ name: 'llama', artifactURL: 'hf://x' }],
          }),
        ],
      }),
    );
    assert.deepEqual(errorsOf(decision), [
      'spec.backends[0].scaleToZeroGracePeriod: Invalid value: "-5s": scaleToZeroGracePeriod cannot be negative',
      'spec.backends[0].minReplicas: Invalid value: 4: minReplicas cannot be greater than maxReplicas',
      'spec.backends[0].workers[0].image: Invalid value: "a b": invalid container image reference: image cannot contain spaces',
      'spec.backends[0].workers[1].image: Invalid value: " ": invalid container image reference: image cannot be empty or whitespace only',
      'spec.backends[0].cost: Forbidden: cost must not be provided when model-level autoscaling is not set',
      'spec.backends[0].scaleToZeroGracePeriod: Forbidden: scaleToZeroGracePeriod must not be provided when model-level autoscaling is not set',
      'spec.backends[0]: Invalid value: "minReplicas=4, maxReplicas=2": minReplicas and maxReplicas must be equal and > 0 when no autoscaling is set',
      "spec.backends[0].workers: Invalid value: 2: If backend type is 'vLLM', there must be exactly one worker",
      'spec.backends[0].loraAdapters[0].name: Invalid value: "llama": lora name cannot be the same as model name',
    ]);
  });

  describe('malformed objects (Kthena: "failed to decode object")', () => {
    function decodeErrorsOf(decision: Decision): string[] {
      assert.ok(!decision.allowed, 'expected a denial');
      assert.equal(decision.code, 400);
      const [head, ...lines] = decision.message.split('\n');
      assert.equal(head, 'failed to decode object:');
      return lines.map((line) => line.replace(/^ {2}- /, ''));
    }

    it('names each mistyped field with its path, and runs no rule', () => {
      const decision = decide(
        model({
          costExpansionRatePercent: '200',
          backends: [
            backend({
              minReplicas: '1',
              maxReplicas: 3000000000,
              routeWeight: -1,
              scaleToZeroGracePeriod: '1d',
              workers: [
                {
                  type: 'server',
                  replicas: 1.5,
                  resources: { limits: { cpu: 'lots', memory: '1Gi' }, requests: { cpu: 2 } },
                  affinity: {
                    nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: '10' }] },
                  },
                  config: { anything: ['goes', 1] },
                },
              ],
            }),
          ],
        }),
      );
      assert.deepEqual(decodeErrorsOf(decision), [
        'spec.backends[0].minReplicas: Invalid value: "1": must be an int32 (a whole number from -2147483648 to 2147483647)',
        'spec.backends[0].maxReplicas: Invalid value: 3000000000: must be an int32 (a whole number from -2147483648 to 2147483647)',
        'spec.backends[0].routeWeight: Invalid value: -1: must be a uint32 (a whole number from 0 to 4294967295)',
        'spec.backends[0].scaleToZeroGracePeriod: Invalid value: "1d": must be a duration such as "30s" or "1m30s": unknown unit "d" in duration "1d"',
        'spec.backends[0].workers[0].replicas: Invalid value: 1.5: must be an int32 (a whole number from -2147483648 to 2147483647)',
        'spec.backends[0].workers[0].resources.limits[cpu]: Invalid value: "lots": must be a quantity such as "500m", "2Gi" or 3: quantities must match the regular expression \'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\'',
        'spec.backends[0].workers[0].affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: "10": must be an int32 (a whole number from -2147483648 to 2147483647)',
        'spec.costExpansionRatePercent: Invalid value: "200": must be an int32 (a whole number from -2147483648 to 2147483647)',
      ]);
    });

    it('refuses a spec, a list or a status of the wrong shape', () => {
      assert.deepEqual(decodeErrorsOf(decide(model({ backends: { b0: backend() } }))), [
        'spec.backends: Invalid value: "object": must be a list',
      ]);
      const object = model({ backends: [backend()] });
      object.spec = 'none';
      assert.deepEqual(decodeErrorsOf(decide(object)), ['spec: Invalid value: "none": must be an object']);
      const withStatus = model({ backends: [backend()] });
      withStatus.status = {
        observedGeneration: 'one',
        conditions: [{ type: 'Active', lastTransitionTime: 'yesterday' }],
      };
      assert.deepEqual(decodeErrorsOf(decide(withStatus)), [
        'status.conditions[0].lastTransitionTime: Invalid value: "yesterday": must be an RFC 3339 time such as "2025-01-02T15:04:05Z"',
        'status.observedGeneration: Invalid value: "one": must be an int64 (a whole number from -9223372036854775808 to 9223372036854775807)',
      ]);
    });

    it('checks env, envFrom and the model match too', () => {
      const decision = decide(
        model({
          modelMatch: { headers: { 'x-model': { exact: 1 } } },
          backends: [
            backend({
              env: [
                { name: 'A', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1x' } } },
              ],
              envFrom: [{ configMapRef: { name: 'cm', optional: 'yes' } }],
            }),
          ],
        }),
      );
      assert.deepEqual(decodeErrorsOf(decision), [
        'spec.backends[0].envFrom[0].configMapRef.optional: Invalid value: "yes": must be a boolean',
        'spec.backends[0].env[0].valueFrom.resourceFieldRef.divisor: Invalid value: "1x": must be a quantity such as "500m", "2Gi" or 3: quantities must match the regular expression \'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\'',
        'spec.modelMatch.headers[x-model].exact: Invalid value: 1: must be a string',
      ]);
    });

    it('treats null as absent, as the API server and Go do', () => {
      assertAllowed(
        decide(
          model({
            autoscalingPolicy: null,
            costExpansionRatePercent: null,
            backends: [backend({ scaleToZeroGracePeriod: null })],
          }),
        ),
      );
    });
  });
});
