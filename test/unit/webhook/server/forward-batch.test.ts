/**
 * The wire form of a forwarded batch: what a follower encodes the leader decodes, review by
 * review, byte for byte; anything else is refused with a message naming the review at fault.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BadReviewError } from '../../../../webhook/admission/review.js';
import { decodeBatch, encodeBatch, MAX_BATCH_REVIEWS } from '../../../../webhook/server/forward-batch.js';

describe('forwarded batches', () => {
  it('decode to the reviews encoded, in order, with their paths, byte for byte', () => {
    const items = [
      { path: '/validate-pod', body: Buffer.from('{"a":"\n12\n"}') },
      { path: '/mutate-pod', body: Buffer.from('') },
      { path: '/validate-pod', body: Buffer.from('é'.repeat(1000)) },
    ];
    const decoded = decodeBatch(encodeBatch(items));
    assert.deepEqual(
      decoded.map(({ path, body }) => ({ path, body: body.toString('utf8') })),
      items.map(({ path, body }) => ({ path, body: body.toString('utf8') })),
    );
  });

  it('refuse a batch that is cut short, has no length, a path that is not one, or too many reviews', () => {
    const good = encodeBatch([{ path: '/validate-pod', body: Buffer.from('{}') }]);
    const cases: [string, Buffer, RegExp][] = [
      ['cut short', good.subarray(0, good.length - 1), /review 1 has a bad path or length/],
      ['no length', Buffer.from('/validate-pod\n{}'), /review 1 has no path and length/],
      ['not a path', Buffer.from('validate-pod\n2\n{}'), /review 1 has a bad path or length/],
      [
        'a length that is not a number',
        Buffer.from('/validate-pod\n-2\n{}'),
        /review 1 has a bad path or length/,
      ],
      [
        'a length past the bound',
        Buffer.from('/validate-pod\n99999999\n{}'),
        /review 1 has a bad path or length/,
      ],
      [
        'too many reviews',
        encodeBatch(
          Array.from({ length: MAX_BATCH_REVIEWS + 1 }, () => ({ path: '/p', body: Buffer.from('{}') })),
        ),
        new RegExp(`more than ${MAX_BATCH_REVIEWS} reviews`),
      ],
    ];
    for (const [what, batch, message] of cases) {
      assert.throws(
        () => decodeBatch(batch),
        (error: unknown) => error instanceof BadReviewError && message.test(error.message),
        what,
      );
    }
  });
});
