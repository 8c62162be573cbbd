import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import {
  LeaderElector,
  leaderIdentity,
  type LeaseApi,
  type LeaseRecord,
  type StoredLease,
} from '../../../../operator/kube/leader-election.js';
import { FakeClock } from '../../../harness/fake-clock.js';

const logger = pino({ level: 'silent' });
const TIMINGS = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

/** One Lease object with resourceVersion-guarded writes, as the API server keeps it. */
class FakeLeaseStore {
  lease: StoredLease | undefined;
  private version = 0;
  /** While set, every call fails (an unreachable API server). */
  down = false;
  /** While set, every read hangs (an API server that holds the connection). */
  hang = false;
  reads = 0;
  writes = 0;

  conflict(): Error {
    return Object.assign(new Error('conflict'), { code: 409 });
  }

  api(): LeaseApi {
    return {
      get: () => {
        this.reads++;
        if (this.hang) return new Promise<never>(() => undefined);
        if (this.down) return Promise.reject(new Error('connection refused'));
        return Promise.resolve(this.lease && { ...this.lease, record: { ...this.lease.record } });
      },
      create: (record: LeaseRecord) => {
        if (this.down) return Promise.reject(new Error('connection refused'));
        if (this.lease) return Promise.reject(this.conflict());
        this.lease = { record: { ...record }, resourceVersion: String(++this.version) };
        this.writes++;
        return Promise.resolve();
      },
      update: (record: LeaseRecord, resourceVersion: string) => {
        if (this.down) return Promise.reject(new Error('connection refused'));
        if (!this.lease || this.lease.resourceVersion !== resourceVersion)
          return Promise.reject(this.conflict());
        this.lease = { record: { ...record }, resourceVersion: String(++this.version) };
        this.writes++;
        return Promise.resolve();
      },
    };
  }
}

function elector(
  identity: string,
  store: FakeLeaseStore,
  clock: FakeClock,
  transitions: boolean[] = [],
): LeaderElector {
  return new LeaderElector({
    identity,
    api: store.api(),
    timings: TIMINGS,
    logger,
    clock,
    onTransition: (leading) => transitions.push(leading),
  });
}

/** A candidate that advertises `<identity>.example:9443` as its admission address. */
function advertising(identity: string, store: FakeLeaseStore, clock: FakeClock): LeaderElector {
  return new LeaderElector({
    identity,
    api: store.api(),
    timings: TIMINGS,
    logger,
    clock,
    advertise: `${identity}.example:9443`,
  });
}

