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
/** Bodies held at once across all requests: a dozen reviews of the largest size. */
export const MAX_BUFFERED_BODY_BYTES = 96 * 1024 * 1024;

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
 * The whole body, or a BadReviewError: 413 past `limit`, 503 when the budget is spent. A refused
 * body is still read to its end, keeping none of it, before the refusal is answered: a sender
 * still writing when the connection closed would see a reset instead of the answer. The request
 * time-out bounds how long that takes. The bytes kept stay counted against the budget until the
 * response is done with them.
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
    const chunks: Buffer[] = [];
    let refusal: BadReviewError | undefined;
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      refusal = new BadReviewError(413, `request body of ${declared} bytes exceeds the ${limit}-byte limit`);
    }
    const refuse = (error: BadReviewError): void => {
      refusal = error;
      chunks.length = 0;
      budget.give(taken);
      taken = 0;
    };
    req.on('data', (chunk: Buffer) => {
      if (refusal) return;
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
    });
    req.once('end', () => {
      if (refusal) reject(refusal);
      else resolvePromise(Buffer.concat(chunks, taken));
    });
    req.once('error', reject);
  });
}
