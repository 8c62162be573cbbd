/**
 * The one paging loop, against a scripted collection: every page followed to the end, the API
 * server's count checked against what was listed, a 410 on an expired snapshot resumed where the
 * caller allows and the API server offers a token, and failing loudly where not.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterEach, describe, it } from 'node:test';
import type { KubeConfig } from '@kubernetes/client-node';
import { ApiStatusError } from '../../../../operator/kube/api-stream.js';
import {
  IncompleteList,
  pagedList,
  type ListPage,
  type PagedListOptions,
} from '../../../../operator/kube/paged-list.js';
import { loopbackKubeConfig } from '../../../harness/loopback-kubeconfig.js';

let server: Server | undefined;
async function closeServer(): Promise<void> {
  const closing = server;
  server = undefined;
  if (closing) await new Promise((done) => closing.close(done));
}
afterEach(closeServer);

interface Collection {
  names: string[];
  /** remainingItemCount as the server would give it (no selector); `lie` adds to it. */
  count?: boolean;
  lie?: number;
  /** An empty page's items as null, as a PartialObjectMetadataList sends them. */
  nullWhenEmpty?: boolean;
  /** Answer the request with this continue token with a 410 (offering `offer` as the rest's token). */
  expire?: { token: string; offer?: string };
}

/** Serves `collection` a page at a time; `continue` is the index of the page's first object. */
async function serve(collection: Collection, requests: IncomingMessage[] = []): Promise<KubeConfig> {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    requests.push(req);
    const url = new URL(req.url ?? '/', 'http://localhost');
    const token = url.searchParams.get('continue');
    res.setHeader('Content-Type', 'application/json');
    if (collection.expire && token === collection.expire.token) {
      res.statusCode = 410;
      res.end(
        JSON.stringify({
          kind: 'Status',
          status: 'Failure',
          reason: 'Expired',
          code: 410,
          message: 'The provided continue parameter is too old to display a consistent list result.',
          metadata: collection.expire.offer ? { continue: collection.expire.offer } : {},
        }),
      );
      return;
    }
    const start = token ? Number(token.replace(/^\D+/, '')) : 0;
    const limit = Number(url.searchParams.get('limit'));
    const items = collection.names.slice(start, start + limit).map((name) => ({ metadata: { name } }));
    const next = start + limit < collection.names.length ? `at-${start + limit}` : undefined;
    const remaining = collection.names.length - start - items.length + (collection.lie ?? 0);
    res.end(
      JSON.stringify({
        kind: 'List',
        metadata: {
          resourceVersion: '7',
          ...(next ? { continue: next } : {}),
          ...(next && collection.count !== false ? { remainingItemCount: remaining } : {}),
        },
        items: items.length === 0 && collection.nullWhenEmpty ? null : items,
      }),
    );
  });
  await new Promise<void>((done) => server?.listen(0, '127.0.0.1', done));
  return loopbackKubeConfig(server);
}

const names = (count: number): string[] =>
  Array.from({ length: count }, (_, i) => `o-${String(i).padStart(3, '0')}`);

async function readAll(kubeConfig: KubeConfig, options: PagedListOptions): Promise<ListPage[]> {
  const pages: ListPage[] = [];
  for await (const page of pagedList(kubeConfig, '/api/v1/pods', options)) pages.push(page);
  return pages;
}

const namesOf = (pages: readonly ListPage[]): string[] =>
  pages.flatMap((page) => page.items.map((item) => (item.metadata as { name: string }).name));

describe('pagedList', () => {
  it('follows every page to the end, and gives the count on the last', async () => {
    const kubeConfig = await serve({ names: names(23) });
    const pages = await readAll(kubeConfig, { limit: 5 });
    assert.equal(pages.length, 5);
    assert.deepEqual(namesOf(pages), names(23));
    assert.deepEqual(
      pages.map((page) => page.held),
      [undefined, undefined, undefined, undefined, 23],
    );
    assert.ok(pages.every((page) => !page.resumed && page.resourceVersion === '7'));
  });

  it('reads an empty collection (items [] or, metadata only, null) as one empty page holding 0', async () => {
    for (const nullWhenEmpty of [false, true]) {
      const pages = await readAll(await serve({ names: [], nullWhenEmpty }), { limit: 5 });
      assert.deepEqual(
        pages.map((page) => [page.items.length, page.held]),
        [[0, 0]],
      );
      await closeServer();
    }
  });

  it('counts what it listed where the server does not count (a selector), and sends the selectors', async () => {
    const requests: IncomingMessage[] = [];
    const kubeConfig = await serve({ names: names(7), count: false }, requests);
    const pages = await readAll(kubeConfig, { limit: 3, labelSelector: 'a=b', fieldSelector: 'x=y' });
    assert.equal(pages.at(-1)?.held, 7);
    const query = new URL(requests[0]?.url ?? '', 'http://localhost').searchParams;
    assert.equal(query.get('labelSelector'), 'a=b');
    assert.equal(query.get('fieldSelector'), 'x=y');
  });

  it('throws IncompleteList when its pages hold fewer objects than the server counted', async () => {
    const kubeConfig = await serve({ names: names(10), lie: 2 });
    await assert.rejects(
      readAll(kubeConfig, { limit: 4 }),
      (error: unknown) =>
        error instanceof IncompleteList &&
        /the API server counted 12 objects, the list's pages held 10/.test(error.message),
    );
  });

  it('resumes from the token a 410 offers, pages marked, where the caller allows', async () => {
    // The rest of the list from the newer snapshot: from the same place on.
    const kubeConfig = await serve({ names: names(12), expire: { token: 'at-8', offer: 'again-8' } });
    const pages = await readAll(kubeConfig, { limit: 4, resumeExpired: true });
    assert.deepEqual(namesOf(pages), names(12));
    assert.deepEqual(
      pages.map((page) => page.resumed),
      [false, false, true],
    );
    assert.equal(pages.at(-1)?.held, 12);
  });

  it('throws the 410 where the caller needs one snapshot, and IncompleteList when no token is offered', async () => {
    const expiring = await serve({ names: names(12), expire: { token: 'at-4', offer: 'again-4' } });
    await assert.rejects(
      readAll(expiring, { limit: 4 }),
      (error: unknown) =>
        error instanceof ApiStatusError && error.code === 410 && error.continueToken === 'again-4',
    );
    await closeServer();
    const unresumable = await serve({ names: names(12), expire: { token: 'at-4' } });
    await assert.rejects(
      readAll(unresumable, { limit: 4, resumeExpired: true }),
      (error: unknown) =>
        error instanceof IncompleteList &&
        /snapshot expired after 4 objects and the API server offered no way to resume it/.test(error.message),
    );
  });

  it('asks for metadata only where told, and reads the limit before each request', async () => {
    const requests: IncomingMessage[] = [];
    const kubeConfig = await serve({ names: names(9) }, requests);
    let limit = 4;
    const pages = await readAll(kubeConfig, {
      limit: () => limit--,
      metadataOnly: true,
    });
    assert.deepEqual(namesOf(pages), names(9));
    assert.deepEqual(
      requests.map((request) => new URL(request.url ?? '', 'http://localhost').searchParams.get('limit')),
      ['4', '3', '2'],
    );
    assert.match(requests[0]?.headers.accept ?? '', /as=PartialObjectMetadataList;g=meta\.k8s\.io;v=v1/);
  });
});
