/**
 * The one loop that lists a collection a page at a time, for everything that lists in pages (the
 * audit, the store's reflector, the PolicyReports' cleanup, the benches): it follows each page's
 * `metadata.continue` to the end, and checks at the end that it listed as many objects as the API
 * server counted (`remainingItemCount`, which it gives for lists without a selector). A loop of its
 * own in each caller is how a list stopped after its first page unseen; here a page left unread is an
 * IncompleteList, never a shorter list.
 *
 * A continue token carries the snapshot of the list's first page, and expires when etcd compacts it
 * (every five minutes by default): a long list meets a 410. The API server then offers a token for
 * the rest of the list from its newest snapshot. With `resumeExpired` the loop takes it (the list is
 * complete, but objects created or deleted meanwhile may be missing or extra, and its pages are
 * marked `resumed`); without it, or when no token is offered, the 410 is thrown: the reflector, whose
 * watch must start from the list's own snapshot, relists instead.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { JsonObject } from '../../webhook/admission/types.js';
import { apiGet, ApiStatusError, METADATA_ONLY, readJson } from './api-stream.js';
import { retryWhenBusy } from './retry-when-busy.js';

export interface PagedListOptions {
  /** Objects per request; read before each request (the reflector halves it after a heavy page). */
  limit: number | (() => number);
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  /** Each object's metadata only: for a caller that needs names, not contents. */
  metadataOnly?: boolean;
  /** On a 410 that offers a token, go on from the API server's newest snapshot (see above). */
  resumeExpired?: boolean;
  /**
   * Reads one page: by default a plain GET, tried again while the API server says it is busy (429,
   * 503); the reflector's runs under its watchdog.
   */
  fetchPage?: (query: URLSearchParams) => Promise<unknown>;
}

export interface ListPage {
  items: JsonObject[];
  /** The snapshot the page was read from (a list's resourceVersion). */
  resourceVersion: string | undefined;
  /** Read with a token a 410 offered, or after such a page: from a newer snapshot than the first. */
  resumed: boolean;
  /**
   * On the last page: the objects the list holds, as the API server counted them where it did (no
   * selector), else as listed; undefined on the pages before.
   */
  held: number | undefined;
}

/** The list could not be read in full: what it returned is not the collection. */
export class IncompleteList extends Error {
  override name = 'IncompleteList';
}

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every page of the collection at `path`, in order; throws IncompleteList rather than end short. */
export async function* pagedList(
  kubeConfig: KubeConfig,
  path: string,
  options: PagedListOptions,
): AsyncGenerator<ListPage, void, undefined> {
  const fetchPage =
    options.fetchPage ??
    ((query: URLSearchParams): Promise<unknown> =>
      retryWhenBusy(async () =>
        readJson(
          await apiGet(
            kubeConfig,
            path,
            query,
            new AbortController().signal,
            options.metadataOnly ? METADATA_ONLY : undefined,
          ),
        ),
      ));
  let token: string | undefined;
  let resumed = false;
  let listed = 0;
  /** What the API server last counted: the objects before the last page read, in it and after it. */
  let counted: number | undefined;
  do {
    const limit = typeof options.limit === 'number' ? options.limit : options.limit();
    const query = new URLSearchParams({ limit: String(limit) });
    if (options.labelSelector) query.set('labelSelector', options.labelSelector);
    if (options.fieldSelector) query.set('fieldSelector', options.fieldSelector);
    if (token) query.set('continue', token);
    let page: unknown;
    try {
      page = await fetchPage(query);
    } catch (error) {
      if (!(error instanceof ApiStatusError) || error.code !== 410 || token === undefined) throw error;
      if (!options.resumeExpired) throw error;
      if (error.continueToken === undefined) {
        throw new IncompleteList(
          `${path}: the list's snapshot expired after ${listed} objects and the API server offered no way to resume it: ${error.message}`,
        );
      }
      token = error.continueToken;
      resumed = true;
      continue;
    }
    // An empty list of metadata only (PartialObjectMetadataList) comes with items null.
    const raw = isObject(page) ? (page.items ?? []) : undefined;
    if (!isObject(page) || !Array.isArray(raw))
      throw new IncompleteList(`${path}: the API server's answer is not a list`);
    const metadata = isObject(page.metadata) ? page.metadata : {};
    const items = raw.filter(isObject);
    if (items.length !== raw.length)
      throw new IncompleteList(`${path}: the list holds items that are not objects`);
    listed += items.length;
    const remaining = metadata.remainingItemCount;
    if (typeof remaining === 'number') counted = listed + remaining;
    token = typeof metadata.continue === 'string' && metadata.continue !== '' ? metadata.continue : undefined;
    if (token === undefined && counted !== undefined && counted !== listed) {
      throw new IncompleteList(
        `${path}: the API server counted ${counted} objects, the list's pages held ${listed}`,
      );
    }
    yield {
      items,
      resourceVersion: typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : undefined,
      resumed,
      held: token === undefined ? (counted ?? listed) : undefined,
    };
  } while (token !== undefined);
}
