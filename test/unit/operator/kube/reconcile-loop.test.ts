import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import { ReconcileLoop, type WatchedSource } from '../../../../operator/kube/reconcile-loop.js';
import { FakeClock, settle } from '../../../harness/fake-clock.js';

const BACKOFF = { baseMs: 200, maxMs: 30_000 };

/** A reconcile that records its calls and fails while `failing` is true. */
function counting(): { calls: number[]; failing: boolean; reconcile: () => Promise<void>; clock: FakeClock } {
  const clock = new FakeClock();
  const state = {
    calls: [] as number[],
    failing: false,
    clock,
    reconcile: () => {
      state.calls.push(clock.monotonic());
      return state.failing ? Promise.reject(new Error('refused')) : Promise.resolve();
    },
  };
  return state;
}

/** A loop over a reconcile that fails until told otherwise, recording each retry's delay. */
function failingLoop(): { state: ReturnType<typeof counting>; retries: number[]; loop: ReconcileLoop } {
  const state = counting();
  state.failing = true;
  const retries: number[] = [];
  const loop = new ReconcileLoop({
    reconcile: state.reconcile,
    onError: (_error, retryInMs) => retries.push(retryInMs),
    clock: state.clock,
    backoff: BACKOFF,
  });
  return { state, retries, loop };
}

class FakeWatch extends EventEmitter implements WatchedSource {
  started = false;
  stopped = false;
  get synced(): boolean {
    return this.started;
  }
  start(): Promise<void> {
    this.started = true;
    return Promise.resolve();
  }
  stop(): Promise<void> {
    this.stopped = true;
    return Promise.resolve();
  }
}

describe('ReconcileLoop', () => {
  it('retries a failing reconcile with growing delays up to the cap', async () => {
    const { state, retries, loop } = failingLoop();
    const start = state.clock.monotonic();
    loop.request();
    await state.clock.advance(120_000);
    assert.deepEqual(retries.slice(0, 10), [200, 400, 800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000]);
    const gaps = state.calls.slice(1).map((at, index) => at - (state.calls[index] ?? start));
    assert.deepEqual(gaps.slice(0, 9), [200, 400, 800, 1600, 3200, 6400, 12_800, 25_600, 30_000]);
    await loop.stop();
  });

  it('keeps the cap however many times a reconcile has failed', async () => {
    const { state, retries, loop } = failingLoop();
    loop.request();
    await state.clock.advance(10_000 * 30_000);
    assert.ok(retries.length >= 10_000, `${retries.length} retries`);
    assert.equal(retries[9_999], 30_000);
    await loop.stop();
  });

  it('starts again from the base delay after a success', async () => {
    const { state, retries, loop } = failingLoop();
    loop.request();
    await state.clock.advance(200 + 400);
    assert.deepEqual(retries, [200, 400, 800]);
    state.failing = false;
    await state.clock.advance(800);
    assert.equal(loop.failureCount, 0);
    assert.equal(state.clock.pendingTimers, 0, 'a success schedules no retry');
    state.failing = true;
    loop.request();
    await settle();
    assert.deepEqual(retries, [200, 400, 800, 200]);
    await loop.stop();
  });

  it('collapses requests made during a reconcile into one more run', async () => {
    const clock = new FakeClock();
    let release: () => void = () => undefined;
    let runs = 0;
    const loop = new ReconcileLoop({
      reconcile: () => {
        runs += 1;
        return new Promise<void>((done) => {
          release = done;
        });
      },
      onError: () => assert.fail('no failure expected'),
      clock,
    });
    loop.request();
    await settle();
    for (let i = 0; i < 5; i++) loop.request();
    release();
    await settle();
    assert.equal(runs, 2);
    release();
    await settle();
    assert.equal(runs, 2);
    await loop.stop();
  });

  it('runs a requeue when due, the earliest one winning, and a new run cancels it', async () => {
    const state = counting();
    const loop = new ReconcileLoop({
      reconcile: state.reconcile,
      onError: () => assert.fail('no failure expected'),
      clock: state.clock,
    });
    const start = state.clock.monotonic();
    loop.requeueAfter(5000);
    loop.requeueAfter(9000);
    await state.clock.advance(4999);
    assert.equal(state.calls.length, 0);
    await state.clock.advance(1);
    assert.deepEqual(state.calls, [start + 5000]);
    loop.requeueAfter(5000);
    loop.request();
    await settle();
    assert.equal(state.clock.pendingTimers, 0, 'the run cancelled the requeue');
    await state.clock.advance(10_000);
    assert.equal(state.calls.length, 2);
    await loop.stop();
  });

  it('stops: no more runs, no timers, watches stopped, the run in progress awaited', async () => {
    const clock = new FakeClock();
    const watch = new FakeWatch();
    let finished = false;
    let runs = 0;
    let release: () => void = () => undefined;
    const loop = new ReconcileLoop({
      reconcile: async () => {
        runs += 1;
        await new Promise<void>((done) => {
          release = done;
        });
        finished = true;
      },
      onError: () => assert.fail('no failure expected'),
      watches: [watch],
      clock,
    });
    await loop.start();
    assert.ok(watch.started && loop.synced);
    loop.requeueAfter(1000);
    const stopping = loop.stop();
    release();
    await stopping;
    assert.ok(finished && watch.stopped);
    assert.equal(clock.pendingTimers, 0);
    loop.request();
    watch.emit('update');
    await clock.advance(10_000);
    assert.equal(runs, 1);
  });

  it('reconciles on every watch event', async () => {
    const state = counting();
    const watch = new FakeWatch();
    const loop = new ReconcileLoop({
      reconcile: state.reconcile,
      onError: () => assert.fail('no failure expected'),
      watches: [watch],
      clock: state.clock,
    });
    await loop.start();
    await settle();
    for (const event of ['add', 'update', 'delete']) {
      watch.emit(event);
      await settle();
    }
    assert.equal(state.calls.length, 4);
    await loop.stop();
  });
});
