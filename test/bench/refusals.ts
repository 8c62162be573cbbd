/**
 * `refusals`: how fast a body declared past the limit is refused, against a valid review on the
 * same kind of connection, measured in the same run. Each exchange opens a TLS connection (a
 * refusal closes it), sends the headers (and, for the review, its body) and times until the
 * whole answer is in; the refused connection's close is timed too (the bounded drain).
 */
import { performance } from 'node:perf_hooks';
import { DRAIN_MAX_MS } from '../../webhook/server/answer-before-body.js';
import { MAX_BODY_BYTES } from '../../webhook/server/read-body.js';
import { closed, openTls, postHead, readResponse, written } from '../harness/raw-tls.js';
import { benchCertificates } from './references.js';
import { inform, percentile, record } from './report.js';
import { podReviewBody, startOurApp } from './server.js';
import { emptyState } from './state.js';

const ROUNDS = 30;
const TIB = 1024 ** 4;

interface Exchange {
  /** From the first byte sent to the whole answer received. */
  answerMs: number;
  /** From the answer to the server's close, when it closes. */
  closeMs: number | undefined;
  status: number;
}

async function exchange(port: number, ca: string, head: string, body: string): Promise<Exchange> {
  const socket = await openTls(port, ca);
  const answer = readResponse(socket);
  const started = performance.now();
  await written(socket, head + body);
  const { status, headers } = await answer;
  const answered = performance.now();
  let closeMs: number | undefined;
  if (headers.connection === 'close') {
    await closed(socket);
    closeMs = performance.now() - answered;
  }
  socket.destroy();
  return { answerMs: answered - started, closeMs, status };
}

const median = (values: number[]): number =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );

export async function benchRefusals(): Promise<void> {
  const certs = await benchCertificates();
  const server = await startOurApp(certs, emptyState());
  try {
    const review = podReviewBody('bench-refusal', 'bench');
    const reviewHead = postHead('/validate-pod', { 'Content-Length': Buffer.byteLength(review) });
    const cases = [
      [
        '1 TiB declared, 37 bytes sent',
        postHead('/validate-pod', { 'Content-Length': TIB }),
        review.slice(0, 37),
      ],
      [
        '7 MiB + 10 declared, nothing sent',
        postHead('/validate-pod', { 'Content-Length': MAX_BODY_BYTES + 10 }),
        '',
      ],
    ] as const;
    const reviews: number[] = [];
    const refusals = new Map<string, Exchange[]>(cases.map(([label]) => [label, []]));
    // Interleaved, so a change in the machine's load touches both alike.
    for (let round = 0; round < ROUNDS; round++) {
      const valid = await exchange(server.port, certs.ca, reviewHead, review);
      if (valid.status !== 200) throw new Error(`the valid review got ${valid.status}`);
      reviews.push(valid.answerMs);
      for (const [label, head, body] of cases) {
        const refused = await exchange(server.port, certs.ca, head, body);
        if (refused.status !== 413) throw new Error(`${label}: got ${refused.status}, not 413`);
        refusals.get(label)?.push(refused);
      }
    }
    const reference = median(reviews);
    inform('valid /validate-pod review on a new TLS connection (median)', reference, 'ms');
    for (const [label, exchanges] of refusals) {
      const answerMs = median(exchanges.map((e) => e.answerMs));
      inform(`413 for ${label} (median)`, answerMs, 'ms');
      // Both are one round trip on a fresh connection: a refusal should not take longer.
      record(`413 for ${label}, as a ratio of the valid review`, answerMs / reference, '×', 1.5);
      inform(
        `  connection closed after the 413 (median; drain bound ${DRAIN_MAX_MS} ms)`,
        median(exchanges.map((e) => e.closeMs ?? Number.NaN)),
        'ms',
      );
    }
  } finally {
    await server.close();
  }
}
