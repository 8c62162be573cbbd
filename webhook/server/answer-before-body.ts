/**
 * Answering a request whose body has not arrived (yet): a body declared or grown past the limit,
 * the body budget spent, a wrong path, method or Content-Type. Reading the rest first would keep a
 * connection and the read loop busy for as long as the sender cares to send, up to the request
 * time-out (30 s for a 1 TiB declaration); closing at once would reset a sender still writing,
 * whose kernel may then drop the answer unread. So, as Go's server does (it reads at most 256 KiB
 * of a body its handler left, then half-closes and waits 500 ms before closing): the answer goes
 * out whole with `Connection: close`, at most DRAIN_MAX_BYTES of what follows is read and
 * dropped, and the connection is closed DRAIN_MAX_MS after the answer, or sooner when the body
 * ends or the caller hangs up.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Bytes of the body read (and dropped) after the answer; past them the socket is no longer read. */
const DRAIN_MAX_BYTES = 256 * 1024;
/** How long after the answer the connection stays open for the caller to read it. */
export const DRAIN_MAX_MS = 500;

/** Writes `status` with the JSON `body`, then drains within the bounds above and closes the connection. */
export function answerBeforeBody(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  body: string,
): void {
  if (res.destroyed || req.socket.destroyed) return;
  const payload = Buffer.from(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': payload.length,
    Connection: 'close',
  });
  // Written but not ended: the answer is complete on the wire (Content-Length says where it
  // stops), and ending the response is what makes Node close the connection.
  res.write(payload);
  if (req.readableEnded) {
    res.end();
    return;
  }
  let drained = 0;
  const close = (): void => {
    clearTimeout(timer);
    req.off('data', onData);
    req.off('end', close);
    req.off('close', close);
    if (!res.writableEnded) res.end();
  };
  function onData(chunk: Buffer): void {
    drained += chunk.length;
    if (drained < DRAIN_MAX_BYTES) return;
    // Past the bound nothing more is read: the kernel's buffers hold what the sender still sends
    // until the close, and the sender has had the answer since before the first drained byte.
    req.off('data', onData);
    req.pause();
  }
  const timer = setTimeout(close, DRAIN_MAX_MS);
  req.on('data', onData);
  req.once('end', close);
  req.once('close', close);
  req.resume();
}
