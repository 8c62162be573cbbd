/**
 * What every answer of the admission server must satisfy, whatever it was sent. Each check
 * returns failures of a named class, so a run groups them and the lead sees what to fix.
 */
import fastJsonPatch from 'fast-json-patch';
import { MAX_MESSAGE_CHARS } from '../../webhook/util/bounded-text.js';
import type { WebhookEntry } from '../../webhook/table.js';
import type { FuzzCase } from './generate.js';

/** Time one review may cost the server (from its own decision log line). */
export const HANDLER_MS_LIMIT = 100;
/** An answer that carries a decision (no patch) or an error fits in this. */
export const RESPONSE_BYTES_LIMIT = 64 * 1024;
/** One log line: names and messages in it are bounded, so the line is. */
export const LOG_LINE_BYTES_LIMIT = 16 * 1024;
/** The server thread's heap plus its memory outside the heap may grow this much over a run (after a GC). */
export const MEMORY_GROWTH_LIMIT = 100 * 1024 * 1024;
/**
 * The process's resident memory, from a quarter of the run to its end, may grow this much: a
 * ceiling for a leak outside V8's sight. It is looser because RSS also holds the client thread's
 * buffers and the pages the allocator keeps after bodies of many MiB in two threads (seen: 252 ->
 * 360 MiB with the server's heap at 19 MiB before and after, when other test files ran beside it).
 */
export const RSS_GROWTH_LIMIT = 256 * 1024 * 1024;

export const FAILURE_CLASSES = {
  'server-down': 'the health check failed between batches (the server had to be restarted)',
  timeout: 'no answer within the client timeout: the server was blocked by this review (restarted)',
  'no-response': 'the connection failed or closed without an answer',
  'http-5xx': 'an HTTP 5xx answer: the server failed instead of deciding',
  'http-500-no-message': 'an HTTP 500 without a Status body carrying a message',
  'unexpected-status':
    'an HTTP status other than the expected one (e.g. not 400 for a malformed envelope, not 413 when oversized)',
  'bad-error-body': 'a 4xx answer that is not a Status with a non-empty message',
  'invalid-review': 'a 200 answer that is not a valid AdmissionReview v1 echoing the request uid',
  'rule-exception':
    'a rule threw: the answer carries "internal error in webhook …" (a JavaScript exception text)',
  'message-too-long': `a message or warning longer than ${MAX_MESSAGE_CHARS} characters`,
  'response-too-large': `an answer without a patch larger than ${RESPONSE_BYTES_LIMIT} bytes`,
  'patch-invalid': 'a patch that is not base64 JSON Patch applying cleanly to the request object',
  'patch-identity': 'a patch that changes kind, apiVersion, metadata.name or metadata.namespace',
  'validating-patched': 'a validating webhook answered with a patch',
  'ignore-refused': 'a failurePolicy=Ignore mutating webhook answered allowed: false',
  'slow-review': `a review whose handler time exceeded ${HANDLER_MS_LIMIT} ms (confirmed when replayed alone, scaled by how much slower the machine was than at its quietest in the run)`,
  'log-line-too-large': `a log line longer than ${LOG_LINE_BYTES_LIMIT} bytes`,
  'error-logged':
    'a warning or error log line other than a rule exception (a hostile body or a caller hanging up is not a server failure)',
  'counted-as-500':
    'admission_bad_requests_total{status="500"} grew during the batch (the server counted a failure of its own)',
  'stray-output': 'the server thread wrote to stdout or stderr, outside the structured log',
  'memory-growth': `the server thread's heap and external memory grew more than ${MEMORY_GROWTH_LIMIT / 1024 / 1024} MiB over the run`,
  'rss-growth': `the process's resident memory grew more than ${RSS_GROWTH_LIMIT / 1024 / 1024} MiB from a quarter of the run to its end`,
} as const;

export type FailureClass = keyof typeof FAILURE_CLASSES;

export interface Failure {
  class: FailureClass;
  detail: string;
}