describe('leader election', () => {
  it('creates the missing Lease and leads at once', async () => {
    const clock = new FakeClock();
    const store = new FakeLeaseStore();
    const transitions: boolean[] = [];
    const a = elector('a', store, clock, transitions);
    a.start();
    await clock.advance(0);
    assert.equal(a.isLeader(), true);
    assert.deepEqual(transitions, [true]);
    assert.equal(store.lease?.record.holderIdentity, 'a');
    assert.equal(store.lease?.record.leaseDurationSeconds, 15);
    await a.stop();
  });

  it('keeps one leader among candidates, renewing every retry period', async () => {
    const clock = new FakeClock();
    const store = new FakeLeaseStore();
    const a = elector('a', store, clock);
    const b = elector('b', store, clock);
    a.start();
    await clock.advance(0);
    b.start();
    for (let second = 0; second < 60; second++) {
      await clock.advance(1000);
      assert.equal(a.isLeader(), true, `a at ${second} s`);
      assert.equal(b.isLeader(), false, `b at ${second} s`);
    }
    // One renewal per retry period (2 s), plus the create.
    assert.equal(store.writes, 31);
    await Promise.all([a.stop(), b.stop()]);
  });

  it('lets another candidate take over only after a whole lease duration without renewal', async () => {
    const clock = new FakeClock();
    const store = new FakeLeaseStore();
    const a = elector('a', store, clock);
    const bTransitions: boolean[] = [];
    const b = elector('b', store, clock, bTransitions);
    a.start();
    await clock.advance(0);
    b.start();
    await clock.advance(1000);
    // a dies without releasing (SIGKILL): it stops, and the Lease is left as a last renewed it.
    const lastRenewed = store.lease!;
    await a.stop();
    store.lease = { record: { ...lastRenewed.record }, resourceVersion: '1000' };
    const killedAt = clock.monotonic();
    let tookOverAt: number | undefined;
    for (let step = 0; step < 40 && tookOverAt === undefined; step++) {
      await clock.advance(500);
      if (b.isLeader()) tookOverAt = clock.monotonic();
    }
    assert.ok(tookOverAt !== undefined, 'b never took over');
    const waited = tookOverAt - killedAt;
    assert.ok(waited >= 15_000 - 1000, `took over after ${waited} ms, before the lease expired`);
    assert.ok(waited <= 15_000 + 2_000 + 500, `took over after ${waited} ms, more than a lease and a retry`);
    assert.equal(store.lease?.record.holderIdentity, 'b');
    assert.equal(store.lease?.record.leaseTransitions, 1);
    assert.deepEqual(bTransitions, [true]);
    await b.stop();
  });

  it("publishes the leader's serving address, which others keep naming until they take over", async () => {
    const clock = new FakeClock();
    const store = new FakeLeaseStore();
    const a = advertising('a', store, clock);
    const b = advertising('b', store, clock);
    assert.equal(b.leaderAddress(), undefined, 'nothing observed yet');
    a.start();
    await clock.advance(0);
    b.start();
    await clock.advance(1000);
    assert.equal(store.lease?.record.servingAddress, 'a.example:9443');
    assert.equal(b.leaderAddress(), 'a.example:9443');
    assert.equal(a.leaderAddress(), undefined, 'the leader never forwards to itself');
    assert.equal(a.takenOverFrom(), undefined, 'a created the lease: nobody to take over from');
    // a stops renewing without releasing: b keeps naming it (a leader that answers is a leader)
    // right up to taking the lease over, and then names the replica it took it from.
    const lastRenewed = store.lease;
    assert.ok(lastRenewed);
    await a.stop();
    store.lease = { record: { ...lastRenewed.record }, resourceVersion: '1000' };
    for (let step = 0; step < 40 && !b.isLeader(); step++) {
      assert.equal(b.leaderAddress(), 'a.example:9443');
      await clock.advance(500);
    }
    assert.equal(b.isLeader(), true);
    assert.equal(b.leaderAddress(), undefined);
    assert.deepEqual(b.takenOverFrom(), { address: 'a.example:9443', term: 1 });
    assert.equal(store.lease?.record.servingAddress, 'b.example:9443');
    await b.stop();
    assert.equal(store.lease?.record.holderIdentity, '');
    assert.equal(
      store.lease?.record.servingAddress,
      'b.example:9443',
      'a released lease names who is still serving its drain',
    );
    assert.equal(b.takenOverFrom(), undefined, 'only while leading');
  });

  it('keeps naming the leader while its own reads of the lease fail, however long', async () => {
    const clock = new FakeClock();
    const store = new FakeLeaseStore();
    const a = new LeaderElector({
      identity: 'a',
      api: store.api(),
      timings: TIMINGS,
      logger,
      clock,
      advertise: 'a.example:9443',
    });
    let bCutOff = false;
    const shared = store.api();
    const cut = (): Promise<never> => Promise.reject(new Error('the API server does not answer'));
    const b = new LeaderElector({
      identity: 'b',
      api: {
        get: () => (bCutOff ? cut() : shared.get()),
        create: (record) => (bCutOff ? cut() : shared.create(record)),
        update: (record, version) => (bCutOff ? cut() : shared.update(record, version)),
      },
      timings: TIMINGS,
      logger,
      clock,
      advertise: 'b.example:9443',
    });
    a.start();
    await clock.advance(0);
    b.start();
    await clock.advance(1000);
    bCutOff = true;
    await clock.advance(60_000);
    assert.equal(a.isLeader(), true);
    assert.equal(b.isLeader(), false);
    assert.equal(b.leaderAddress(), 'a.example:9443', 'b hands its quota admissions to a');
    await a.stop();
    await b.stop();
  });

  it('names the replica it took over from once per term, and no one when the holder advertised its own address', async () => {
    const clock = new FakeClock();
    const store = new FakeLeaseStore();
    const b = new LeaderElector({
      identity: 'b',
      api: store.api(),
      timings: TIMINGS,
      logger,
      clock,
      advertise: 'b.example:9443',
    });
    // A lease left by a replica that died on b's address (a pod restarted with the same IP).
    store.lease = {
      record: {
        holderIdentity: 'b-before-restart',
        leaseDurationSeconds: 15,
        servingAddress: 'b.example:9443',
        leaseTransitions: 3,
      },
      resourceVersion: '7',
    };
    b.start();
    await clock.advance(17_000);
    assert.equal(b.isLeader(), true);
    assert.equal(b.takenOverFrom(), undefined);
    await b.stop();
  });

  it('a holder stopped past a takeover reads the lease before it decides alone, and names the new holder', async () => {
    const store = new FakeLeaseStore();
    // One clock each: a is stopped (its clock and timers frozen) while b's time runs.
    const clockA = new FakeClock();
    const clockB = new FakeClock();
    const a = advertising('a', store, clockA);
    const b = advertising('b', store, clockB);
    a.start();
    await clockA.advance(0);
    b.start();
    await clockB.advance(0);
    assert.equal(a.isLeader(), true);
    assert.equal(a.leaseInDoubt(2000), undefined, 'a leader is in no doubt');
    // Past its renew deadline but within the lease duration: nobody else can hold the lease yet.
    (clockA as unknown as { ms: number }).ms += 11_000;
    assert.equal(a.isLeader(), false);
    assert.equal(a.leaseInDoubt(2000), undefined);
    // Stopped: b sees no renewal for a lease duration and takes over; its handover finds a stopped.
    await clockB.advance(18_000);
    assert.equal(b.isLeader(), true);
    // Resumed, no timer fired yet: a has seen no other holder, so it would decide alone.
    (clockA as unknown as { ms: number }).ms += 9_000;
    assert.equal(a.leaderAddress(), undefined);
    const doubt = a.leaseInDoubt(2000);
    assert.ok(doubt, 'a lease duration since its last renewal began: another may hold the lease');
    await clockA.advance(0);
    await doubt;
    assert.equal(a.leaderAddress(), 'b.example:9443', 'the fresh read names the new holder');
    assert.equal(a.leaseInDoubt(2000), undefined, 'and then there is no doubt');
    await a.stop();
    await b.stop();
  });

  it('waits for a read of the lease in doubt until it ends, failed or not, or for the bound when it hangs', async () => {
    const clock = new FakeClock();
    const store = new FakeLeaseStore();
    const a = elector('a', store, clock);
    a.start();
    await clock.advance(0);
    store.down = true;
    // Its reads fail (every retry period): past the lease duration it is the ledger by its own last
    // read only, and its last attempt began a second ago.
    await clock.advance(15_000);
    assert.equal(a.isLeader(), false);
    let settled = false;
    const failing = a.leaseInDoubt(2000);
    assert.ok(failing);
    void failing.then(() => (settled = true));
    await clock.advance(0);
    assert.equal(settled, true, 'a failed read ends the wait at once');
    // Reviews right after: no read of their own (a burst would start one each), they decide.
    const reads = store.reads;
    assert.equal(a.leaseInDoubt(2000), undefined);
    assert.equal(a.leaseInDoubt(2000), undefined);
    await clock.advance(0);
    assert.equal(store.reads, reads, 'no more than one read a second');
    // A read that hangs (its API server holds the connection): the bound ends the wait.
    store.down = false;
    store.hang = true;
    await clock.advance(2000);
    settled = false;
    const hanging = a.leaseInDoubt(2000);
    assert.ok(hanging);
    void hanging.then(() => (settled = true));
    await clock.advance(1999);
    assert.equal(settled, false);
    await clock.advance(1);
    assert.equal(settled, true, 'the bound ends the wait');
  });

  it('judges expiry on its own clock, not the renewTime written by a skewed holder', async () => {
    const clock = new FakeClock();
    const store = new FakeLeaseStore();
    // A holder whose clock ran an hour behind: its renewTime looks long expired.
    store.lease = {
      record: {
        holderIdentity: 'skewed',
        leaseDurationSeconds: 15,
        renewTime: new Date(clock.now().getTime() - 3600_000),
        leaseTransitions: 0,
      },
      resourceVersion: '7',
    };
    const b = elector('b', store, clock);
    b.start();
    await clock.advance(10_000);
    assert.equal(b.isLeader(), false, 'took a lease its holder may still be renewing');
    await clock.advance(8_000);
    assert.equal(b.isLeader(), true);
    await b.stop();
  });

  it('stops leading when it cannot renew within the renew deadline, before the lease expires for others', async () => {
    const clock = new FakeClock();
    const store = new FakeLeaseStore();
    const transitions: boolean[] = [];
    const a = elector('a', store, clock, transitions);
    a.start();
    await clock.advance(0);
    const lastRenewal = clock.monotonic();
    store.down = true;
    let lostAt: number | undefined;
    for (let step = 0; step < 30 && lostAt === undefined; step++) {
      await clock.advance(500);
      if (!a.isLeader()) lostAt = clock.monotonic();
    }
    assert.ok(lostAt !== undefined);
    assert.ok(
      lostAt - lastRenewal <= 10_000,
      `still leading ${lostAt - lastRenewal} ms after the last renewal`,
    );
    assert.deepEqual(transitions, [true, false]);
    // Back online, the lease (still its own) is renewed and it leads again.
    store.down = false;
    await clock.advance(2_000);
    assert.equal(a.isLeader(), true);
    assert.deepEqual(transitions, [true, false, true]);
    await a.stop();
  });

  it('is not the leader once the renew deadline has passed, even before any timer fires (a suspended process)', async () => {
    const clock = new FakeClock();
    const store = new FakeLeaseStore();
    const a = elector('a', store, clock);
    a.start();
    await clock.advance(0);
    // Time jumps without timers firing, as for a process stopped with SIGSTOP.
    (clock as unknown as { ms: number }).ms += 12_000;
    assert.equal(a.isLeader(), false);
    await a.stop();
  });

  it('steps down when another replica holds the lease', async () => {
    const clock = new FakeClock();
    const store = new FakeLeaseStore();
    const transitions: boolean[] = [];
    const a = elector('a', store, clock, transitions);
    a.start();
    await clock.advance(0);
    // Someone else took it (say a was partitioned and the lease expired for the others).
    store.lease = { record: { ...store.lease!.record, holderIdentity: 'b' }, resourceVersion: '99' };
    await clock.advance(2_000);
    assert.equal(a.isLeader(), false);
    assert.deepEqual(transitions, [true, false]);
    await a.stop();
  });

  it('releases the lease on stop, so a successor takes over on its next try', async () => {
    const clock = new FakeClock();
    const store = new FakeLeaseStore();
    const aTransitions: boolean[] = [];
    const a = elector('a', store, clock, aTransitions);
    const b = elector('b', store, clock);
    a.start();
    await clock.advance(0);
    b.start();
    await clock.advance(1_000);
    await a.stop();
    assert.equal(a.isLeader(), false);
    assert.deepEqual(aTransitions, [true, false]);
    assert.equal(store.lease?.record.holderIdentity, '');
    await clock.advance(2_000);
    assert.equal(b.isLeader(), true);
    await b.stop();
  });

  it('loses a race for the same version without leading (resourceVersion-guarded)', async () => {
    const clock = new FakeClock();
    const store = new FakeLeaseStore();
    store.lease = { record: { holderIdentity: '' }, resourceVersion: '1' };
    const api = store.api();
    // Another candidate writes between our read and our update.
    const racing: LeaseApi = {
      get: async () => {
        const read = await api.get();
        store.lease = { record: { holderIdentity: 'b', leaseDurationSeconds: 15 }, resourceVersion: '2' };
        return read;
      },
      create: (record) => api.create(record),
      update: (record, version) => api.update(record, version),
    };
    const a = new LeaderElector({ identity: 'a', api: racing, timings: TIMINGS, logger, clock });
    a.start();
    await clock.advance(0);
    assert.equal(a.isLeader(), false);
    assert.equal(store.lease.record.holderIdentity, 'b');
    await a.stop();
  });

  it('refuses timings where a leader could still write after its lease expired for others', () => {
    assert.throws(
      () =>
        new LeaderElector({
          identity: 'a',
          api: new FakeLeaseStore().api(),
          timings: { leaseDurationMs: 10_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 },
          logger,
        }),
      /renew deadline must be shorter than the lease duration/,
    );
  });

  it('names itself after the pod with a random suffix', () => {
    assert.equal(leaderIdentity({ POD_NAME: 'op-1', HOSTNAME: 'h' }, 'abcd'), 'op-1_abcd');
    assert.equal(leaderIdentity({ HOSTNAME: 'h' }, 'abcd'), 'h_abcd');
    assert.notEqual(leaderIdentity({ POD_NAME: 'op-1' }), leaderIdentity({ POD_NAME: 'op-1' }));
  });
});
