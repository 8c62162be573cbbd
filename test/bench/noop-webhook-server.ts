/**
 * The least a webhook can do, as a process of its own: over TLS with an RSA-2048 certificate (the
 * operator's key type, so a handshake costs the same), read the AdmissionReview, answer allowed
 * with its uid. The quota-burst bench calls it the no-op reference: what the API server's webhook
 * latency reads on this machine for a webhook that costs nothing, in the same run as ours.
 *
 * Usage: node --import tsx test/bench/noop-webhook-server.ts <cert.pem> <key.pem>; prints the
 * port it listens on (127.0.0.1, a free one) as its first line.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { KEEP_ALIVE_TIMEOUT_MS } from '../../webhook/server/https-server.js';
import { MAX_BODY_BYTES } from '../../webhook/server/read-body.js';

const [certFile, keyFile] = process.argv.slice(2);
if (!certFile || !keyFile) throw new Error('usage: noop-webhook-server.ts <cert.pem> <key.pem>');

const server = createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, (req, res) => {
  if (req.url === '/readyz') {
    res.end('ok');
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= MAX_BODY_BYTES) chunks.push(chunk);
  });
  req.on('end', () => {
    let uid: string;
    try {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request?: { uid?: string } };
      uid = review.request?.uid ?? '';
    } catch {
      res.statusCode = 400;
      res.end();
      return;
    }
    res.setHeader('Content-Type', 'application/json');
    res.end(
      JSON.stringify({
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        response: { uid, allowed: true },
      }),
    );
  });
});
// The operator's backlog and keep-alive, so the two differ only in what they do with a review.
server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
server.listen({ host: '127.0.0.1', port: 0, backlog: 1024 }, () => {
  console.log(String((server.address() as AddressInfo).port));
});
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
});
