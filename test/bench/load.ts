/**
 * A keep-alive HTTPS load generator, run as a child process (`node --import tsx load.ts '<json>'`)
 * so it can sit on a core of its own. It speaks HTTP/1.1 over raw TLS sockets and reads only the
 * status line and Content-Length: Node's http client would cost more than the bare server it
 * measures. Prints one JSON line: a LoadResult.
 *
 * Without `rate` each connection sends its next request as soon as the answer is in (the peak
 * rate). With `rate`, requests fall due on a fixed schedule and each latency counts from when it
 * was due, not when a connection was free to send it, so queueing is not hidden.
 */
import { connect, type TLSSocket } from 'node:tls';

export interface LoadOptions {
  port: number;
  path: string;
  body: string;
  ca: string;
  /** The client certificate each connection presents (the API server's, where callers are verified). */
  client?: { cert: string; key: string };
  connections: number;
  durationMs: number;
  /** Requests per second for an open-loop run; absent: as fast as answers come back. */
  rate?: number;
}

export interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
  rate: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU time this process used over the run, as a share of its wall time (1 = one core busy). */
  cpu: number;
}

/** Latencies are kept in 10 µs buckets up to 1 s (longer ones in the last), enough for p99. */
const BUCKET_US = 10;
const BUCKETS = 100_000;

function percentileMs(histogram: Uint32Array, total: number, p: number): number {
  const wanted = Math.ceil((p / 100) * total);
  let seen = 0;
  for (let i = 0; i < histogram.length; i++) {
    seen += histogram[i] ?? 0;
    if (seen >= wanted) return ((i + 0.5) * BUCKET_US) / 1000;
  }
  return Number.NaN;
}

const HEADER_END = Buffer.from('\r\n\r\n');

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const body = Buffer.from(options.body);
  const request = Buffer.concat([
    Buffer.from(
      `POST ${options.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\nConnection: keep-alive\r\n\r\n`,
    ),
    body,
  ]);
  const histogram = new Uint32Array(BUCKETS);
  let requests = 0;
  let errors = 0;
  let measuring = true;
  const now = (): number => performance.now();

  /** Due times (ms) of requests waiting for a free connection, open-loop only. */
  const queue: number[] = [];
  const idle: Connection[] = [];

  class Connection {
    private readonly socket: TLSSocket;
    private buffered: Buffer | undefined;
    private due = 0;

    constructor(ready: () => void) {
      this.socket = connect({
        host: '127.0.0.1',
        port: options.port,
        ca: options.ca,
        ...(options.client ?? {}),
        servername: 'localhost',
      });
      this.socket.setNoDelay(true);
      this.socket.once('secureConnect', ready);
      this.socket.on('data', (chunk: Buffer) => {
        this.read(chunk);
      });
      this.socket.on('error', () => {
        errors++;
      });
    }

    send(due: number): void {
      this.due = due;
      this.socket.write(request);
    }

    close(): void {
      this.socket.destroy();
    }

    private read(chunk: Buffer): void {
      const data = this.buffered ? Buffer.concat([this.buffered, chunk]) : chunk;
      const headerEnd = data.indexOf(HEADER_END);
      if (headerEnd < 0) {
        this.buffered = data;
        return;
      }
      const head = data.subarray(0, headerEnd).toString('latin1');
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? Number.NaN);
      const end = headerEnd + HEADER_END.length + length;
      if (Number.isNaN(length)) {
        errors++;
        this.close();
        return;
      }
      if (data.length < end) {
        this.buffered = data;
        return;
      }
      this.buffered = data.length > end ? data.subarray(end) : undefined;
      if (!head.startsWith('HTTP/1.1 200')) errors++;
      else if (measuring) {
        const micros = (now() - this.due) * 1000;
        histogram[Math.min(BUCKETS - 1, Math.floor(micros / BUCKET_US))]! += 1;
        requests++;
      }
      this.next();
    }

    private next(): void {
      if (options.rate === undefined) {
        if (measuring) this.send(now());
        return;
      }
      const due = queue.shift();
      if (due === undefined) idle.push(this);
      else this.send(due);
    }
  }

  const connections: Connection[] = [];
  await Promise.all(
    Array.from(
      { length: options.connections },
      () =>
        new Promise<void>((ready) => {
          connections.push(new Connection(ready));
        }),
    ),
  );
  const started = now();
  const cpuAtStart = process.cpuUsage();
  let timer: NodeJS.Timeout | undefined;
  if (options.rate === undefined) {
    for (const connection of connections) connection.send(started);
  } else {
    idle.push(...connections);
    const interval = 1000 / options.rate;
    let sent = 0;
    // Checked every millisecond; each tick sends (or queues) every request that has fallen due.
    timer = setInterval(() => {
      const t = now();
      for (; started + sent * interval <= t; sent++) {
        const due = started + sent * interval;
        const free = idle.pop();
        if (free) free.send(due);
        else queue.push(due);
      }
    }, 1);
  }
  await new Promise((resolvePromise) => setTimeout(resolvePromise, options.durationMs));
  measuring = false;
  const seconds = (now() - started) / 1000;
  const cpu = process.cpuUsage(cpuAtStart);
  clearInterval(timer);
  for (const connection of connections) connection.close();
  return {
    requests,
    errors,
    seconds,
    rate: requests / seconds,
    p50Ms: percentileMs(histogram, requests, 50),
    p99Ms: percentileMs(histogram, requests, 99),
    cpu: (cpu.user + cpu.system) / 1e6 / seconds,
  };
}

if (process.argv[2] !== undefined && import.meta.url.endsWith(process.argv[1]?.split('/').pop() ?? '')) {
  const result = await runLoad(JSON.parse(process.argv[2]) as LoadOptions);
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}
