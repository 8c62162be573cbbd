/**
 * Plain GETs to the API server as raw JSON, with the kubeconfig's credentials. The store's watches
 * read collections here instead of through client-node's generated clients: those build a model
 * object per item (and the informer keeps it), while the store keeps a few fields of each object
 * and lets the rest go as soon as the page or the event is read.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Agent as HttpAgent, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { watchLiveness } from './watch-liveness.js';

/** An answer other than 200, with the Status the API server sent when it sent one. */
export class ApiStatusError extends Error {
  override name = 'ApiStatusError';
  constructor(
    readonly code: number,
    message: string,
    /** The Status reason, e.g. "Expired" or "Gone". */
    readonly reason = '',
    /**
     * The token a 410 on an expired continue token offers: the rest of the list, from a newer
     * snapshot than its first pages.
     */
    readonly continueToken?: string,
  ) {
    super(message);
  }
}

/**
 * Probes a connection idle this long: a peer gone without a FIN (a NAT or conntrack entry
 * expired) then ends it within about a minute and a half (Linux: 9 probes 75 s apart unless the
 * kernel says otherwise; the reflector's own silence bound catches what the probes cannot, a
 * middlebox that answers probes but forwards nothing).
 */
const KEEPALIVE_IDLE_MS = 15_000;

/** Where and how to reach the API server: read from the kubeconfig once per list or watch. */
interface Connection {
  url: URL;
  agent: HttpAgent | undefined;
  headers: OutgoingHttpHeaders;
}

async function connection(
  kubeConfig: KubeConfig,
  path: string,
  query: URLSearchParams,
  accept: string,
): Promise<Connection> {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig names no current cluster');
  // Credentials are read per call: in-cluster tokens and exec plugins rotate them.
  const options: { agent?: HttpAgent; headers?: OutgoingHttpHeaders; auth?: string } = {};
  await kubeConfig.applyToHTTPSOptions(options);
  const headers: OutgoingHttpHeaders = { ...(options.headers ?? {}), Accept: accept };
  if (options.auth) headers.Authorization = `Basic ${Buffer.from(options.auth).toString('base64')}`;
  const url = new URL(cluster.server.replace(/\/+$/, '') + path);
  url.search = query.toString();
  return { url, agent: options.agent, headers };
}

/** Reads a Status body into an ApiStatusError (bounded: a Status is small). */
async function statusError(response: IncomingMessage): Promise<ApiStatusError> {
  const code = response.statusCode ?? 0;
  let text = '';
  for await (const chunk of response as AsyncIterable<Buffer>) {
    if (text.length < 4096) text += chunk.toString('utf8');
  }
  try {
    const status = JSON.parse(text) as {
      message?: unknown;
      reason?: unknown;
      metadata?: { continue?: unknown };
    };
    const message = typeof status.message === 'string' ? status.message : text.slice(0, 512);
    const token = status.metadata?.continue;
    return new ApiStatusError(
      code,
      message,
      typeof status.reason === 'string' ? status.reason : '',
      typeof token === 'string' && token !== '' ? token : undefined,
    );
  } catch {
    return new ApiStatusError(code, `HTTP ${code}: ${text.slice(0, 512)}`);
  }
}

/**
 * GETs `path` with `query` and resolves with the response once its headers show 200; any other
 * status rejects with an ApiStatusError. Aborting `signal` ends the request and its body. `accept`
 * may ask for another representation (METADATA_ONLY).
 */
export async function apiGet(
  kubeConfig: KubeConfig,
  path: string,
  query: URLSearchParams,
  signal: AbortSignal,
  accept = 'application/json',
): Promise<IncomingMessage> {
  const { url, agent, headers } = await connection(kubeConfig, path, query, accept);
  const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
  const response = await new Promise<IncomingMessage>((resolvePromise, reject) => {
    const req = send(url, { agent, headers, signal }, resolvePromise);
    req.on('socket', (socket) => {
      if (watchLiveness) socket.setKeepAlive(true, KEEPALIVE_IDLE_MS);
    });
    req.on('error', reject);
    req.end();
  });
  if (response.statusCode === 200) return response;
  throw await statusError(response);
}

/** A list's objects with their metadata only (PartialObjectMetadataList): names, not contents. */
export const METADATA_ONLY = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';

/** The whole body of a 200 answer, parsed. */
export async function readJson(response: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of response as AsyncIterable<Buffer>) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/**
 * Calls `line` with each newline-terminated line of a streamed body (a watch's events), as it
 * arrives; resolves when the body ends. A line is held only until its newline arrives.
 */
export async function forEachLine(response: IncomingMessage, line: (text: string) => void): Promise<void> {
  let pending: Buffer[] = [];
  for await (const chunk of response as AsyncIterable<Buffer>) {
    let start = 0;
    for (let end = chunk.indexOf(10, start); end !== -1; end = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, end);
      const text =
        pending.length === 0 ? piece.toString('utf8') : Buffer.concat([...pending, piece]).toString('utf8');
      pending = [];
      start = end + 1;
      if (text.length > 0) line(text);
    }
    if (start < chunk.length) pending.push(chunk.subarray(start));
  }
}
