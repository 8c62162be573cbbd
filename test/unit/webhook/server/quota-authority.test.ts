/**
 * Who decides a replica's quota admissions through a change of leadership: the holder the last
 * read names, the old holder until it hands over, and the new leader once it has asked it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { QuotaAuthority, type QuotaAuthoritySources } from '../../../../webhook/server/quota-authority.js';

/** What the elector would say, set by each test step. */
interface View {
  leads: boolean;
  leaderAddress?: string;
  takenOverFrom?: { address: string; term: number };
}

function authority(view: View, advertise = 'self:9443'): QuotaAuthority {
  const sources: QuotaAuthoritySources = {
    leads: () => view.leads,
    leaderAddress: () => view.leaderAddress,
    takenOverFrom: () => (view.leads ? view.takenOverFrom : undefined),
    advertise,
  };
  return new QuotaAuthority(sources);
}

describe('quota authority', () => {
  it('a follower hands its admissions to the holder its last read names; a leader that created the lease decides', () => {
    const view: View = { leads: false, leaderAddress: 'a:9443' };
    const follower = authority(view);
    assert.deepEqual(follower.target(), { address: 'a:9443' });
    assert.equal(follower.decidesForwarded(), false);
    view.leads = true;
    view.leaderAddress = undefined;
    assert.equal(follower.target(), undefined);
    assert.equal(follower.decidesForwarded(), true);
  });

  it('an old holder past its renew deadline stays the ledger until it is asked to hand over, then forwards', () => {
    // Its renewals stalled: it no longer leads, and its last read names itself (no other holder).
    const view: View = { leads: false };
    const old = authority(view, 'a:9443');
    assert.equal(old.target(), undefined, 'decides, as the ledger');
    assert.equal(old.decidesForwarded(), true);
    old.handOverTo('b:9443');
    assert.deepEqual(old.target(), { address: 'b:9443' });
    assert.equal(old.decidesForwarded(), false, 'the successor decides now');
    // Its read of the lease, once it works again, agrees.
    view.leaderAddress = 'b:9443';
    assert.deepEqual(old.target(), { address: 'b:9443' });
    // Leading again later, it is the ledger again.
    view.leads = true;
    view.leaderAddress = undefined;
    assert.equal(old.target(), undefined);
    assert.equal(old.decidesForwarded(), true);
  });

  it("a follower told of the old holder's successor forwards there until its own read names another holder", () => {
    const view: View = { leads: false, leaderAddress: 'old:9443' };
    const follower = authority(view);
    assert.equal(follower.redirected('old:9443', 'new:9443'), true);
    assert.equal(follower.redirected('old:9443', 'new:9443'), false, 'the same news twice is not news');
    assert.deepEqual(follower.target(), { address: 'new:9443' });
    // Its read caught up, or names a third holder: the read wins over the hint.
    view.leaderAddress = 'third:9443';
    assert.deepEqual(follower.target(), { address: 'third:9443' });
    // It leads itself: the hint is dropped.
    view.leads = true;
    view.leaderAddress = undefined;
    assert.equal(follower.target(), undefined);
    view.leads = false;
    view.leaderAddress = 'old:9443';
    assert.deepEqual(follower.target(), { address: 'old:9443' });
    // Never redirected to itself.
    assert.equal(follower.redirected('old:9443', 'self:9443'), false);
    assert.deepEqual(follower.target(), { address: 'old:9443' });
  });

  it('waits for a fresh read of the lease in doubt only where it would decide alone without leading', () => {
    const doubt = Promise.resolve();
    const view: View = { leads: false };
    const sources: QuotaAuthoritySources = {
      leads: () => view.leads,
      leaderAddress: () => view.leaderAddress,
      takenOverFrom: () => undefined,
      advertise: 'self:9443',
      leaseInDoubt: () => doubt,
    };
    const holder = new QuotaAuthority(sources);
    assert.equal(holder.beforeDecidingAlone(), doubt, 'the ledger by its own read only');
    view.leaderAddress = 'other:9443';
    assert.equal(holder.beforeDecidingAlone(), undefined, 'it forwards: nothing to wait for');
    view.leaderAddress = undefined;
    view.leads = true;
    assert.equal(holder.beforeDecidingAlone(), undefined, 'a leader decides');
    view.leads = false;
    holder.handOverTo('next:9443');
    assert.equal(holder.beforeDecidingAlone(), undefined, 'handed over: it forwards to its successor');
  });

  it('never hands over to itself', () => {
    const old = authority({ leads: false }, 'a:9443');
    old.handOverTo('a:9443');
    assert.equal(old.target(), undefined);
  });

  it('a new leader asks the replica it took the lease from to hand over, once per term, then decides', () => {
    const view: View = { leads: true, takenOverFrom: { address: 'a:9443', term: 1 } };
    const fresh = authority(view, 'b:9443');
    assert.deepEqual(fresh.target(), { address: 'a:9443', handoverTo: 'b:9443' });
    assert.equal(fresh.decidesForwarded(), true, 'it leads');
    fresh.handoverEnded();
    assert.equal(fresh.target(), undefined);
    // Lost the lease and took it over again from the same replica: a new handover.
    view.takenOverFrom = { address: 'a:9443', term: 2 };
    assert.deepEqual(fresh.target(), { address: 'a:9443', handoverTo: 'b:9443' });
    fresh.handoverEnded();
    assert.equal(fresh.target(), undefined);
  });

  it('a new leader with no address of its own cannot be handed over to, so it decides', () => {
    const view: View = { leads: true, takenOverFrom: { address: 'a:9443', term: 1 } };
    const sources: QuotaAuthoritySources = {
      leads: () => view.leads,
      leaderAddress: () => undefined,
      takenOverFrom: () => view.takenOverFrom,
    };
    assert.equal(new QuotaAuthority(sources).target(), undefined);
  });
});
