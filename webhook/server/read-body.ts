/**
 * Reads a request body under two limits: its own size, and the bytes all bodies being read hold
 * together. The first answers a too-large review; the second keeps slow or stalled senders (which
 * the request timeout ends only after 30 s) from filling the memory the replica lives in.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BadReviewError } from '../admission/review.js';

/**
 * The API server sends object and oldObject of up to 3 MiB each, plus the envelope; 7 MiB is what
 * controller-runtime accepts too.
 */
export const MAX_BODY_BYTES = 7 * 1024 * 1024;
/**
 * Bodies held at once across all requests: four reviews of the largest size, five of the largest
 * the API server sends. A body is copied as it is joined, decoded and parsed, so this bounds the
 * peak a burst of large bodies adds (at 96 MiB one took the resident memory 50 MiB higher:
 * docs/performance/memory.md); a small review takes next to nothing of it.
 */
export const MAX_BUFFERED_BODY_BYTES = 32 * 1024 * 1024;

/** Bytes held by bodies being read, shared by every request of one server. */
export class BodyBudget {
  private held = 0;

  constructor(readonly limit = MAX_BUFFERED_BODY_BYTES) {}

  get bytesHeld(): number {
    return this.held;
  }

  take(bytes: number): boolean {
    if (this.held + bytes > this.limit) return false;
    this.held += bytes;
    return true;
  }

  give(bytes: number): void {
    this.held -= bytes;
  }
}

/**
 * The connection ended before the body did: the caller hung up, or stalled past the request
 * time-out. Nobody is left to answer, and nothing went wrong on our side.
 */
export class BodyAbortedError extends Error {
  constructor(cause?: unknown) {
    super('the connection closed before the request body was read', { cause });
    this.name = 'BodyAbortedError';
  }
}

/**
 * The whole body, or a BadReviewError as soon as the body is known to be refused: 413 when the
 * headers declare more than `limit` (before a byte of it is read) or when the bytes read pass it
 * (a chunked body declares nothing), 503 when the budget is spent. A refused body is left unread;
 * the caller answers at once and drains what follows within bounds (answer-before-body.ts).
 * BodyAbortedError when the connection ends first. The bytes kept stay counted against the
 * budget until the response is done with them.
 */
export function readBody(
  req: IncomingMessage,
  res: ServerResponse,
  limit: number,
  budget: BodyBudget,
): Promise<Buffer> {
  let taken = 0;
  res.once('close', () => {
    budget.give(taken);
    taken = 0;
  });
  return new Promise((resolvePromise, reject) => {
    // Node's parser has already refused a Content-Length that is not one decimal number.
    const declared = Number(req.headers['content-length']);
    if (declared > limit) {
      reject(new BadReviewError(413, `request body of ${declared} bytes exceeds the ${limit}-byte limit`));
      return;
    }
    const chunks: Buffer[] = [];
    const stopReading = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('close', onAbort);
    };
    const refuse = (error: Error): void => {
      stopReading();
      chunks.length = 0;
      budget.give(taken);
      taken = 0;
      reject(error);
    };
    function onData(chunk: Buffer): void {
      if (taken + chunk.length > limit) {
        refuse(new BadReviewError(413, `request body exceeds the ${limit}-byte limit`));
        return;
      }
      if (!budget.take(chunk.length)) {
        refuse(new BadReviewError(503, 'the server is reading too many request bodies at once; try again'));
        return;
      }
      taken += chunk.length;
      chunks.push(chunk);
    }
    function onEnd(): void {
      stopReading();
      resolvePromise(Buffer.concat(chunks, taken));
    }
    // The stream reports a connection that ends mid-body as an error ("aborted"), then closes.
    function onAbort(error?: unknown): void {
      refuse(new BodyAbortedError(error));
    }
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onAbort);
    req.once('close', onAbort);
  });
}
