/** Classifies errors from client-node calls by HTTP status. */

export function statusOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'number' ? code : undefined;
}

/** 409: AlreadyExists on create, Conflict (stale resourceVersion) on update. */
export const isConflict = (error: unknown): boolean => statusOf(error) === 409;
export const isNotFound = (error: unknown): boolean => statusOf(error) === 404;

/** What the API server said in a client-node error (its Status message), else the error's own message. */
export function messageOf(error: unknown): string {
  const body = (error as { body?: unknown }).body;
  if (typeof body === 'string') {
    try {
      return (JSON.parse(body) as { message?: string }).message ?? body;
    } catch {
      return body;
    }
  }
  return error instanceof Error ? error.message : String(error);
}
