/**
 * A list taken page by page, each item trimmed as its page arrives. One request for 3,000 pods
 * parses (and, for typed lists, deserialises) them all at once, and the heap grown for that peak
 * stays resident long after the store has kept its few fields of each; pages of 500, client-go's
 * reflector default, keep the peak at one page. Every page after the first is served from the
 * first page's snapshot (the continue token pins it), so the items and the resourceVersion the
 * watch resumes from agree as for a single list.
 */
import type { KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';

export const LIST_PAGE_SIZE = 500;

export interface PageRequest {
  limit: number;
  _continue?: string;
}

/** A list page as client-node returns it: typed lists say `_continue`, custom-object lists `continue`. */
type Page<T extends KubernetesObject> = KubernetesListObject<T> & {
  metadata?: { resourceVersion?: string; _continue?: string; continue?: string };
};

export async function pagedList<T extends KubernetesObject>(
  fetchPage: (request: PageRequest) => Promise<KubernetesListObject<T>>,
  trim: (item: T) => void,
  pageSize = LIST_PAGE_SIZE,
): Promise<KubernetesListObject<T>> {
  const items: T[] = [];
  const keep = (page: Page<T>): string | undefined => {
    for (const item of page.items) {
      trim(item);
      items.push(item);
    }
    return page.metadata?._continue || page.metadata?.continue || undefined;
  };
  const first: Page<T> = await fetchPage({ limit: pageSize });
  let token = keep(first);
  while (token) token = keep(await fetchPage({ limit: pageSize, _continue: token }));
  const resourceVersion = first.metadata?.resourceVersion;
  return {
    ...(first.apiVersion ? { apiVersion: first.apiVersion } : {}),
    ...(first.kind ? { kind: first.kind } : {}),
    metadata: resourceVersion ? { resourceVersion } : {},
    items,
  };
}

/**
 * managedFields, often the larger part of a small object's metadata, is read by no view, and the
 * informer caches the very object it lists, so it is dropped before the cache keeps it.
 */
export function dropManagedFields(object: KubernetesObject): void {
  if (object.metadata) delete object.metadata.managedFields;
}
