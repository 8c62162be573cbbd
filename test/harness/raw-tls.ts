/**
 * A raw TLS client for transport tests: what a hostile or impatient caller can do that an HTTP
 * client library will not (declare one length and send another, stop mid-body, hang up), and a
 * reader of one HTTP/1.1 response as it arrives, while the request may still be unsent.
 */
import { connect, type TLSSocket } from 'node:tls';

export function openTls(
  port: number,
  ca: string,
  client?: { cert: string; key: string },
): Promise<TLSSocket> {
  return new Promise((resolvePromise, reject) => {
    const socket = connect(
      { host: '127.0.0.1', port, ca, servername: 'localhost', ...(client ?? {}) },
      () => {
        socket.off('error', reject);
        // Writes after the server closed fail with EPIPE or ECONNRESET; the tests look at 'close'.
        socket.on('error', () => undefined);
        resolvePromise(socket);
      },
    );
    socket.once('error', reject);
  });
}

/** Resolves once `data` is handed to the kernel (or the socket is gone). */
export function written(socket: TLSSocket, data: string | Buffer): Promise<void> {
  return new Promise((resolvePromise) => {
    if (socket.destroyed) {
      resolvePromise();
      return;
    }
    socket.write(data, () => {
      resolvePromise();
    });
  });
}

export interface RawResponse {
  status: number;
  /** Header names lower-cased. */
  headers: Record<string, string>;
  body: string;
}

/**
 * The first response on `socket`, complete by its Content-Length; rejects when the connection
 * closes before it is whole.
 */
export function readResponse(socket: TLSSocket): Promise<RawResponse> {
  return new Promise((resolvePromise, reject) => {
    let received = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      received = Buffer.concat([received, chunk]);
      const headEnd = received.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const [statusLine = '', ...lines] = received.subarray(0, headEnd).toString('latin1').split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => {
          const colon = line.indexOf(':');
          return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
        }),
      );
      const length = Number(headers['content-length'] ?? 0);
      if (received.length < headEnd + 4 + length) return;
      socket.off('data', onData);
      socket.off('close', onClose);
      resolvePromise({
        status: Number(statusLine.split(' ')[1]),
        headers,
        body: received.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8'),
      });
    };
    const onClose = (): void => {
      reject(
        new Error(`the connection closed before a whole response arrived: ${received.toString('latin1')}`),
      );
    };
    socket.on('data', onData);
    socket.once('close', onClose);
  });
}

/** Resolves when the connection is closed (by either side). */
export function closed(socket: TLSSocket): Promise<void> {
  return new Promise((resolvePromise) => {
    if (socket.closed) resolvePromise();
    else
      socket.once('close', () => {
        resolvePromise();
      });
  });
}

/** The head of a POST to `path` with the headers given (Host and Content-Type added). */
export function postHead(path: string, headers: Record<string, string | number>): string {
  const all = { Host: 'localhost', 'Content-Type': 'application/json', ...headers };
  return `POST ${path} HTTP/1.1\r\n${Object.entries(all)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;
}
