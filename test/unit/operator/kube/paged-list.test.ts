import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import { dropManagedFields, pagedList, type PageRequest } from '../../../../operator/kube/paged-list.js';

const object = (name: string): KubernetesObject => ({
  metadata: { name, managedFields: [{ manager: 'kubectl' }] },
});

describe('pagedList', () => {
  it('follows continue tokens of typed lists (_continue) and custom-object lists (continue)', async () => {
    for (const field of ['_continue', 'continue'] as const) {
      const requests: PageRequest[] = [];
      const pages = [
        { metadata: { resourceVersion: '42', [field]: 'a' }, items: [object('p0'), object('p1')] },
        { metadata: { resourceVersion: '42', [field]: 'b' }, items: [object('p2')] },
        { metadata: { resourceVersion: '42' }, items: [object('p3')] },
      ];
      const list = await pagedList(
        (request) => {
          requests.push(request);
          return Promise.resolve(pages[requests.length - 1] as KubernetesListObject<KubernetesObject>);
        },
        dropManagedFields,
        2,
      );
      assert.deepEqual(requests, [{ limit: 2 }, { limit: 2, _continue: 'a' }, { limit: 2, _continue: 'b' }]);
      assert.deepEqual(list, {
        metadata: { resourceVersion: '42' },
        items: ['p0', 'p1', 'p2', 'p3'].map((name) => ({ metadata: { name } })),
      });
    }
  });

  it('trims every item as its page arrives', async () => {
    const seen: string[] = [];
    const list = await pagedList(
      () => Promise.resolve({ apiVersion: 'v1', kind: 'PodList', metadata: {}, items: [object('only')] }),
      (item) => {
        seen.push(item.metadata?.name ?? '');
        item.metadata = { name: 'trimmed' };
      },
    );
    assert.deepEqual(seen, ['only']);
    assert.deepEqual(list, {
      apiVersion: 'v1',
      kind: 'PodList',
      metadata: {},
      items: [{ metadata: { name: 'trimmed' } }],
    });
  });

  it('passes a failed page on to the informer, which relists from the start', async () => {
    let calls = 0;
    await assert.rejects(
      pagedList((request) => {
        calls += 1;
        if (request._continue) return Promise.reject(new Error('410 Gone: the continue token expired'));
        return Promise.resolve({
          metadata: { continue: 'x' },
          items: [],
        } as KubernetesListObject<KubernetesObject>);
      }, dropManagedFields),
      /expired/,
    );
    assert.equal(calls, 2);
  });
});
