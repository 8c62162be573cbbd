import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { retryWhenBusy } from '../../../../operator/kube/retry-when-busy.js';

/** An error shaped as client-node's ApiException. */
function apiError(code: number, retryAfter?: string): Error {
  return Object.assign(new Error(`HTTP-Code: ${code}`), {
    code,
    headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter },
  });
}

/** A call that fails with `errors` in turn, then answers 'done'; and the waits it was given. */
function flaky(errors: Error[]): { call: () => Promise<string>; calls: () => number } {
  let calls = 0;
  return {
    call: () => {
      const error = errors[calls++];
      return error ? Promise.reject(error) : Promise.resolve('done');
    },
    calls: () => calls,
  };
}

describe('retryWhenBusy', () => {
  it('tries again after what Retry-After asks while the API server answers 429 or 503', async () => {
    const waits: number[] = [];
    const { call, calls } = flaky([apiError(429, '1'), apiError(503, '2'), apiError(429)]);
    assert.equal(await retryWhenBusy(call, 30_000, (ms) => Promise.resolve(waits.push(ms))), 'done');
    assert.deepEqual(waits, [1000, 2000, 1000]);
    assert.equal(calls(), 4);
  });

  it('waits at most 10 s at a time, and gives up with the error past its budget', async () => {
    const waits: number[] = [];
    const busy = apiError(429, '3600');
    const { call } = flaky([busy, busy, busy, busy]);
    await assert.rejects(
      retryWhenBusy(call, 25_000, (ms) => Promise.resolve(waits.push(ms))),
      (error) => error === busy,
    );
    assert.deepEqual(waits, [10_000, 10_000]);
  });

  it('hands any other error to the caller at once', async () => {
    const waits: number[] = [];
    const forbidden = apiError(403);
    const { call, calls } = flaky([forbidden]);
    await assert.rejects(
      retryWhenBusy(call, 30_000, (ms) => Promise.resolve(waits.push(ms))),
      (error) => error === forbidden,
    );
    assert.deepEqual(waits, []);
    assert.equal(calls(), 1);
  });
});
