/**
 * A deadline for one call of a client-node API: past it the request is aborted, which closes its
 * connection. Racing the call against a timer instead leaves the request waiting on its connection
 * for undici's own timeouts (five minutes): on a connection that went silent under it (a half-open
 * TCP connection, a frozen proxy) that is a socket and a request held for nothing, per call.
 */
import { Observable, type ConfigurationOptions } from '@kubernetes/client-node';

/**
 * The bound of the operator's calls outside watches and lists (an Event, a Secret or a webhook
 * configuration read or written): one object each, answered in milliseconds by a live API server,
 * whose own bound for such a request is a minute.
 */
export const API_CALL_TIMEOUT_MS = 30_000;

/**
 * Per-call options for an API client's call (its object-parameter form, which takes the
 * observable middleware) that abort it after `timeoutMs`, the client's own middleware kept.
 */
export function abortAfter(timeoutMs: number): ConfigurationOptions {
  return {
    middleware: [
      {
        pre: (context) => {
          context.setSignal(AbortSignal.timeout(timeoutMs));
          return new Observable(Promise.resolve(context));
        },
        post: (response) => new Observable(Promise.resolve(response)),
      },
    ],
    middlewareMergeStrategy: 'append',
  };
}
