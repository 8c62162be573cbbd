import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseFeatureGates } from '../../../../webhook/feature-gates.js';
import { webhookTable } from '../../../../webhook/table.js';
import { CelError, compileCel, type CelValue } from '../../../../webhook/chain/cel.js';

const run = (expression: string, variables: Record<string, CelValue> = {}): unknown =>
  compileCel(expression).evaluate(variables);

describe('CEL for match conditions', () => {
  it('parses every match condition the table can produce', () => {
    const table = webhookTable({
      namespace: 'admission-system',
      excludedNamespaces: [],
      tierLabelKey: 'tenant.kubenexus.io/tier',
      gpuResourceNames: ['nvidia.com/gpu', 'amd.com/gpu'],
      configMaps: [
        { namespace: 'admission-system', name: 'gpu-tier-mapping' },
        { namespace: 'koordinator-system', name: 'slo-controller-config' },
      ],
      koordinatorNamespace: 'koordinator-system',
      gates: parseFeatureGates(''),
    });
    const conditions = table.flatMap((entry) => entry.matchConditions);
    assert.ok(conditions.length >= 3);
    for (const condition of conditions)
      assert.doesNotThrow(() => compileCel(condition.expression), condition.name);
  });

  it('errs on an absent field, and lets || and && absorb the error as CEL does', () => {
    const object = { metadata: {} };
    assert.ok(run('object.metadata.labels == null', { object }) instanceof CelError);
    assert.equal(run("true || object.metadata.labels['x'] == 'y'", { object }), true);
    assert.equal(run("object.metadata.labels['x'] == 'y' || true", { object }), true);
    assert.equal(run("false && object.metadata.labels['x'] == 'y'", { object }), false);
    assert.ok(run("false || object.metadata.labels['x'] == 'y'", { object }) instanceof CelError);
  });

  it('reads a map with keys named like Object.prototype members as any other map', () => {
    const labels = JSON.parse('{"constructor":"a","__proto__":"b","toString":"c"}') as CelValue;
    const object = {
      metadata: { labels },
      spec: { resources: { requests: { constructor: '1', cpu: '2' } } },
    };
    assert.equal(run("object.metadata.labels['constructor'] == 'a'", { object }), true);
    assert.equal(run("object.metadata.labels['__proto__'] == 'b'", { object }), true);
    assert.equal(
      run("'toString' in object.metadata.labels && !('valueOf' in object.metadata.labels)", { object }),
      true,
    );
    assert.equal(run("object.spec.resources.requests.cpu == '2'", { object }), true);
    assert.equal(run('size(object.spec.resources.requests) == 2', { object }), true);
  });

  it('evaluates has(), in, exists, all and ternaries', () => {
    const object: CelValue = {
      metadata: { labels: { a: 'b' } },
      spec: { containers: [{ resources: { limits: { 'nvidia.com/gpu': '1' } } }, { name: 'x' }] },
    };
    assert.equal(run('has(object.metadata.labels)', { object }), true);
    assert.equal(run('has(object.metadata.annotations)', { object }), false);
    assert.equal(run("'a' in object.metadata.labels", { object }), true);
    assert.equal(run("'z' in ['x', 'y']"), false);
    assert.equal(
      run(
        "object.spec.containers.exists(c, has(c.resources) && has(c.resources.limits) && ['nvidia.com/gpu'].exists(r, r in c.resources.limits))",
        { object },
      ),
      true,
    );
    assert.equal(run('object.spec.containers.all(c, has(c.resources))', { object }), false);
    assert.equal(run("size(object.spec.containers) == 2 ? 'two' : 'other'", { object }), 'two');
    assert.equal(run("'prefix-x'.startsWith('prefix')"), true);
  });

  it('refuses what it does not understand instead of guessing', () => {
    // Kubernetes' own CEL library (quantity(), isSorted(), ...) is not CEL's: the library lacks it.
    assert.throws(
      () => compileCel("quantity(object.spec.containers[0].resources.requests.cpu) == quantity('1')"),
      /no matching overload for 'quantity\(dyn\)'/,
    );
    assert.throws(() => compileCel('object.spec.containers.exists(c,'), /unexpected token/i);
    // Beyond the subset once written by hand, standard CEL evaluates as the API server's does.
    const object: CelValue = { spec: { containers: [{ name: 'a' }, { name: 'b' }] } };
    assert.deepEqual(run('object.spec.containers.map(c, c.name)', { object }), ['a', 'b']);
    assert.equal(run('1 + 2'), 3);
  });
});
