import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { describe, it } from 'node:test';
import { UnusedConnections } from '../../../../webhook/server/unused-connections.js';

/** Enough of a socket for the tracker: it is destroyed, and it emits close. */
function fakeSocket(): Socket & { destroyedByTracker: boolean } {
  const socket = Object.assign(new EventEmitter(), {
    destroyedByTracker: false,
    destroy() {
      socket.destroyedByTracker = true;
      socket.emit('close');
      return socket;
    },
  });
  return socket as unknown as Socket & { destroyedByTracker: boolean };
}

describe('UnusedConnections', () => {
  it('closes only connections that have carried no request for the idle time', () => {
    const unused = new UnusedConnections();
    const old = fakeSocket();
    const young = fakeSocket();
    const usedOld = fakeSocket();
    unused.accepted(old, 1_000);
    unused.accepted(usedOld, 1_000);
    unused.accepted(young, 5_500);
    unused.used(usedOld);

    assert.equal(unused.closeIdle(5_000, 6_000), 1);
    assert.equal(old.destroyedByTracker, true);
    assert.equal(young.destroyedByTracker, false);
    assert.equal(usedOld.destroyedByTracker, false);
    assert.equal(unused.size, 1);

    assert.equal(unused.closeIdle(5_000, 10_500), 1);
    assert.equal(young.destroyedByTracker, true);
    assert.equal(unused.size, 0);
  });

  it('forgets a connection once it closes by itself', () => {
    const unused = new UnusedConnections();
    const socket = fakeSocket();
    unused.accepted(socket, 0);
    socket.emit('close');
    assert.equal(unused.size, 0);
    assert.equal(unused.closeIdle(0, 100), 0);
  });
});
