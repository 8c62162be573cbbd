import { setTimeout as sleepFor } from 'node:timers/promises';
import { statusOf } from './errors.js';

/** At most this long between two tries, whatever Retry-After asks. */
const MAX_WAIT_MS = 10_000;

/** Seconds from the Retry-After header of a client-node error, if it has a usable one. */
function retryAfterMs(error: unknown): number | undefined {
  const headers = (error as { headers?: unknown }).headers;
  if (typeof headers !== 'object' || headers === null) return undefined;
  const value = (headers as Record<string, unknown>)['retry-after'];
  const seconds = Number(typeof value === 'string' ? value : NaN);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}

/**
 * Runs `call`, trying again while the API server answers 429 or 503: it says so under priority
 * and fairness, and for a resource whose storage is still initializing, which is every call
 * in the first moments after its CRD is created (an install that adds the PolicyReport CRDs,
 * then an audit). Waits what Retry-After asks (1 s when it asks nothing, at most 10 s), for at
 * most `budgetMs` in all; then, or on any other error, the error is the caller's.
 */
export async function retryWhenBusy<T>(
  call: () => Promise<T>,
  budgetMs = 30_000,
  sleep: (ms: number) => Promise<unknown> = sleepFor,
): Promise<T> {
  let waited = 0;
  for (;;) {
    try {
      return await call();
    } catch (error) {
      const status = statusOf(error);
      if (status !== 429 && status !== 503) throw error;
      const wait = Math.min(retryAfterMs(error) ?? 1000, MAX_WAIT_MS);
      if (waited + wait > budgetMs) throw error;
      await sleep(wait);
      waited += wait;
    }
  }
}
