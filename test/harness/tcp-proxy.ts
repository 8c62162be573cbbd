/**
 * A TCP proxy between a client (the operator) and the API server that can freeze the connections
 * open through it without closing them: what a NAT or conntrack entry expiring, a balancer failing
 * over or a control-plane upgrade leaves behind, a half-open connection that neither delivers nor
 * ends. Bytes on a frozen connection are read and dropped, in both directions, and its end by the
 * server is not passed on; connections opened after the freeze work. No iptables, no privileges: the client is pointed at the proxy by a
 * kubeconfig of its own (`kubeconfigThrough`).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';

interface Pair {
  client: Socket;
  upstream: Socket;
  frozen: boolean;
  openedAt: number;
  frozenAt: number | undefined;
  /** Bytes from the client and from the server, and when each last sent any (dropped ones too). */
  fromClient: Traffic;
  fromServer: Traffic;
  /** The server ended its side while the connection was frozen (the client was not told). */
  serverEnded: boolean;
}

interface Traffic {
  bytes: number;
  lastAt: number | undefined;
}

export class TcpProxy {
  private readonly pairs = new Set<Pair>();
  private opened = 0;
  private readonly server: Server;
  private listeningPort = 0;
  /** While set, connections opened are frozen from their first byte too: the server is unreachable. */
  private holding = false;

  private constructor(private readonly target: { host: string; port: number }) {
    this.server = createServer((client) => {
      this.pipe(client);
    });
  }

  /** Listens on 127.0.0.1 (a free port) and forwards each connection to `target`. */
  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy(target);
    await new Promise<void>((resolvePromise, reject) => {
      proxy.server.once('error', reject);
      proxy.server.listen(0, '127.0.0.1', resolvePromise);
    });
    proxy.listeningPort = (proxy.server.address() as AddressInfo).port;
    return proxy;
  }

  get port(): number {
    return this.listeningPort;
  }

  private pipe(client: Socket): void {
    const upstream = connect(this.target.port, this.target.host);
    const now = Date.now();
    const pair: Pair = {
      client,
      upstream,
      frozen: this.holding,
      openedAt: now,
      frozenAt: this.holding ? now : undefined,
      fromClient: { bytes: 0, lastAt: undefined },
      fromServer: { bytes: 0, lastAt: undefined },
      serverEnded: false,
    };
    this.pairs.add(pair);
    this.opened++;
    const forward = (from: Socket, to: Socket, traffic: Traffic): void => {
      from.on('data', (chunk: Buffer) => {
        traffic.bytes += chunk.length;
        traffic.lastAt = Date.now();
        if (!pair.frozen) to.write(chunk);
      });
    };
    forward(client, upstream, pair.fromClient);
    forward(upstream, client, pair.fromServer);
    const end = (): void => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end);
    client.on('close', end);
    // The API server ending a frozen connection (a watch's timeout, a restart) is not heard either:
    // the client's side stays open and silent until the client gives up on it.
    const upstreamEnded = (): void => {
      if (pair.frozen) {
        pair.serverEnded = true;
        upstream.destroy();
      } else end();
    };
    upstream.on('error', upstreamEnded);
    upstream.on('close', upstreamEnded);
  }

  /** Freezes every connection open now: nothing more passes either way, and none is closed. */
  freeze(): number {
    let frozen = 0;
    const now = Date.now();
    for (const pair of this.pairs) {
      if (!pair.frozen) {
        frozen++;
        pair.frozenAt = now;
      }
      pair.frozen = true;
    }
    return frozen;
  }

  /**
   * Freezes every connection open now and every one opened until `release`: a client whose API
   * server stops answering it (a saturated or partitioned control plane) without closing anything.
   */
  hold(): number {
    this.holding = true;
    return this.freeze();
  }

  /** Connections opened from now on work again; those frozen stay frozen until their client gives up. */
  release(): void {
    this.holding = false;
  }

  /** Connections open now, and how many of them are frozen. */
  get open(): { all: number; frozen: number } {
    const all = [...this.pairs];
    return { all: all.length, frozen: all.filter((pair) => pair.frozen).length };
  }

  /**
   * The frozen connections still open, one line each: when each was opened and what passed on it
   * before and since its freeze, in seconds relative to the freeze. A failing test prints it, so
   * that a connection its client never gave up is told from another (a watch streams bytes from
   * the server until it is frozen; an idle pooled connection sent nothing for a while before).
   */
  describeFrozen(): string {
    const lines: string[] = [];
    for (const pair of this.pairs) {
      if (!pair.frozen || pair.frozenAt === undefined) continue;
      const at = pair.frozenAt;
      const rel = (ms: number | undefined): string =>
        ms === undefined ? 'never' : `${((ms - at) / 1000).toFixed(1)} s`;
      lines.push(
        `opened ${rel(pair.openedAt)}; from the client ${pair.fromClient.bytes} bytes, last ${rel(pair.fromClient.lastAt)}; ` +
          `from the server ${pair.fromServer.bytes} bytes, last ${rel(pair.fromServer.lastAt)}` +
          (pair.serverEnded ? '; the server ended it' : ''),
      );
    }
    return lines.join('\n');
  }

  /** Connections accepted since the start. */
  get accepted(): number {
    return this.opened;
  }

  async close(): Promise<void> {
    for (const pair of this.pairs) {
      pair.client.destroy();
      pair.upstream.destroy();
    }
    await new Promise<void>((resolvePromise) => {
      this.server.close(() => {
        resolvePromise();
      });
    });
  }
}

/**
 * Writes, into `dir`, a copy of the kubeconfig at `source` whose server is `proxy` (same address
 * family: the API server's certificate names 127.0.0.1), and returns its path and the original
 * server's host and port.
 */
export async function kubeconfigThrough(
  source: string,
  dir: string,
  proxyPort: number,
): Promise<{ path: string; target: { host: string; port: number } }> {
  const text = await readFile(source, 'utf8');
  const match = /"?server"?:\s*"?(https:\/\/([\d.]+):(\d+))/.exec(text);
  if (!match?.[1] || !match[2] || !match[3]) throw new Error(`${source}: no https server on an IPv4 address`);
  const path = join(dir, `kubeconfig-through-${proxyPort}`);
  await writeFile(path, text.replace(match[1], `https://${match[2]}:${proxyPort}`));
  return { path, target: { host: match[2], port: Number(match[3]) } };
}