/** What the client saw. */
export interface HttpResult {
  /** undefined when no response arrived. */
  status: number | undefined;
  /** The body (cut at the client's cap). */
  body: Buffer;
  bodyBytes: number;
  /** A transport error, if the exchange failed. */
  error: string | undefined;
  timedOut: boolean;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const excerpt = (text: string, max = 160): string =>
  text.length <= max ? text : `${text.slice(0, max)}…(${text.length} chars)`;

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** The object as the server read it: the body decoded as UTF-8 (bad bytes become U+FFFD), last duplicate key winning. */
function requestObject(fuzzCase: FuzzCase): unknown {
  const review = parseJson(fuzzCase.body);
  return isObject(review) && isObject(review.request) ? review.request.object : undefined;
}

/**
 * The patched document, or undefined when the checker itself cannot follow the nesting
 * (fast-json-patch's validation recurses): that is the checker's limit, not the server's fault.
 */
function applyOperations(original: unknown, operations: fastJsonPatch.Operation[]): unknown {
  for (const validate of [true, false]) {
    try {
      return fastJsonPatch.applyPatch(structuredClone(original), operations, validate, true).newDocument;
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
    }
  }
  return undefined;
}

function checkPatch(fuzzCase: FuzzCase, patch: unknown, failures: Failure[]): void {
  const fail = (detail: string): void => {
    failures.push({ class: 'patch-invalid', detail });
  };
  if (typeof patch !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(patch)) {
    fail('the patch is not a base64 string');
    return;
  }
  let operations: unknown;
  try {
    operations = JSON.parse(Buffer.from(patch, 'base64').toString('utf8'));
  } catch (error) {
    fail(`the patch is not JSON: ${(error as Error).message}`);
    return;
  }
  if (!Array.isArray(operations)) {
    fail('the patch is not a JSON list of operations');
    return;
  }
  const original = requestObject(fuzzCase);
  if (!isObject(original)) {
    fail('a patch for a request without an object');
    return;
  }
  let patched: unknown;
  try {
    patched = applyOperations(original, operations as fastJsonPatch.Operation[]);
  } catch (error) {
    fail(`the patch does not apply: ${excerpt((error as Error).message)}`);
    return;
  }
  if (patched === undefined) return;
  const identity = (object: unknown): unknown[] => {
    const metadata = isObject(object) && isObject(object.metadata) ? object.metadata : {};
    return [
      isObject(object) ? object.kind : undefined,
      isObject(object) ? object.apiVersion : undefined,
      metadata.name,
      metadata.namespace,
    ];
  };
  const before = JSON.stringify(identity(original));
  const after = JSON.stringify(identity(patched));
  if (before !== after) {
    failures.push({
      class: 'patch-identity',
      detail: `[kind, apiVersion, name, namespace] ${excerpt(before)} became ${excerpt(after)}`,
    });
  }
}

function checkMessages(texts: string[], failures: Failure[]): void {
  for (const text of texts) {
    if (text.includes('internal error in webhook')) {
      failures.push({ class: 'rule-exception', detail: excerpt(text, 240) });
    }
    if (text.length > MAX_MESSAGE_CHARS) {
      failures.push({ class: 'message-too-long', detail: `${text.length} characters: ${excerpt(text, 80)}` });
    }
  }
}

function checkReview(
  fuzzCase: FuzzCase,
  result: HttpResult,
  entry: WebhookEntry | undefined,
  failures: Failure[],
): void {
  const invalid = (detail: string): void => {
    failures.push({ class: 'invalid-review', detail });
  };
  const review = parseJson(result.body);
  if (!isObject(review)) {
    invalid(`the body is not a JSON object: ${excerpt(result.body.toString('utf8'))}`);
    return;
  }
  if (review.apiVersion !== 'admission.k8s.io/v1' || review.kind !== 'AdmissionReview') {
    invalid(`apiVersion/kind ${JSON.stringify(review.apiVersion)}/${JSON.stringify(review.kind)}`);
  }
  const response = review.response;
  if (!isObject(response)) {
    invalid('no response object');
    return;
  }
  if (fuzzCase.uid !== undefined && response.uid !== fuzzCase.uid) {
    invalid(
      `response.uid ${excerpt(JSON.stringify(response.uid) ?? 'undefined')} is not the request's ${fuzzCase.uid}`,
    );
  }
  if (typeof response.allowed !== 'boolean') invalid('response.allowed is not a boolean');
  const texts: string[] = [];
  if (response.allowed === false) {
    const status = response.status;
    if (
      !isObject(status) ||
      typeof status.code !== 'number' ||
      typeof status.message !== 'string' ||
      status.message === ''
    ) {
      invalid('a refusal without status.code and a non-empty status.message');
    } else {
      texts.push(status.message);
    }
    if (response.patch !== undefined) invalid('a refusal with a patch');
  }
  if (response.warnings !== undefined) {
    if (
      !Array.isArray(response.warnings) ||
      !response.warnings.every((w): w is string => typeof w === 'string')
    ) {
      invalid('warnings is not a list of strings');
    } else {
      texts.push(...response.warnings);
    }
  }
  checkMessages(texts, failures);
  const hasPatch = response.patch !== undefined;
  if (hasPatch !== (response.patchType !== undefined) || (hasPatch && response.patchType !== 'JSONPatch')) {
    invalid(`patch and patchType ${JSON.stringify(response.patchType)} do not go together`);
  }
  if (!hasPatch && result.bodyBytes > RESPONSE_BYTES_LIMIT) {
    failures.push({ class: 'response-too-large', detail: `${result.bodyBytes} bytes` });
  }
  // A patch spells out a full path per change: 2,000 containers each gaining a few resources make a
  // patch about ten times the review, which is still linear in what was sent.
  if (hasPatch && result.bodyBytes > RESPONSE_BYTES_LIMIT + 16 * fuzzCase.body.length) {
    failures.push({
      class: 'response-too-large',
      detail: `a ${result.bodyBytes}-byte patch answer to a ${fuzzCase.body.length}-byte review`,
    });
  }
  if (!entry) return;
  if (entry.type === 'validating' && hasPatch) {
    failures.push({ class: 'validating-patched', detail: `${entry.name} sent a patch` });
  }
  if (entry.type === 'mutating' && entry.failurePolicy === 'Ignore' && response.allowed === false) {
    const status = isObject(response.status) ? response.status : {};
    failures.push({
      class: 'ignore-refused',
      detail: `${entry.name}: ${excerpt(typeof status.message === 'string' ? status.message : '(no message)', 240)}`,
    });
  }
  if (hasPatch) checkPatch(fuzzCase, response.patch, failures);
}

/** Checks one exchange. `entry` is the webhook served at the case's path, if any. */
export function checkResponse(
  fuzzCase: FuzzCase,
  result: HttpResult,
  entry: WebhookEntry | undefined,
): Failure[] {
  const failures: Failure[] = [];
  const expect = fuzzCase.expect;
  if (result.status === undefined) {
    if (expect.kind === 'none') return failures;
    if (result.timedOut) failures.push({ class: 'timeout', detail: 'no answer within the client timeout' });
    else
      failures.push({
        class: 'no-response',
        detail: result.error ?? 'the connection closed without an answer',
      });
    return failures;
  }
  const status = result.status;
  const text = result.body.toString('utf8');
  if (status >= 500) {
    const body = parseJson(result.body);
    const message = isObject(body) && typeof body.message === 'string' ? body.message : '';
    if (status === 500 && message === '') {
      failures.push({ class: 'http-500-no-message', detail: `body ${excerpt(text)}` });
    } else {
      failures.push({ class: 'http-5xx', detail: `${status}: ${excerpt(message || text, 240)}` });
    }
    return failures;
  }
  const expected =
    expect.kind === 'status'
      ? status === expect.status
      : expect.kind === 'decision'
        ? status === 200
        : expect.kind === 'review'
          ? status === 200 || (status >= 400 && status < 500)
          : true;
  if (!expected) {
    const wanted =
      expect.kind === 'status' ? String(expect.status) : expect.kind === 'decision' ? '200' : '200 or 4xx';
    failures.push({ class: 'unexpected-status', detail: `${status} (expected ${wanted}): ${excerpt(text)}` });
  }
  if (status === 200 && fuzzCase.method === 'POST' && fuzzCase.expect.kind !== 'status') {
    checkReview(fuzzCase, result, entry, failures);
    return failures;
  }
  if (status >= 400) {
    const body = parseJson(result.body);
    const message = isObject(body) && typeof body.message === 'string' ? body.message : '';
    if (message === '') failures.push({ class: 'bad-error-body', detail: `${status}: ${excerpt(text)}` });
    else checkMessages([message], failures);
    if (result.bodyBytes > RESPONSE_BYTES_LIMIT) {
      failures.push({ class: 'response-too-large', detail: `a ${result.bodyBytes}-byte ${status} answer` });
    }
  }
  return failures;
}

export function checkHandlerTime(ms: number): Failure[] {
  return ms > HANDLER_MS_LIMIT ? [{ class: 'slow-review', detail: `${ms} ms` }] : [];
}

/** A rule's exception is reported from the answer that carries it (rule-exception). */
const RULE_EXCEPTION_LINE = 'rule threw an exception';

export function checkLogLine(bytes: number, message: string, level: number): Failure[] {
  const failures: Failure[] = [];
  if (bytes > LOG_LINE_BYTES_LIMIT)
    failures.push({ class: 'log-line-too-large', detail: `a ${bytes}-byte "${message}" line` });
  if (level >= 40 && message !== RULE_EXCEPTION_LINE)
    failures.push({ class: 'error-logged', detail: `a level-${level} "${excerpt(message)}" line` });
  return failures;
}

/** Memory measured after a GC may not grow more than the limit of its class from `before` to `after`. */
export function checkGrowth(
  growthClass: 'memory-growth' | 'rss-growth',
  before: number,
  after: number,
  what: string,
): Failure[] {
  const limit = growthClass === 'memory-growth' ? MEMORY_GROWTH_LIMIT : RSS_GROWTH_LIMIT;
  const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
  return after - before > limit
    ? [{ class: growthClass, detail: `${what}: ${mib(before)} before, ${mib(after)} after` }]
    : [];
}
