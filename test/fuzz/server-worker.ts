/**
 * Worker-thread side of the fuzzed server: the real Koa app and HTTPS transport with the real
 * table. It runs off the client's thread so a review that blocks it for minutes can be timed
 * out and the worker terminated. Decision, warning and error log lines go to the parent (uid, ms,
 * size, level), with the 500s the server counted, and the case currently inside a rule is
 * published in shared memory, so a hang is blamed exactly. Its stdout and stderr go to the parent
 * too, which expects nothing on them.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { pino } from 'pino';
import { createAdmissionApp } from '../../webhook/server/app.js';
import { AdmissionHttpsServer } from '../../webhook/server/https-server.js';
import { admissionMetrics } from '../../webhook/metrics/admission-metrics.js';
import type { WebhookEntry } from '../../webhook/table.js';
import { logProcessWarnings } from '../../operator/process-warnings.js';
import { collectGarbage } from './gc.js';
import { fuzzState, fuzzWebhooks } from './world.js';
import { apiServerCallers } from '../harness/allowing-server.js';

export interface WorkerInput {
  certificatePem: string;
  privateKeyPem: string;
  /** The CA of the API server's client certificate: only it gets an answer. */
  clientCaPem: string;
  /** Int32 [0]: 1 + the index of the case inside a rule, -1 for an unknown uid, 0 for none. */
  marker: SharedArrayBuffer;
  /** The index of a case whose rule loops forever (the runner's own test of hang detection). */
  hangOnCase?: number;
}

export type WorkerMessage =
  | { type: 'listening'; port: number }
  | {
      type: 'log';
      uid: string | undefined;
      msg: string;
      bytes: number;
      ms: number | undefined;
      decision: boolean;
      /** pino's level: 40 warn, 50 error. */
      level: number;
    }
  | {
      type: 'done';
      id: number;
      /** This thread's V8 heap in use and the memory its objects hold outside it (Buffers). */
      heapUsed: number;
      external: number;
      /** admission_bad_requests_total{status="500"}: what the server counted as its own failures. */
      serverErrors: number;
      calibrationMs?: number;
    };

export type ParentMessage = { type: 'sync' | 'gc' | 'close' | 'calibrate'; id: number };

const port = parentPort;
if (!port) throw new Error('server-worker.ts runs as a worker thread');
const input = workerData as WorkerInput;
const marker = new Int32Array(input.marker);
const LARGE_LINE = 16 * 1024;

/**
 * Only what the checks need leaves the worker, never whole lines (which may be megabytes):
 * decisions, warnings and errors, and every line over the size bound.
 */
function forward(line: string): void {
  const bytes = Buffer.byteLength(line);
  const decision = line.includes('"msg":"admission decision"');
  // pino writes the level first: {"level":40,...
  const level = Number(/^\{"level":(\d+)/.exec(line)?.[1] ?? 0);
  if (!decision && level < 40 && bytes <= LARGE_LINE) return;
  let record: Record<string, unknown> = {};
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    // Reported by size alone.
  }
  port?.postMessage({
    type: 'log',
    uid: typeof record.uid === 'string' ? record.uid : undefined,
    msg: typeof record.msg === 'string' ? record.msg : '(unparsable line)',
    bytes,
    ms: typeof record.ms === 'number' ? record.ms : undefined,
    decision,
    level,
  } satisfies WorkerMessage);
}

const logger = pino({ level: 'info' }, { write: forward });
// As the operator does: a library's warning is a log line, not output on stderr.
logProcessWarnings(logger);
const metrics = admissionMetrics();
const state = fuzzState();

const caseOf = (uid: string): number => {
  const match = /^fuzz-\d+-(\d+)$/.exec(uid);
  return match?.[1] ? Number(match[1]) + 1 : -1;
};
const webhooks: WebhookEntry[] = fuzzWebhooks().map((entry) => ({
  ...entry,
  handler: (request, snapshot) => {
    Atomics.store(marker, 0, caseOf(request.uid));
    if (input.hangOnCase !== undefined && caseOf(request.uid) === input.hangOnCase + 1) {
      for (;;);
    }
    try {
      return entry.handler(request, snapshot);
    } finally {
      Atomics.store(marker, 0, 0);
    }
  },
}));

const app = createAdmissionApp({
  webhooks: () => webhooks,
  state: () => state,
  readiness: () => Promise.resolve({ ready: true, checks: {} }),
  metrics,
  logger,
  callers: apiServerCallers(),
});
const server = new AdmissionHttpsServer(app, logger, metrics);
const bound = await server.listen(0, '127.0.0.1', {
  certificatePem: input.certificatePem,
  privateKeyPem: input.privateKeyPem,
  clientCaPem: input.clientCaPem,
});
port.postMessage({ type: 'listening', port: bound } satisfies WorkerMessage);

/**
 * A fixed piece of work of the kind reviews do (parse, walk, serialise JSON), timed on the
 * server's own thread: how long it takes now, against how long it took at the start of the run,
 * says how much the machine is slowing this thread down.
 */
const calibrationText = JSON.stringify({
  items: Array.from({ length: 2000 }, (_, i) => ({
    name: `item-${i}`,
    labels: { a: String(i), b: 'x'.repeat(20) },
  })),
});
function calibrate(): number {
  const started = performance.now();
  for (let round = 0; round < 4; round++) JSON.stringify(JSON.parse(calibrationText));
  return performance.now() - started;
}

port.on('message', (message: ParentMessage) => {
  void (async () => {
    if (message.type === 'gc') collectGarbage?.();
    if (message.type === 'close') await server.close(500);
    const calibrationMs = message.type === 'calibrate' ? calibrate() : undefined;
    const counted = await metrics.badRequests.get();
    port.postMessage({
      type: 'done',
      id: message.id,
      // In a worker thread these two are this isolate's own figures, not the process's.
      heapUsed: process.memoryUsage().heapUsed,
      external: process.memoryUsage().external,
      serverErrors: counted.values.find((value) => value.labels.status === '500')?.value ?? 0,
      ...(calibrationMs === undefined ? {} : { calibrationMs }),
    } satisfies WorkerMessage);
  })();
});
