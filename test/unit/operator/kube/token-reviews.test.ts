/**
 * TokenReviews: what a bearer token costs the API server. The API server's own token is reviewed
 * once a minute whatever the traffic, a flood of invented tokens cannot push it out or queue
 * reviews without bound, and a failing review does not refuse a token already accepted.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { TokenReviews, type ReviewToken } from '../../../../operator/kube/token-reviews.js';
import type { TokenVerdict } from '../../../../webhook/server/caller-verification.js';
import { FakeClock } from '../../../harness/fake-clock.js';

const API_SERVER = 'system:serviceaccount:kube-system:apiserver-webhook-client';

function reviews(answer: (token: string) => Promise<TokenVerdict>): {
  tokens: TokenReviews;
  clock: FakeClock;
  asked: string[];
} {
  const asked: string[] = [];
  const clock = new FakeClock();
  const review: ReviewToken = (token) => {
    asked.push(token);
    return answer(token);
  };
  const tokens = new TokenReviews(review, (user) => user === API_SERVER, clock, pino({ level: 'silent' }));
  return { tokens, clock, asked };
}

const byName = (token: string): Promise<TokenVerdict> =>
  Promise.resolve(
    token === 'good'
      ? { authenticated: true, username: API_SERVER }
      : token === 'other'
        ? { authenticated: true, username: 'system:serviceaccount:team-a:builder' }
        : { authenticated: false },
  );

describe('TokenReviews', () => {
  it("reviews the API server's token once a minute, refreshing in the background", async () => {
    const { tokens, clock, asked } = reviews(byName);
    for (let i = 0; i < 50; i++)
      assert.deepEqual(await tokens.verdict('good'), { authenticated: true, username: API_SERVER });
    assert.deepEqual(asked, ['good']);
    await clock.advance(61_000);
    assert.deepEqual(await tokens.verdict('good'), { authenticated: true, username: API_SERVER });
    assert.deepEqual(asked, ['good', 'good'], 'a stale token is answered from memory and reviewed again');
  });

  it('shares one review among concurrent callers of the same token', async () => {
    const { tokens, asked } = reviews(byName);
    const verdicts = await Promise.all(Array.from({ length: 20 }, () => tokens.verdict('good')));
    assert.equal(verdicts.length, 20);
    assert.deepEqual(asked, ['good']);
  });

  it('remembers a refusal for a while, with the user it named', async () => {
    const { tokens, clock, asked } = reviews(byName);
    assert.deepEqual(await tokens.verdict('forged'), { authenticated: false });
    assert.deepEqual(await tokens.verdict('forged'), { authenticated: false });
    assert.deepEqual(await tokens.verdict('other'), {
      authenticated: true,
      username: 'system:serviceaccount:team-a:builder',
    });
    assert.deepEqual(asked, ['forged', 'other']);
    await clock.advance(11_000);
    await tokens.verdict('forged');
    assert.deepEqual(asked, ['forged', 'other', 'forged']);
  });

  it("keeps the API server's token through a flood of invented ones", async () => {
    const { tokens, clock, asked } = reviews(byName);
    await tokens.verdict('good');
    for (let i = 0; i < 5000; i++) await tokens.verdict(`invented-${i}`);
    await clock.advance(30_000);
    asked.length = 0;
    assert.deepEqual(await tokens.verdict('good'), { authenticated: true, username: API_SERVER });
    assert.deepEqual(asked, [], 'still answered from memory');
  });

  it("answers 'unavailable' at once beyond the reviews in flight, instead of queueing", async () => {
    const pending: (() => void)[] = [];
    const { tokens } = reviews(
      (token) =>
        new Promise((resolvePromise) => {
          pending.push(() => {
            void byName(token).then(resolvePromise);
          });
        }),
    );
    const first = Array.from({ length: 16 }, (_, i) => tokens.verdict(`slow-${i}`));
    assert.equal(await tokens.verdict('one-more'), 'unavailable');
    for (const release of pending) release();
    assert.deepEqual(
      await Promise.all(first),
      Array.from({ length: 16 }, () => ({ authenticated: false })),
    );
  });

  it('keeps an accepted token accepted while a review fails, and says unavailable for a new one', async () => {
    let failing = false;
    const { tokens, clock } = reviews((token) =>
      failing ? Promise.reject(new Error('connection refused')) : byName(token),
    );
    await tokens.verdict('good');
    failing = true;
    await clock.advance(61_000);
    assert.deepEqual(await tokens.verdict('good'), { authenticated: true, username: API_SERVER });
    assert.equal(await tokens.verdict('never-seen'), 'unavailable');
    await clock.advance(10 * 60_000);
    assert.equal(await tokens.verdict('good'), 'unavailable', 'stale beyond ten minutes: not kept');
  });
});
