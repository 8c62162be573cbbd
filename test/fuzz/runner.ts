/**
 * Runs fuzz cases against the real admission server and applies the checks: batches sent over
 * keep-alive HTTPS with a small concurrency, a health check after each batch, timed-out and
 * slow reviews confirmed by replaying them alone (scaled by how busy the machine is then), and
 * resident memory compared before and after.
 */
import {
  HANDLER_MS_LIMIT,
  checkHandlerTime,
  checkLogLine,
  checkResponse,
  checkGrowth,
  type Failure,
  type FailureClass,
  type HttpResult,
} from './checks.js';
import { sendCase } from './client.js';
import { collectGarbage } from './gc.js';
import { fuzzPaths, generateCase, type FuzzCase } from './generate.js';
import { FuzzServer } from './server.js';
import { fuzzWebhooks } from './world.js';

export interface RunOptions {
  seed: number;
  /** How many cases, from index `first`. */
  cases: number;
  first?: number;
  /** Exactly these case indexes instead (replay). */
  only?: number[];
  concurrency?: number;
  batchSize?: number;
  /** Per-request client timeout; a review still unanswered then blocked the server. */
  timeoutMs?: number;
  /** Stop starting batches after this long (the report says so). */
  deadlineMs?: number;
  progress?: (line: string) => void;
  /** Makes the rule loop forever on this case: proves that a real hang is still reported. */
  hangOnCase?: number;
  /**
   * Counts a review whose handler time passes HANDLER_MS_LIMIT, replayed alone, as slow-review
   * (default). Tests turn it off: a time is a benchmark's figure (`npm run bench -- hostile`), and
   * on a machine shared with other suites no scaling made it a reliable assertion. The slowest
   * review is reported either way; a review that never answers is a timeout either way.
   */
  judgeHandlerTime?: boolean;
}

/** The short run the unit suite makes and the hostile bench times: one seed, its first cases. */
export const SHORT_RUN = { seed: 20_260_601, cases: 800 } as const;

/** How often a timed-out case, or a failed health check, is tried again before it counts. */
const REPLAYS = 3;
/** How often a slow review is replayed alone, a pause between, before it counts as slow. */
const SLOW_REPLAYS = 5;
const SLOW_REPLAY_PAUSE_MS = 250;
/** A replay waits at most this many client timeouts, however slow the machine measured. */
const MAX_TIMEOUT_SCALE = 15;

export interface FailureRecord extends Failure {
  seed: number;
  index: number;
  path: string;
  description: string;
}

export interface RunReport {
  seed: number;
  casesRun: number;
  casesByPath: Record<string, number>;
  failures: FailureRecord[];
  countsByClass: Partial<Record<FailureClass, number>>;
  /** The slowest review: its handler time, or the client timeout when it never answered. */
  slowest: { index: number; path: string; description: string; ms: number; timedOut?: boolean } | undefined;
  /** After the warm-up, and after a quarter of the batches: the baseline of the growth check. */
  rssBeforeBytes: number;
  rssQuarterBytes: number;
  rssAfterBytes: number;
  /** The server thread's V8 heap in use before and after (after GC): where a leak in the server would show. */
  /** The server thread's V8 heap in use plus its external memory, after a GC. */
  serverMemoryBeforeBytes: number;
  serverMemoryAfterBytes: number;
  wallMs: number;
  restarts: number;
  stoppedAtDeadline: boolean;
}

interface Replay {
  result: HttpResult;
  /** Set when every replay timed out: how long the last one waited, and where the thread was. */
  hang?: { waitedMs: number; insideItsRule: boolean };
}

interface Outcome extends Replay {
  fuzzCase: FuzzCase;
}

async function pool<T>(items: T[], concurrency: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const item = items[next++] as T;
        await task(item);
      }
    }),
  );
}

const sleep = (ms: number): Promise<void> => new Promise((resolvePromise) => setTimeout(resolvePromise, ms));

