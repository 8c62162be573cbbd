/**
 * The self-check behind /readyz: a real TLS handshake with our own server that must verify
 * against the caBundle the API server holds. A replica is only ready when the API server
 * could call it successfully.
 */
import { connect } from 'node:tls';
import { isIP } from 'node:net';

export interface HandshakeTarget {
  /** Where to connect (the server listens there). */
  host: string;
  port: number;
  /** The name the API server verifies: a DNS name (sent as SNI) or an IP. */
  verifyName: string;
}

export function verifyHandshake(
  target: HandshakeTarget,
  caBundlePem: string,
  timeoutMs = 2000,
): Promise<string | undefined> {
  return new Promise((resolvePromise) => {
    const socket = connect({
      host: target.host,
      port: target.port,
      ca: caBundlePem,
      minVersion: 'TLSv1.2',
      ...(isIP(target.verifyName) ? {} : { servername: target.verifyName }),
      checkServerIdentity: (_host, cert) => {
        // Verify against the name the API server uses, not the address we dialled.
        const names = cert.subjectaltname ?? '';
        const wanted = isIP(target.verifyName)
          ? `IP Address:${target.verifyName}`
          : `DNS:${target.verifyName}`;
        return names.split(', ').includes(wanted)
          ? undefined
          : new Error(`the serving certificate has no SAN ${wanted} (it has ${names || 'none'})`);
      },
      timeout: timeoutMs,
    });
    const done = (problem: string | undefined): void => {
      socket.destroy();
      resolvePromise(problem);
    };
    socket.once('secureConnect', () => {
      done(socket.authorized ? undefined : `handshake not authorized: ${String(socket.authorizationError)}`);
    });
    socket.once('timeout', () => {
      done(`handshake timed out after ${timeoutMs} ms`);
    });
    socket.once('error', (error: Error) => {
      done(`handshake failed: ${error.message}`);
    });
  });
}
