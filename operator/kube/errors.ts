/** Classifies errors from client-node calls by HTTP status. */

export function statusOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'number' ? code : undefined;
}

/** 409: AlreadyExists on create, Conflict (stale resourceVersion) on update. */
export const isConflict = (error: unknown): boolean => statusOf(error) === 409;
export const isNotFound = (error: unknown): boolean => statusOf(error) === 404;