export async function runFuzz(options: RunOptions): Promise<RunReport> {
  const started = Date.now();
  const concurrency = options.concurrency ?? 8;
  const batchSize = options.batchSize ?? 64;
  const timeoutMs = options.timeoutMs ?? 2000;
  const judgeHandlerTime = options.judgeHandlerTime ?? true;
  const progress = options.progress ?? ((): void => undefined);
  const table = fuzzWebhooks();
  const entries = new Map(table.map((entry) => [entry.path, entry]));
  const seeded = new Set(fuzzPaths());
  const unseeded = table.filter((entry) => !seeded.has(entry.path)).map((entry) => entry.path);
  const unknown = [...seeded].filter((path) => !entries.has(path));
  if (unseeded.length > 0 || unknown.length > 0) {
    throw new Error(
      `seeds and table disagree: no seed for ${unseeded.join(', ') || '-'}; no webhook at ${unknown.join(', ') || '-'} ` +
        `(each webhook's seeds are in webhook/webhooks/<name>/examples.ts; run ` +
        `npx tsx scripts/run-tests.ts unit test/unit/webhook/webhook-folders.test.ts)`,
    );
  }

  const indexes = options.only ?? Array.from({ length: options.cases }, (_, i) => (options.first ?? 0) + i);
  const failures: FailureRecord[] = [];
  const casesByPath: Record<string, number> = {};
  let slowest: RunReport['slowest'];
  let casesRun = 0;
  let stoppedAtDeadline = false;
  const record = (fuzzCase: FuzzCase, found: Failure[]): void => {
    for (const failure of found) {
      failures.push({
        ...failure,
        seed: fuzzCase.seed,
        index: fuzzCase.index,
        path: fuzzCase.path,
        description: fuzzCase.description,
      });
    }
  };

  const server = await FuzzServer.create(options.hangOnCase);
  await server.start();
  const send = (fuzzCase: FuzzCase, timeout = timeoutMs): Promise<HttpResult> =>
    sendCase(fuzzCase, {
      port: server.port,
      agent: server.agent,
      ca: server.ca,
      client: server.apiServer,
      timeoutMs: timeout,
    });
  // Warm up (JIT, TLS sessions, lazy modules) so the first cases are not blamed for it.
  for (const path of seeded) {
    const warm = generateCase(options.seed, 0);
    await send({ ...warm, path, body: Buffer.from('{}'), expect: { kind: 'status', status: 400 } });
  }
  const rssBeforeBytes = await settledRss(server);
  const serverMemoryBeforeBytes = server.heapUsed + server.external;
  // The quietest the server's thread gets: slow reviews are judged against it (see confirmSlow).
  let calibrationBaseMs = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 5; round++)
    calibrationBaseMs = Math.min(calibrationBaseMs, await server.calibrate());

  // The machine's slowdown of the server thread now, against the run's quietest (1 when it did not answer).
  const currentLoad = async (): Promise<number> => {
    const calibrationMs = await server.calibrate();
    return Number.isFinite(calibrationMs) ? Math.max(1, calibrationMs / calibrationBaseMs) : 1;
  };
  // A case that timed out, sent alone up to REPLAYS times, each with the client timeout scaled by
  // the load measured right before it: on a machine busy with other work an answer takes longer
  // but comes, while a review that blocks the server never answers.
  const replayAlone = async (fuzzCase: FuzzCase): Promise<Replay> => {
    let waitedMs = 0;
    let insideItsRule = false;
    let result: HttpResult | undefined;
    for (let attempt = 0; attempt < REPLAYS; attempt++) {
      waitedMs = Math.round(timeoutMs * Math.min(MAX_TIMEOUT_SCALE, await currentLoad()));
      server.decisions.delete(fuzzCase.uid ?? '');
      result = await send(fuzzCase, waitedMs);
      if (!result.timedOut) return { result };
      insideItsRule = server.blockedCase() === fuzzCase.index;
      await server.restart();
    }
    return { result: result as HttpResult, hang: { waitedMs, insideItsRule } };
  };
  // A health or sync check that failed is asked again (a starved thread answers late); a dead
  // server fails every time.
  const confirmed = async (check: () => Promise<boolean>): Promise<boolean> => {
    for (let attempt = 0; attempt < REPLAYS; attempt++) if (await check()) return true;
    return false;
  };

  // The allocator keeps the high-water mark of the largest bodies seen; growth after that is what leaks.
  let rssQuarterBytes = rssBeforeBytes;
  const quarter = Math.floor(indexes.length / batchSize / 4) * batchSize;
  for (let offset = 0; offset < indexes.length; offset += batchSize) {
    if (offset === quarter && offset > 0) rssQuarterBytes = await settledRss(server);
    if (options.deadlineMs !== undefined && Date.now() - started > options.deadlineMs) {
      stoppedAtDeadline = true;
      break;
    }
    const batch = indexes.slice(offset, offset + batchSize).map((index) => generateCase(options.seed, index));
    const outcomes: Outcome[] = [];
    server.decisions.clear();
    const restartsBefore = server.restarts;
    const serverErrorsBefore = server.serverErrors;
    await pool(batch, concurrency, async (fuzzCase) => {
      const result = await send(fuzzCase);
      outcomes.push({ fuzzCase, result });
    });
    casesRun += batch.length;
    for (const fuzzCase of batch) {
      const route = fuzzCase.path.replace(/\/x$/, '');
      casesByPath[route] = (casesByPath[route] ?? 0) + 1;
    }

    // A timeout means the server's thread was stuck, or the machine starved it. Every hung case is
    // replayed alone on a fresh server before it counts: a review that blocks the thread times out
    // on every replay, however long the wait.
    const hung = outcomes.filter((o) => o.result.timedOut && o.fuzzCase.expect.kind !== 'none');
    if (hung.length > 0) {
      await server.restart();
      for (const outcome of hung) Object.assign(outcome, await replayAlone(outcome.fuzzCase));
    } else if (!(await confirmed(() => server.sync()))) {
      record(batch[0] as FuzzCase, [
        { class: 'server-down', detail: 'the server stopped answering its parent thread' },
      ]);
      await server.restart();
    }

    const slow: FuzzCase[] = [];
    for (const { fuzzCase, result, hang } of outcomes) {
      const found = checkResponse(fuzzCase, result, entries.get(fuzzCase.path));
      record(
        fuzzCase,
        hang
          ? found.map((failure) =>
              failure.class === 'timeout'
                ? {
                    ...failure,
                    detail: `no answer in ${REPLAYS} replays alone (the last waited ${hang.waitedMs} ms); the server thread was ${hang.insideItsRule ? "inside this case's rule" : 'outside any rule of this case'}`,
                  }
                : failure,
            )
          : found,
      );
      if (result.timedOut && fuzzCase.expect.kind !== 'none') {
        if (!slowest?.timedOut) {
          slowest = {
            index: fuzzCase.index,
            path: fuzzCase.path,
            description: fuzzCase.description,
            ms: timeoutMs,
            timedOut: true,
          };
        }
        continue;
      }
      const decision = fuzzCase.uid === undefined ? undefined : server.decisions.get(fuzzCase.uid);
      // A dribbled body's time includes the dribbling: it measures the client, not the handler.
      if (!decision || fuzzCase.transport.startsWith('slow')) continue;
      if (judgeHandlerTime && checkHandlerTime(decision.ms).length > 0) slow.push(fuzzCase);
      else if (!slowest || (decision.ms > slowest.ms && !slowest.timedOut)) {
        slowest = {
          index: fuzzCase.index,
          path: fuzzCase.path,
          description: fuzzCase.description,
          ms: decision.ms,
        };
      }
    }

    // Concurrent reviews wait for each other on one thread: only a review slow on its own counts.
    // A machine shared with other work slows every review alike; each replay is scaled by the
    // server thread's calibration work measured right before it, against the run's quietest.
    for (const fuzzCase of slow) {
      let best = Number.POSITIVE_INFINITY;
      let bestRaw = Number.POSITIVE_INFINITY;
      let bestLoad = 1;
      // Replayed until one replay is within the limit: a starved thread (the idle scheduling class
      // beside busy suites) can be slow for one replay and the next, never five times with pauses.
      for (let attempt = 0; attempt < SLOW_REPLAYS && best > HANDLER_MS_LIMIT; attempt++) {
        if (attempt > 0) await sleep(SLOW_REPLAY_PAUSE_MS);
        const calibrationMs = await server.calibrate();
        const load = Number.isFinite(calibrationMs) ? Math.max(1, calibrationMs / calibrationBaseMs) : 1;
        server.decisions.delete(fuzzCase.uid ?? '');
        const result = await send(fuzzCase);
        if (result.timedOut) {
          await server.restart();
          best = timeoutMs;
          bestRaw = timeoutMs;
          break;
        }
        await server.sync();
        const raw = server.decisions.get(fuzzCase.uid ?? '')?.ms ?? Number.POSITIVE_INFINITY;
        if (raw / load < best) {
          best = raw / load;
          bestRaw = raw;
          bestLoad = load;
        }
      }
      if (best === Number.POSITIVE_INFINITY) continue;
      best = Math.round(best * 1000) / 1000;
      record(
        fuzzCase,
        checkHandlerTime(best).map((failure) => ({
          ...failure,
          detail: `${failure.detail} (${bestRaw} ms measured, the machine ${bestLoad.toFixed(2)}× slower than the run's quietest)`,
        })),
      );
      if (!slowest || (best > slowest.ms && !slowest.timedOut)) {
        slowest = {
          index: fuzzCase.index,
          path: fuzzCase.path,
          description: fuzzCase.description,
          ms: best,
          timedOut: best >= timeoutMs,
        };
      }
    }

    const byUid = new Map(batch.map((fuzzCase) => [fuzzCase.uid ?? '', fuzzCase]));
    for (const line of server.logs.splice(0)) {
      const found = checkLogLine(line.bytes, line.msg, line.level);
      if (found.length === 0) continue;
      const owner = byUid.get(line.uid ?? '') ?? batch[0];
      if (!owner) continue;
      record(
        owner,
        line.uid
          ? found
          : found.map((f) => ({ ...f, detail: `${f.detail} (no uid; logged during this batch)` })),
      );
    }

    // A restart started the count again; the hung cases are reported as timeouts anyway.
    if (server.restarts === restartsBefore && server.serverErrors > serverErrorsBefore) {
      record(batch[0] as FuzzCase, [
        {
          class: 'counted-as-500',
          detail: `${server.serverErrors - serverErrorsBefore} more during the batch of cases ${batch[0]?.index}-${batch.at(-1)?.index}`,
        },
      ]);
    }
    if (server.strayOutput !== '') {
      record(batch[0] as FuzzCase, [
        {
          class: 'stray-output',
          detail: `during the batch of cases ${batch[0]?.index}-${batch.at(-1)?.index}: ${JSON.stringify(server.strayOutput.slice(0, 400))}`,
        },
      ]);
      server.strayOutput = '';
    }

    if (!(await confirmed(() => server.health()))) {
      record(batch[batch.length - 1] as FuzzCase, [
        { class: 'server-down', detail: 'GET /healthz failed after this batch' },
      ]);
      await server.restart();
    }
    progress(
      `${casesRun}/${indexes.length} cases, ${failures.length} failures, ${server.restarts} restarts, ${((Date.now() - started) / 1000).toFixed(0)} s`,
    );
  }

  const rssAfterBytes = await settledRss(server);
  const serverMemoryAfterBytes = server.heapUsed + server.external;
  await server.stop();
  const runFailures: Failure[] = [
    ...checkGrowth(
      'memory-growth',
      serverMemoryBeforeBytes,
      serverMemoryAfterBytes,
      "the server thread's heap and external memory",
    ),
    ...checkGrowth('rss-growth', rssQuarterBytes, rssAfterBytes, 'RSS after a quarter of the run'),
  ];
  if (server.strayOutput !== '') {
    runFailures.push({
      class: 'stray-output',
      detail: `after the last batch: ${JSON.stringify(server.strayOutput.slice(0, 400))}`,
    });
  }
  for (const failure of runFailures)
    failures.push({ ...failure, seed: options.seed, index: -1, path: '(run)', description: 'the whole run' });
  const countsByClass: RunReport['countsByClass'] = {};
  for (const failure of failures) countsByClass[failure.class] = (countsByClass[failure.class] ?? 0) + 1;
  return {
    seed: options.seed,
    casesRun,
    casesByPath,
    failures,
    countsByClass,
    slowest,
    rssBeforeBytes,
    rssQuarterBytes,
    rssAfterBytes,
    serverMemoryBeforeBytes,
    serverMemoryAfterBytes,
    wallMs: Date.now() - started,
    restarts: server.restarts,
    stoppedAtDeadline,
  };
}

