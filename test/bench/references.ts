/**
 * The references every server figure is a share of, run in this process on the same core as our
 * app: a bare Node HTTPS server and a minimal Koa app, each reading the body, parsing it and
 * answering a fixed allowed review. What Koa costs over the bare server is the floor Koa sets;
 * what our app costs over the minimal Koa app is ours.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { localServingCertificate } from '../harness/allowing-server.js';

export interface BenchCertificates {
  ca: string;
  certificatePem: string;
  privateKeyPem: string;
}

export async function benchCertificates(): Promise<BenchCertificates> {
  return localServingCertificate('bench-ca');
}

export interface Running {
  port: number;
  close: () => Promise<void>;
}

function allowed(parsed: unknown): string {
  const uid = (parsed as { request?: { uid?: unknown } }).request?.uid;
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    response: { uid: typeof uid === 'string' ? uid : '', allowed: true },
  });
}

async function listen(server: Server): Promise<Running> {
  await new Promise<void>((resolvePromise) => server.listen(0, '127.0.0.1', resolvePromise));
  server.keepAliveTimeout = 100_000;
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((resolvePromise) => {
        server.closeAllConnections();
        server.close(() => {
          resolvePromise();
        });
      }),
  };
}

const tls = (certs: BenchCertificates): { cert: string; key: string; minVersion: 'TLSv1.2' } => ({
  cert: certs.certificatePem,
  key: certs.privateKeyPem,
  minVersion: 'TLSv1.2',
});

export function startBareServer(certs: BenchCertificates): Promise<Running> {
  const server = createServer(tls(certs), (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = allowed(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
      res.end(text);
    });
  });
  return listen(server);
}

export function startMinimalKoa(certs: BenchCertificates): Promise<Running> {
  const app = new Koa();
  app.use(async (ctx) => {
    const chunks: Buffer[] = [];
    for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
    ctx.type = 'application/json';
    ctx.body = allowed(JSON.parse(Buffer.concat(chunks).toString('utf8')));
  });
  const handle = app.callback();
  const server = createServer(tls(certs), (req, res) => {
    void handle(req, res);
  });
  return listen(server);
}
