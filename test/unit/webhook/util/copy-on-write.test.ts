import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JsonObject } from '../../../../webhook/admission/types.js';
import { CopyOnWrite } from '../../../../webhook/util/copy-on-write.js';
import { deepFreeze } from '../../../harness/deep-freeze.js';

const original = (): JsonObject =>
  deepFreeze({
    metadata: { name: 'p', labels: { a: '1' } },
    spec: {
      containers: [
        { name: 'c0', resources: { requests: { cpu: '1' } } },
        { name: 'c1', resources: { requests: { cpu: '2' } } },
      ],
      volumes: [{ name: 'v' }],
    },
  });

describe('CopyOnWrite', () => {
  it('is the original itself until something is written', () => {
    const pod = original();
    const draft = new CopyOnWrite(pod);
    assert.equal(draft.current, pod);
    assert.equal(draft.changed, false);
  });

  it('copies only the path to a write, once, and shares everything else with the frozen original', () => {
    const pod = original();
    const draft = new CopyOnWrite(pod);
    draft.mapAt('spec', 'containers', 1, 'resources', 'requests').memory = '1Gi';
    const requests = draft.mapAt('spec', 'containers', 1, 'resources', 'requests');
    requests.cpu = '3';

    const result = draft.current as typeof pod & { spec: { containers: JsonObject[]; volumes: unknown } };
    const before = pod as typeof result;
    assert.equal(draft.changed, true);
    assert.deepEqual(result.spec.containers[1], {
      name: 'c1',
      resources: { requests: { cpu: '3', memory: '1Gi' } },
    });
    assert.equal(result.metadata, before.metadata);
    assert.equal(result.spec.volumes, before.spec.volumes);
    assert.equal(result.spec.containers[0], before.spec.containers[0]);
    assert.notEqual(result.spec.containers, before.spec.containers);
    // The second write went to the copy the first one made.
    assert.equal(requests, (result.spec.containers[1]?.resources as JsonObject).requests);
    assert.deepEqual(before.spec.containers[1], { name: 'c1', resources: { requests: { cpu: '2' } } });
  });

  it('creates missing maps and replaces a value of the wrong kind on the way', () => {
    const draft = new CopyOnWrite(deepFreeze<JsonObject>({ metadata: { annotations: 'not a map' } }));
    draft.mapAt('metadata', 'annotations').a = 'b';
    draft.listAt('spec', 'tolerations').push({ key: 'k' });
    assert.deepEqual(draft.current, {
      metadata: { annotations: { a: 'b' } },
      spec: { tolerations: [{ key: 'k' }] },
    });
  });

  it('refuses to index a list item that is not there, rather than inventing one', () => {
    const draft = new CopyOnWrite(original());
    assert.throws(() => draft.mapAt('spec', 'containers', 5, 'resources'), RangeError);
    assert.throws(() => draft.mapAt('metadata', 0), RangeError);
  });

  it('copies on write a result another step built by sharing with the original', () => {
    const pod = original();
    const shared = deepFreeze<JsonObject>({ ...pod, metadata: { name: 'p', labels: { a: '2' } } });
    const draft = new CopyOnWrite(pod, shared);
    assert.equal(draft.changed, true);
    draft.mapAt('metadata', 'labels').b = '3';
    assert.deepEqual((draft.current.metadata as JsonObject).labels, { a: '2', b: '3' });
    assert.equal(draft.current.spec, pod.spec);
    draft.replace(pod);
    assert.equal(draft.changed, false);
  });
});
