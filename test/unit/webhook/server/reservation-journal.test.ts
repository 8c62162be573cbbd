/**
 * The leader's journal of reservations: a follower gets each entry once, in order, from where it
 * stands; one new to the journal (or remembering another) starts from now, one that fell behind
 * what is kept at the oldest kept; a page survives its JSON form, and nothing else is taken for one.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  MAX_ENTRIES_PER_ANSWER,
  MAX_JOURNAL_ENTRIES,
  pageJson,
  readPage,
  ReservationJournal,
  type Reservation,
} from '../../../../webhook/server/reservation-journal.js';

const reservation = (i: number): Reservation => ({
  key: `team-a/pod-${i}`,
  quota: 'team-a',
  requests: new Map([['cpu', 500_000_000n]]),
});

describe('ReservationJournal', () => {
  it('hands each entry out once, in order, from where the follower stands', () => {
    const journal = new ReservationJournal();
    journal.append(reservation(-1));
    // A follower new to this journal starts from now.
    const opened = journal.since(undefined, 0);
    assert.deepEqual(opened.reservations, []);
    for (let i = 0; i < 3; i++) journal.append(reservation(i));
    const first = journal.since(opened.id, opened.next);
    assert.deepEqual(
      first.reservations.map((entry) => entry.key),
      ['team-a/pod-0', 'team-a/pod-1', 'team-a/pod-2'],
    );
    journal.append(reservation(3));
    const second = journal.since(first.id, first.next);
    assert.deepEqual(
      second.reservations.map((entry) => entry.key),
      ['team-a/pod-3'],
    );
    assert.deepEqual(journal.since(second.id, second.next).reservations, []);
    // Another journal's position (a new leader) means nothing here: from now.
    assert.deepEqual(journal.since('another-leader', 0), { id: journal.id, next: 5, reservations: [] });
  });

  it('keeps MAX_JOURNAL_ENTRIES and hands out MAX_ENTRIES_PER_ANSWER at a time', () => {
    const journal = new ReservationJournal();
    for (let i = 0; i < MAX_JOURNAL_ENTRIES + 10; i++) journal.append(reservation(i));
    const page = journal.since(journal.id, 0);
    assert.equal(page.reservations.length, MAX_ENTRIES_PER_ANSWER);
    assert.equal(page.reservations[0]?.key, 'team-a/pod-10', 'the oldest kept');
    assert.equal(page.next, 10 + MAX_ENTRIES_PER_ANSWER);
  });

  it('reads back the JSON of a page, and takes nothing else for one', () => {
    const journal = new ReservationJournal();
    journal.append(reservation(7));
    const page = journal.since(journal.id, 0);
    assert.deepEqual(readPage(JSON.parse(pageJson(page))), page);
    for (const bad of [
      null,
      { id: 'x', next: 1 },
      { id: 'x', next: 1, reservations: [{ key: 'k', quota: 'q', requests: { cpu: '-1' } }] },
      { id: 'x', next: 1, reservations: [{ key: 'k', quota: 'q', requests: { cpu: 5 } }] },
      { id: 'x', next: 1, reservations: [{ key: 1, quota: 'q', requests: {} }] },
    ]) {
      assert.equal(readPage(bad), undefined, JSON.stringify(bad));
    }
  });
});
