/**
 * Sends one fuzz case the way it says: in one write, chunked, or dribbled; always under the
 * client's own timeout, so a server that never answers cannot hang the run.
 */
import { request, type Agent } from 'node:https';
import type { FuzzCase } from './generate.js';
import type { HttpResult } from './checks.js';

/** More of an answer than any check needs. */
const BODY_CAP = 128 * 1024 * 1024;
/** Bodies past the server's 7 MiB limit. */
const OVERSIZED = 7 * 1024 * 1024;
/** How long a dribbled body takes to send (or to stall). */
const DRIBBLE_MS = 1500;

export interface SendOptions {
  port: number;
  /** Keep-alive agent for ordinary cases. */
  agent: Agent;
  /** The CA for connections made outside the agent. */
  ca: string;
  /** The API server's client certificate, for connections made outside the agent. */
  client: { cert: string; key: string };
  timeoutMs: number;
}

const OWN_CONNECTION = new Set<FuzzCase['transport']>(['declared', 'abort-mid-body', 'abort-after-body']);

const sleep = (ms: number): Promise<void> => new Promise((resolvePromise) => setTimeout(resolvePromise, ms));

export function sendCase(fuzzCase: FuzzCase, options: SendOptions): Promise<HttpResult> {
  const slow = fuzzCase.transport === 'slow-complete' || fuzzCase.transport === 'slow-stall';
  // Slow, oversized, declared and abandoned bodies get a connection of their own: it gets closed.
  const own = slow || fuzzCase.body.length > OVERSIZED || OWN_CONNECTION.has(fuzzCase.transport);
  const timeoutMs = options.timeoutMs + (slow ? DRIBBLE_MS : 0);
  const headers: Record<string, string | number> = {};
  if (fuzzCase.contentType !== undefined) headers['Content-Type'] = fuzzCase.contentType;
  if (fuzzCase.transport !== 'chunked' && fuzzCase.method === 'POST')
    headers['Content-Length'] = fuzzCase.declaredLength ?? fuzzCase.body.length;

  return new Promise<HttpResult>((resolvePromise) => {
    const chunks: Buffer[] = [];
    let kept = 0;
    let bodyBytes = 0;
    let status: number | undefined;
    let settled = false;
    let timedOut = false;
    const finish = (error: string | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolvePromise({ status, body: Buffer.concat(chunks), bodyBytes, error, timedOut });
    };
    const req = request(
      {
        host: '127.0.0.1',
        port: options.port,
        path: fuzzCase.path,
        method: fuzzCase.method,
        headers,
        ...(own ? { agent: false, ca: options.ca, ...options.client } : { agent: options.agent }),
      },
      (res) => {
        status = res.statusCode;
        res.on('data', (chunk: Buffer) => {
          bodyBytes += chunk.length;
          if (kept < BODY_CAP) {
            chunks.push(chunk);
            kept += chunk.length;
          }
        });
        res.on('end', () => {
          finish(undefined);
        });
        res.on('error', (error) => {
          finish(error.message);
        });
      },
    );
    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    req.on('error', (error) => {
      // An oversized body may be cut off by the server after it answered 413: the answer counts.
      finish(status === undefined ? error.message : undefined);
    });
    // A request the client hangs up itself ends with no error at all.
    req.on('close', () => {
      finish(status === undefined ? 'the connection closed without an answer' : undefined);
    });
    void write(req, fuzzCase).catch(() => {
      // The request's own error handler reports it.
    });
  });
}

/** Waits until `req` can take more, or is closed (the server stops reading a refused body). */
function drainedOrClosed(req: ReturnType<typeof request>): Promise<void> {
  return new Promise((resolvePromise) => {
    const done = (): void => {
      req.off('drain', done);
      req.off('close', done);
      resolvePromise();
    };
    req.once('drain', done);
    req.once('close', done);
  });
}

async function write(req: ReturnType<typeof request>, fuzzCase: FuzzCase): Promise<void> {
  const body = fuzzCase.body;
  if (fuzzCase.method !== 'POST') {
    req.end();
    return;
  }
  if (fuzzCase.transport === 'plain' && body.length <= OVERSIZED) {
    req.end(body);
    return;
  }
  if (fuzzCase.transport === 'declared') {
    // Less than the Content-Length says (Node's client does not hold it to it): the answer
    // must come from the headers, since the rest never does.
    req.end(body);
    return;
  }
  if (fuzzCase.transport === 'abort-mid-body' || fuzzCase.transport === 'abort-after-body') {
    const sent = fuzzCase.transport === 'abort-mid-body' ? body.subarray(0, body.length >> 1) : body;
    // Hang up once the bytes are on their way to the server, as a caller that gives up does.
    await new Promise<void>((resolvePromise) => {
      req.write(sent, () => {
        resolvePromise();
      });
    });
    req.destroy();
    return;
  }
  if (body.length > OVERSIZED) {
    // Sent as a client unaware of the limit would: the server answers 413 as soon as the
    // headers (or, chunked, the bytes read) say so, and closes the connection soon after.
    for (let i = 0; i < body.length && !req.destroyed; i += 256 * 1024) {
      if (!req.write(body.subarray(i, i + 256 * 1024))) await drainedOrClosed(req);
      await sleep(1);
    }
    if (!req.destroyed) req.end();
    return;
  }
  if (fuzzCase.transport === 'chunked') {
    const pieces = Math.min(8, Math.max(2, Math.ceil(body.length / 65536)));
    const size = Math.ceil(body.length / pieces);
    for (let i = 0; i < body.length; i += size) {
      if (req.destroyed) return;
      req.write(body.subarray(i, i + size));
      await new Promise((resolvePromise) => setImmediate(resolvePromise));
    }
    req.end();
    return;
  }
  // Dribbled: small pieces over DRIBBLE_MS; a stalled body stops halfway and never ends.
  const steps = 15;
  const end = fuzzCase.transport === 'slow-stall' ? Math.floor(body.length / 2) : body.length;
  const size = Math.max(1, Math.ceil(end / steps));
  for (let i = 0; i < end; i += size) {
    if (req.destroyed) return;
    req.write(body.subarray(i, Math.min(end, i + size)));
    await sleep(DRIBBLE_MS / steps);
  }
  if (fuzzCase.transport === 'slow-complete' && !req.destroyed) req.end();
}
