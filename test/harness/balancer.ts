/**
 * A TCP balancer standing in for a Service in front of several operator replicas on one machine:
 * the API server calls one URL (the balancer on 127.0.0.1), and each new connection goes to the
 * next ready replica, as kube-proxy spreads connections over a Service's ready endpoints.
 *
 * What it models of the endpoints controller: every `readinessPeriodMs` (1 s by default) it asks
 * each replica's /readyz, as the kubelet's readiness probe does, and the answer takes effect
 * `propagationMs` later (1 s by default), the time an EndpointSlice change takes to reach the
 * proxies. So a replica that stops being ready (drain) or dies (kill -9) keeps receiving new
 * connections for at most readinessPeriodMs + propagationMs (2 s by default), plus the probe's
 * own time-out when it hangs instead of refusing. Like kube-proxy, a connection to a dead
 * replica is not retried elsewhere: the client sees it fail. Connections already open stay on
 * their replica until one side closes them.
 */
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { request } from 'node:https';

/**
 * How long a readiness probe waits for its answer: the chart's `timeoutSeconds` (helm-template.test.ts
 * checks the two agree). In a burst the probe's handshake queues behind the API server's.
 */
export const PROBE_TIMEOUT_MS = 5000;

export interface BalancerOptions {
  /** Where the balancer listens; 127.0.0.1 and a free port by default. */
  host?: string;
  port?: number;
  readinessPeriodMs?: number;
  propagationMs?: number;
  /** How long a readiness probe may take before it counts as failed. */
  probeTimeoutMs?: number;
}

interface BackendState {
  port: number;
  /** Whether connections are sent to it (what the proxies believe). */
  ready: boolean;
  /** Whether it still belongs to the balancer. */
  member: boolean;
  connections: number;
  /** Connections piped to it right now. */
  open: number;
  /** A probe of it is waiting for its answer: like the kubelet's, the next one waits for it. */
  probing: boolean;
  /** Where its readiness is asked, when not its own port's HTTPS /readyz (koord-manager's health port). */
  probe: ReadinessProbe | undefined;
}

/** Whether a backend is ready, asked within the time-out: a readiness probe other than /readyz on its port. */
export type ReadinessProbe = (timeoutMs: number) => Promise<boolean>;

export interface BalancerStats {
  /** Connections accepted, per backend port. */
  connections: Record<number, number>;
  /** Connections open now, per backend port. */
  open: Record<number, number>;
  /** Connections that found no ready backend, or whose backend refused them. */
  failedConnections: number;
  /** Times a member's readiness, as the proxies see it, went from ready to not ready. */
  turnedUnready: number;
}

/** One readiness probe: true when /readyz answers 200 within the time-out. */
function probeReady(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolvePromise) => {
    const req = request(
      {
        host,
        port,
        path: '/readyz',
        method: 'GET',
        rejectUnauthorized: false,
        timeout: timeoutMs,
        agent: false,
      },
      (res) => {
        res.resume();
        resolvePromise(res.statusCode === 200);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => {
      resolvePromise(false);
    });
    req.end();
  });
}

export class TcpBalancer {
  private turnedUnready = 0;
  private readonly backends = new Map<number, BackendState>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly sockets = new Set<Socket>();
  private server: Server | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  private next = 0;
  private failed = 0;
  private readonly host: string;
  private readonly readinessPeriodMs: number;
  private readonly propagationMs: number;
  private readonly probeTimeoutMs: number;
  /** The port the balancer listens on, once listening. */
  port = 0;

  constructor(private readonly options: BalancerOptions = {}) {
    this.host = options.host ?? '127.0.0.1';
    this.readinessPeriodMs = options.readinessPeriodMs ?? 1000;
    this.propagationMs = options.propagationMs ?? 1000;
    this.probeTimeoutMs = options.probeTimeoutMs ?? PROBE_TIMEOUT_MS;
  }

  /** The delay a failing replica can still receive new connections for, when its probe fails fast. */
  get removalWindowMs(): number {
    return this.readinessPeriodMs + this.propagationMs;
  }

  async listen(): Promise<number> {
    const server = createServer((client) => {
      this.route(client);
    });
    await new Promise<void>((resolvePromise, reject) => {
      server.once('error', reject);
      // kube-proxy accepts nothing (it rewrites addresses in the kernel): the balancer's own accept
      // queue must not drop a burst's SYNs that a Service would pass on. Linux caps it at somaxconn.
      server.listen({ port: this.options.port ?? 0, host: this.host, backlog: 4096 }, () => {
        server.off('error', reject);
        resolvePromise();
      });
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    this.probeTimer = setInterval(() => {
      this.probeAll();
    }, this.readinessPeriodMs);
    return this.port;
  }

  /** Adds a replica; like a new pod, it gets connections only once a probe has seen it ready. */
  add(port: number, probe?: ReadinessProbe): void {
    this.backends.set(port, {
      port,
      ready: false,
      member: true,
      connections: 0,
      open: 0,
      probing: false,
      probe,
    });
  }

  /** Removes a replica (its pod object is gone): no new connections from now on. */
  remove(port: number): void {
    const backend = this.backends.get(port);
    if (!backend) return;
    backend.member = false;
    backend.ready = false;
    this.backends.delete(port);
  }

  /** The replicas connections are sent to now. */
  readyPorts(): number[] {
    return [...this.backends.values()].filter((backend) => backend.ready).map((backend) => backend.port);
  }

  stats(): BalancerStats {
    return {
      connections: Object.fromEntries([...this.backends.values()].map((b) => [b.port, b.connections])),
      open: Object.fromEntries([...this.backends.values()].map((b) => [b.port, b.open])),
      failedConnections: this.failed,
      turnedUnready: this.turnedUnready,
    };
  }

  async close(): Promise<void> {
    clearInterval(this.probeTimer);
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const socket of this.sockets) socket.destroy();
    const server = this.server;
    this.server = undefined;
    if (server)
      await new Promise<void>((resolvePromise) =>
        server.close(() => {
          resolvePromise();
        }),
      );
  }

  private probeAll(): void {
    for (const backend of this.backends.values()) {
      // A late answer must not overwrite a newer one (a drain's 503 with the 200 of before it).
      if (backend.probing) continue;
      backend.probing = true;
      const asked = backend.probe
        ? backend.probe(this.probeTimeoutMs).catch(() => false)
        : probeReady(this.host, backend.port, this.probeTimeoutMs);
      void asked.then((ready) => {
        backend.probing = false;
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          if (backend.member && backend.ready && !ready) this.turnedUnready += 1;
          if (backend.member) backend.ready = ready;
        }, this.propagationMs);
        this.timers.add(timer);
      });
    }
  }

  private route(client: Socket): void {
    this.sockets.add(client);
    client.once('close', () => this.sockets.delete(client));
    const ready = [...this.backends.values()].filter((backend) => backend.ready);
    if (ready.length === 0) {
      this.failed += 1;
      client.destroy();
      return;
    }
    const backend = ready[this.next++ % ready.length]!;
    backend.connections += 1;
    backend.open += 1;
    const upstream = connect({ host: this.host, port: backend.port });
    this.sockets.add(upstream);
    upstream.once('close', () => {
      backend.open -= 1;
    });
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
    });
    upstream.once('close', (hadError) => {
      this.sockets.delete(upstream);
      // A clean close has already ended the client through the pipe, after the last byte.
      if (hadError) client.destroy();
    });
    upstream.once('error', () => {
      if (!connected) this.failed += 1;
    });
    client.once('error', () => upstream.destroy());
    client.once('close', () => upstream.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  }
}
