import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { QuotaIndex } from '../../../../operator/store/quota-index.js';
import { quotaView } from '../../../../webhook/rules/koordinator/quota/quota-view.js';

const L = (key: string): string => `quota.scheduling.koordinator.sh/${key}`;
const quota = (name: string, labels: Record<string, string>, namespaces: string[] = []) =>
  quotaView({
    metadata: {
      name,
      namespace: 'q',
      labels,
      annotations: { [L('namespaces')]: JSON.stringify(namespaces) },
    },
    spec: {},
  });

describe('QuotaIndex', () => {
  it('indexes by name, parent, tree id and bound namespace, and follows moves and deletes', () => {
    const index = new QuotaIndex();
    index.set('top', quota('top', { [L('tree-id')]: 't' }));
    index.set('a', quota('a', { [L('parent')]: 'top', [L('tree-id')]: 't' }, ['ns-a']));
    assert.deepEqual(
      index.children('top').map((q) => q.name),
      ['a'],
    );
    assert.equal(index.boundTo('ns-a')?.name, 'a');
    assert.deepEqual(index.snapshot().trees, { t: ['a', 'top'] });

    index.set('a', quota('a', { [L('tree-id')]: 't' }, ['ns-b']));
    assert.deepEqual(index.children('top'), []);
    assert.deepEqual(
      index
        .children('koordinator-root-quota')
        .map((q) => q.name)
        .sort(),
      ['a', 'top'],
    );
    assert.equal(index.boundTo('ns-a'), undefined);
    assert.equal(index.boundTo('ns-b')?.name, 'a');

    index.delete('a');
    assert.equal(index.get('a'), undefined);
    assert.equal(index.boundTo('ns-b'), undefined);
    assert.deepEqual(index.snapshot().trees, { t: ['top'] });
  });

  it('moves bindingsVersion only for changes that can re-route pods', () => {
    const index = new QuotaIndex();
    index.set('a', quota('a', {}, ['ns-a']));
    const afterAdd = index.bindingsVersion;
    assert.ok(afterAdd > 0);
    index.set('a', quota('a', { [L('is-parent')]: 'true' }, ['ns-a']));
    assert.equal(index.bindingsVersion, afterAdd, 'a label change does not re-route pods');
    index.set('a', quota('a', {}, ['ns-b']));
    assert.equal(index.bindingsVersion, afterAdd + 1);
    index.delete('a');
    assert.equal(index.bindingsVersion, afterAdd + 2);
    index.delete('a');
    assert.equal(index.bindingsVersion, afterAdd + 2);
  });
});
