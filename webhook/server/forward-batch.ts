/**
 * The wire form of a batch of reviews a follower forwards to the leader (quota-forwarder.ts):
 * each review as its webhook's path, its length and its bytes, verbatim, so the leader reads each
 * under the same bounds as a review the API server sends (app.ts), and never parses a review to
 * find where the next one starts. The leader answers a JSON object: `answers`, one per review, in
 * order (null for one it did not decide), and `journal`, the reservations it made that the follower
 * has not seen yet (reservation-journal.ts), from the position the follower sends in JOURNAL_HEADER,
 * and, from a replica that handed the ledger over and decided none of them, `successor`: the new
 * holder's address, where the follower sends those reviews once more (quota-authority.ts).
 */
import { BadReviewError } from '../admission/review.js';
import { MAX_BODY_BYTES } from './read-body.js';

/** The leader's route for forwarded batches: not a webhook, so no configuration ever names it. */
export const FORWARD_BATCH_PATH = '/forwarded-quota-admissions';
/** `<journal id>:<position>`: where the follower's copy of the leader's reservations stands. */
export const JOURNAL_HEADER = 'x-admission-journal';
/**
 * Reviews in one batch: the leader decides a batch in one pass of its event loop, and 256 pod
 * reviews take it tens of milliseconds there (each under a millisecond to read and decide).
 */
export const MAX_BATCH_REVIEWS = 256;
/** Bytes of one batch: room for one review of the largest size; a follower starts the next batch before passing it. */
export const MAX_BATCH_BYTES = MAX_BODY_BYTES + 1024;
/** The longest webhook path of the table is under 60 characters. */
const MAX_PATH_CHARS = 256;

export interface BatchItem {
  path: string;
  body: Buffer;
}

export function encodeBatch(items: readonly BatchItem[]): Buffer {
  const parts: Buffer[] = [];
  for (const { path, body } of items) {
    parts.push(Buffer.from(`${path}\n${body.length}\n`, 'utf8'), body);
  }
  return Buffer.concat(parts);
}

/** The reviews of a batch; a BadReviewError naming what is wrong with it when it is not one. */
export function decodeBatch(batch: Buffer): BatchItem[] {
  const items: BatchItem[] = [];
  let at = 0;
  while (at < batch.length) {
    if (items.length >= MAX_BATCH_REVIEWS) {
      throw new BadReviewError(413, `a forwarded batch holds more than ${MAX_BATCH_REVIEWS} reviews`);
    }
    const pathEnd = batch.indexOf(0x0a, at);
    const lengthEnd = pathEnd < 0 ? -1 : batch.indexOf(0x0a, pathEnd + 1);
    if (pathEnd < 0 || lengthEnd < 0 || pathEnd - at > MAX_PATH_CHARS) {
      throw new BadReviewError(
        400,
        `the forwarded batch's review ${items.length + 1} has no path and length`,
      );
    }
    const path = batch.toString('utf8', at, pathEnd);
    const lengthText = batch.toString('latin1', pathEnd + 1, lengthEnd);
    const length = /^\d{1,8}$/.test(lengthText) ? Number(lengthText) : Number.NaN;
    const start = lengthEnd + 1;
    if (!path.startsWith('/') || !(length <= MAX_BODY_BYTES) || start + length > batch.length) {
      throw new BadReviewError(
        400,
        `the forwarded batch's review ${items.length + 1} has a bad path or length`,
      );
    }
    items.push({ path, body: batch.subarray(start, start + length) });
    at = start + length;
  }
  return items;
}