/** Resident memory after a full GC in both threads (or a short settle where GC is not at hand). */
async function settledRss(server: FuzzServer): Promise<number> {
  for (let i = 0; i < 2; i++) {
    await server.gc();
    collectGarbage?.();
    await sleep(collectGarbage ? 100 : 1000);
  }
  return process.memoryUsage().rss;
}

const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

/** The run in plain text: counts per path, failures by class with replayable examples, slowest review, memory, time. */
export function formatReport(report: RunReport, examplesPerClass = 3): string {
  const lines: string[] = [];
  lines.push(
    `fuzz: seed ${report.seed}, ${report.casesRun} cases in ${(report.wallMs / 1000).toFixed(1)} s, ${report.restarts} server restarts${report.stoppedAtDeadline ? ' (stopped at the deadline)' : ''}`,
  );
  lines.push('cases per path:');
  for (const [path, count] of Object.entries(report.casesByPath).sort())
    lines.push(`  ${String(count).padStart(6)}  ${path}`);
  const classes = Object.entries(report.countsByClass).sort((a, b) => (b[1] ?? 0) - (a[1] ?? 0));
  if (classes.length === 0) lines.push('failures: none');
  else lines.push(`failures: ${report.failures.length} in ${classes.length} classes`);
  for (const [name, count] of classes) {
    const examples = report.failures.filter((f) => f.class === name);
    const cases = new Set(examples.map((f) => f.index)).size;
    const paths = [...new Set(examples.map((f) => f.path))];
    lines.push(
      `  ${name}: ${count} (${cases} cases; paths: ${paths.slice(0, 6).join(', ')}${paths.length > 6 ? ', …' : ''})`,
    );
    for (const example of examples.slice(0, examplesPerClass)) {
      lines.push(`    --seed ${example.seed} --case ${example.index}  ${example.path}`);
      lines.push(`      case:   ${example.description.slice(0, 300)}`);
      lines.push(`      failed: ${example.detail.slice(0, 300)}`);
    }
  }
  const slowest = report.slowest;
  lines.push(
    slowest
      ? `slowest review: ${slowest.timedOut ? `no answer within ${slowest.ms}` : slowest.ms} ms, --case ${slowest.index} ${slowest.path}: ${slowest.description.slice(0, 200)}`
      : 'slowest review: none measured',
  );
  lines.push(
    `RSS: ${mib(report.rssBeforeBytes)} before, ${mib(report.rssQuarterBytes)} after a quarter of the run, ${mib(report.rssAfterBytes)} after${collectGarbage ? ' (after GC)' : ' (after settling; no GC available)'}; server thread's heap and external memory ${mib(report.serverMemoryBeforeBytes)} before, ${mib(report.serverMemoryAfterBytes)} after`,
  );
  return lines.join('\n');
}
