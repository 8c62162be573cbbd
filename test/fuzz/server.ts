/**
 * The fuzzed admission server, seen from the client's thread: starts it in a worker thread
 * with a certificate from the project's x509 module, restarts it when a review blocked it,
 * and collects what its log said about each review.
 */
import { Agent, request } from 'node:https';
import { Worker } from 'node:worker_threads';
import { localServingCertificate, type LocalCertificate } from '../harness/allowing-server.js';
import type { ParentMessage, WorkerInput, WorkerMessage } from './server-worker.js';

export interface DecisionRecord {
  ms: number;
  bytes: number;
}

export interface LogRecord {
  uid: string | undefined;
  msg: string;
  bytes: number;
  level: number;
}

/** What the server thread wrote to stdout or stderr that a report shows at most. */
const STRAY_OUTPUT_CHARS = 2000;

const START_TIMEOUT_MS = 60_000;

export class FuzzServer {
  readonly ca: string;
  /** The client certificate every case is sent with: the server answers only the API server's. */
  readonly apiServer: LocalCertificate['apiServer'];
  private readonly certificate: LocalCertificate;
  private readonly marker = new SharedArrayBuffer(4);
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly waiting = new Map<number, () => void>();
  port = 0;
  agent: Agent;
  restarts = 0;
  /** The server thread's V8 heap in use, as of its last answer to sync() or gc(). */
  heapUsed = 0;
  /** The server thread's memory outside the V8 heap (Buffers, TLS), as of the same answer. */
  external = 0;
  /** The time of the server thread's fixed calibration work, as of its last answer to calibrate(). */
  private calibrationMs = Number.NaN;
  /** By uid: the server's own timing of each review. */
  readonly decisions = new Map<string, DecisionRecord>();
  /** Log lines the checks look at: warnings, errors and every line over the size bound. */
  readonly logs: LogRecord[] = [];
  /** What the server thread wrote to stdout or stderr since the runner last took it (bounded). */
  strayOutput = '';
  /** admission_bad_requests_total{status="500"} of the running server, as of its last answer. */
  serverErrors = 0;

  private constructor(
    certificate: LocalCertificate,
    private readonly hangOnCase: number | undefined,
  ) {
    this.ca = certificate.ca;
    this.apiServer = certificate.apiServer;
    this.certificate = certificate;
    this.agent = this.newAgent();
  }

  /**
   * A server with a CA, serving certificate and API server client certificate of its own (not
   * started yet); it verifies callers as an operator with --client-ca-file does. `hangOnCase`
   * makes the rule loop forever on that case.
   */
  static async create(hangOnCase?: number): Promise<FuzzServer> {
    return new FuzzServer(await localServingCertificate('fuzz-ca'), hangOnCase);
  }

  private newAgent(): Agent {
    return new Agent({ keepAlive: true, maxSockets: 16, ca: this.ca, ...this.apiServer });
  }

  async start(): Promise<void> {
    Atomics.store(new Int32Array(this.marker), 0, 0);
    // Workers do not inherit tsx's loader: register it inside before importing the TypeScript entry.
    const api = import.meta.resolve('tsx/esm/api');
    const entry = new URL('./server-worker.ts', import.meta.url).href;
    const input: WorkerInput = {
      certificatePem: this.certificate.certificatePem,
      privateKeyPem: this.certificate.privateKeyPem,
      clientCaPem: this.certificate.ca,
      marker: this.marker,
      ...(this.hangOnCase === undefined ? {} : { hangOnCase: this.hangOnCase }),
    };
    const worker = new Worker(
      `import(${JSON.stringify(api)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`,
      // Its stdout and stderr come here instead of the run's own: anything on them is a finding.
      { eval: true, workerData: input, stdout: true, stderr: true },
    );
    this.worker = worker;
    this.serverErrors = 0;
    for (const stream of [worker.stdout, worker.stderr]) {
      stream.setEncoding('utf8');
      stream.on('data', (text: string) => {
        if (this.strayOutput.length < STRAY_OUTPUT_CHARS)
          this.strayOutput = (this.strayOutput + text).slice(0, STRAY_OUTPUT_CHARS);
      });
    }
    this.port = await new Promise<number>((resolvePromise, reject) => {
      const timer = setTimeout(() => {
        reject(new Error('the fuzz server did not start within 60 s'));
      }, START_TIMEOUT_MS);
      worker.once('error', (error: Error) => {
        clearTimeout(timer);
        reject(error);
      });
      worker.on('message', (message: WorkerMessage) => {
        if (message.type === 'listening') {
          clearTimeout(timer);
          resolvePromise(message.port);
        } else if (message.type === 'log') {
          if (message.decision && message.uid !== undefined && message.ms !== undefined) {
            this.decisions.set(message.uid, { ms: message.ms, bytes: message.bytes });
          }
          if (!message.decision || message.bytes > 16 * 1024)
            this.logs.push({
              uid: message.uid,
              msg: message.msg,
              bytes: message.bytes,
              level: message.level,
            });
        } else {
          this.heapUsed = message.heapUsed;
          this.external = message.external;
          this.serverErrors = message.serverErrors;
          if (message.calibrationMs !== undefined) this.calibrationMs = message.calibrationMs;
          this.waiting.get(message.id)?.();
          this.waiting.delete(message.id);
        }
      });
    });
  }

  /** Kills the worker (even mid-rule) and starts a fresh one. */
  async restart(): Promise<void> {
    this.restarts++;
    this.agent.destroy();
    await this.worker?.terminate();
    this.waiting.clear();
    this.agent = this.newAgent();
    await this.start();
  }

  async stop(): Promise<void> {
    this.agent.destroy();
    if (this.worker) {
      await Promise.race([this.ask('close'), new Promise((r) => setTimeout(r, 2000))]);
      await this.worker.terminate();
    }
    this.worker = undefined;
  }

  /** The case (index) inside a rule right now, -1 if it is not a fuzz case, undefined if none. */
  blockedCase(): number | undefined {
    const value = Atomics.load(new Int32Array(this.marker), 0);
    return value === 0 ? undefined : value === -1 ? -1 : value - 1;
  }

  private ask(type: ParentMessage['type'], timeoutMs = 5000): Promise<boolean> {
    const worker = this.worker;
    if (!worker) return Promise.resolve(false);
    const id = this.nextId++;
    return new Promise<boolean>((resolvePromise) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolvePromise(false);
      }, timeoutMs);
      this.waiting.set(id, () => {
        clearTimeout(timer);
        resolvePromise(true);
      });
      worker.postMessage({ type, id } satisfies ParentMessage);
    });
  }

  /** Resolves once every log message the worker sent before now has arrived (messages keep their order). */
  sync(): Promise<boolean> {
    return this.ask('sync');
  }

  gc(): Promise<boolean> {
    return this.ask('gc');
  }

  /** Times a fixed piece of JSON work on the server's thread (ms; NaN when it did not answer). */
  async calibrate(): Promise<number> {
    this.calibrationMs = Number.NaN;
    await this.ask('calibrate');
    return this.calibrationMs;
  }

  /** GET /healthz answers 200 "ok" within `timeoutMs`. */
  health(timeoutMs = 2000): Promise<boolean> {
    return new Promise((resolvePromise) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: this.port,
          path: '/healthz',
          method: 'GET',
          agent: this.agent,
          timeout: timeoutMs,
        },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => {
            resolvePromise(res.statusCode === 200 && body === 'ok');
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => {
        resolvePromise(false);
      });
      req.end();
    });
  }
}
