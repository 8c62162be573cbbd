/**
 * Connections that have not carried a request yet. Node counts such a connection as busy, not
 * idle, until its headers time-out (so that a client cannot hold one open by sending nothing), so
 * `closeIdleConnections()` leaves it open and `close()` waits for it. Go's HTTP client leaves such
 * connections behind (a dial that lost its race is kept in the idle pool), and the API server is a
 * Go client: without this, a replica that drains waits out its whole shutdown grace for a connection
 * nobody will use. Like Go's `Server.Shutdown`, a connection that has carried no request (no complete
 * headers) for a while is treated as idle.
 */
import type { Socket } from 'node:net';

/** Go's http.Server.Shutdown treats a connection that has sent nothing for 5 s as idle. */
export const UNUSED_CONNECTION_IDLE_MS = 5000;

export class UnusedConnections {
  /** Each connection not yet used, with when it was accepted. At most the server's connection limit. */
  private readonly acceptedAt = new Map<Socket, number>();

  accepted(socket: Socket, now = Date.now()): void {
    this.acceptedAt.set(socket, now);
    socket.once('close', () => this.acceptedAt.delete(socket));
  }

  /** A request arrived on it: from now on Node's own idle tracking applies. */
  used(socket: Socket): void {
    this.acceptedAt.delete(socket);
  }

  get size(): number {
    return this.acceptedAt.size;
  }

  /** Destroys the connections that have carried no request for `idleMs`; returns how many. */
  closeIdle(idleMs = UNUSED_CONNECTION_IDLE_MS, now = Date.now()): number {
    let closed = 0;
    for (const [socket, at] of this.acceptedAt) {
      if (now - at < idleMs) continue;
      this.acceptedAt.delete(socket);
      socket.destroy();
      closed += 1;
    }
    return closed;
  }
}
