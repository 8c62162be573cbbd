/**
 * Sends the reviews that would reserve quota to the leader, so that one ledger decides every
 * reservation and concurrent pods on different replicas cannot together pass a quota's max.
 * Each replica's own ledger only knows its own admissions until the pod watch brings the others'.
 *
 * A burst is the case that matters (an AI job creates hundreds to thousands of pods at once), so
 * the forwards are pipelined in batches: reviews waiting while a batch is in flight leave together
 * in the next one, and the leader decides a whole batch in one pass of its event loop
 * (forward-batch.ts). One request per review made the leader's answers queue behind each other
 * past the forward's time bound, and every forward past it was decided here, from a ledger that
 * does not hold the leader's admissions: 508 of 800 admitted into room for 400.
 *
 * Availability first: the forward is bounded (time from the moment a review is queued, reviews
 * queued, batches in flight, answer size), and on any failure the caller decides locally, exactly
 * as it would without a leader. A forwarded batch carries FORWARDED_HEADER and is never
 * forwarded again; it is sent with this replica's client certificate, without which the leader
 * refuses it (caller-verification.ts).
 */
import { Agent, request } from 'node:https';
import { isIP } from 'node:net';
import { checkServerIdentity, type PeerCertificate } from 'node:tls';
import { splitHostPort } from '../util/host-port.js';
import {
  encodeBatch,
  FORWARD_BATCH_PATH,
  JOURNAL_HEADER,
  MAX_BATCH_BYTES,
  MAX_BATCH_REVIEWS,
} from './forward-batch.js';
import { readPage, type Reservation } from './reservation-journal.js';
import { HANDOVER_HEADER, type ForwardTarget } from './quota-authority.js';

/** Marks a review forwarded by another replica: the receiver decides it itself. */
export const FORWARDED_HEADER = 'x-admission-forwarded';

/**
 * From the moment a review is queued to the leader's answer: well under the webhooks' 10 s
 * timeout, so a leader that is gone or stuck still leaves the time to decide locally.
 */
const FORWARD_TIMEOUT_MS = 4000;
/** Beyond this many reviews waiting for the leader, reviews are decided locally rather than queued. */
const MAX_QUEUED_REVIEWS = 8192;
/** Batches sent at once: enough to keep the leader busy while one answer travels back. */
const MAX_BATCHES_IN_FLIGHT = 4;
/** An answer is a few hundred bytes a review (a patch or a refusal's message at most a few KiB). */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

/** How a forward ended: the leader's answer was used, or it was decided locally, and why. */
export type ForwardResult = 'answered' | 'failed' | 'busy';

export interface LeaderTls {
  /** PEM bundle the leader's serving certificate must chain to (the published caBundle). */
  ca: string;
  /** The name the serving certificate is issued for (the Service's DNS name, or the URL host). */
  verifyName: string;
  /** This replica's client certificate (caller-verification.ts): the leader answers no forward without it. */
  certificatePem: string;
  privateKeyPem: string;
}

export interface QuotaForwarderOptions {
  /** Where quota admissions go (quota-authority.ts), or undefined when this replica decides them. */
  target: () => ForwardTarget | undefined;
  /**
   * Once per batch that asked for a handover: whether the old holder answered it (its journal
   * page is then held, through onReservations, before this is called).
   */
  onHandoverEnded?: (answered: boolean) => void;
  /**
   * The replica at `from` decided none of a batch and named `to` as the holder it handed the
   * ledger to: the batch's reviews go to target() once more, which should now name `to`.
   */
  onSuccessor?: (from: string, to: string) => void;
  /** How to verify the leader and prove this replica; undefined until it has both. */
  tls: () => LeaderTls | undefined;
  /** Once per review: how its forward ended. */
  onResult?: (result: ForwardResult, error?: Error) => void;
  /** Once per batch sent: how many reviews it carried. */
  onBatch?: (reviews: number) => void;
  /** Once per review not forwarded because no leader is known (or no TLS to reach it): decided locally. */
  onNoTarget?: () => void;
  /**
   * When there is nobody to forward to, a wait before deciding locally (quota-authority.ts,
   * beforeDecidingAlone): after it, the target is asked again, once.
   */
  beforeDecidingAlone?: () => Promise<void> | undefined;
  /**
   * The leader's reservations this replica has not seen yet, with each batch answer: to hold on
   * the leader's behalf, so that deciding alone later it still counts them (reservation-journal.ts).
   */
  onReservations?: (reservations: readonly Reservation[]) => void;
  timeoutMs?: number;
  /** Reviews that may wait for the leader at once (MAX_QUEUED_REVIEWS). */
  maxInFlight?: number;
  maxBatchesInFlight?: number;
}

interface Target {
  host: string;
  port: number;
  tls: LeaderTls;
  handoverTo?: string;
}

interface Waiting {
  path: string;
  body: Buffer;
  uid: string;
  deadline: number;
  /** Sent once more, to the successor a former holder named: never a second time. */
  redirected?: boolean;
  settle: (answer: Buffer | undefined, error?: Error) => void;
}

export class QuotaForwarder {
  private agent: { address: string; tls: LeaderTls; agent: Agent } | undefined;
  private readonly queue: Waiting[] = [];
  /** Reviews queued or in a batch in flight. */
  private waiting = 0;
  private batchesInFlight = 0;
  private flushScheduled = false;
  /** Where this replica's copy of the leader's journal stands. */
  private journal: { id: string; next: number } | undefined;

  constructor(private readonly options: QuotaForwarderOptions) {}

  /**
   * The leader's answer (the review's response, as JSON) to `body`, a review of `uid` sent to
   * `path`; undefined when there is nobody to forward to (decide locally, synchronously), or a
   * promise of undefined when the forward failed (decide locally, again: the state moved).
   */
  forward(path: string, body: Buffer, uid: string): Promise<Buffer | undefined> | undefined {
    if (!this.target()) {
      const doubt = this.options.beforeDecidingAlone?.();
      if (doubt) return doubt.then(() => this.enqueue(path, body, uid));
      this.options.onNoTarget?.();
      return undefined;
    }
    return this.enqueue(path, body, uid);
  }

  /** Queues the review for the next batch to the target; undefined: decide locally (nobody, or too busy). */
  private enqueue(path: string, body: Buffer, uid: string): Promise<Buffer | undefined> | undefined {
    if (!this.target()) {
      this.options.onNoTarget?.();
      return undefined;
    }
    if (this.waiting >= (this.options.maxInFlight ?? MAX_QUEUED_REVIEWS)) {
      this.options.onResult?.('busy');
      return undefined;
    }
    this.waiting += 1;
    return new Promise<Buffer | undefined>((resolvePromise) => {
      let settled = false;
      const deadline = performance.now() + (this.options.timeoutMs ?? FORWARD_TIMEOUT_MS);
      this.queue.push({
        path,
        body,
        uid,
        deadline,
        settle: (answer, error) => {
          if (settled) return;
          settled = true;
          this.waiting -= 1;
          if (answer) this.options.onResult?.('answered');
          else this.options.onResult?.('failed', error ?? new Error('the leader gave no answer'));
          resolvePromise(answer);
        },
      });
      this.scheduleFlush();
    });
  }

  /** Closes the kept-alive connections to the leader. */
  close(): void {
    this.agent?.agent.destroy();
    this.agent = undefined;
  }

  private target(): Target | undefined {
    const chosen = this.options.target();
    const tls = this.options.tls();
    const target = chosen ? splitHostPort(chosen.address) : undefined;
    if (!target || !tls) return undefined;
    return chosen?.handoverTo ? { ...target, tls, handoverTo: chosen.handoverTo } : { ...target, tls };
  }

  /** Reviews arriving in the same turn of the event loop leave in the same batch. */
  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    const maxBatches = this.options.maxBatchesInFlight ?? MAX_BATCHES_IN_FLIGHT;
    // A handover is one batch: what follows is decided here, once the old holder has handed over.
    const allowed = (): number => (this.target()?.handoverTo ? 1 : maxBatches);
    while (this.queue.length > 0 && this.batchesInFlight < allowed()) {
      const now = performance.now();
      const batch: Waiting[] = [];
      let bytes = 0;
      for (let next = this.queue[0]; next && batch.length < MAX_BATCH_REVIEWS; next = this.queue[0]) {
        if (next.deadline <= now) {
          this.queue.shift();
          next.settle(undefined, new Error('the review waited for a batch to the leader past the time-out'));
          continue;
        }
        const size = next.body.length + next.path.length + 32;
        if (batch.length > 0 && bytes + size > MAX_BATCH_BYTES) break;
        this.queue.shift();
        batch.push(next);
        bytes += size;
      }
      if (batch.length === 0) continue;
      const target = this.target();
      if (!target) {
        // The leader went away (or this replica took over) while the reviews waited.
        for (const waiting of batch) waiting.settle(undefined, new Error('no leader is known any more'));
        continue;
      }
      this.batchesInFlight += 1;
      this.options.onBatch?.(batch.length);
      const handover = target.handoverTo !== undefined;
      const address = `${target.host}:${target.port}`;
      this.send(target, batch)
        .then(({ answers, successor }) => {
          if (handover) this.options.onHandoverEnded?.(true);
          const redirect = successor !== undefined && successor !== address;
          if (redirect) this.options.onSuccessor?.(address, successor);
          const again: Waiting[] = [];
          for (const [i, waiting] of batch.entries()) {
            const answer = answers[i];
            if (!answer && redirect && !waiting.redirected) {
              waiting.redirected = true;
              again.push(waiting);
              continue;
            }
            waiting.settle(
              answer,
              answer ? undefined : new Error('the leader could not decide this review of the batch'),
            );
          }
          // Ahead of what queued since: they are the oldest, and their deadlines still hold.
          this.queue.unshift(...again);
        })
        .catch((error: unknown) => {
          if (handover) this.options.onHandoverEnded?.(false);
          const failure = error instanceof Error ? error : new Error(String(error));
          for (const waiting of batch) waiting.settle(undefined, failure);
        })
        .finally(() => {
          this.batchesInFlight -= 1;
          if (this.queue.length > 0) this.scheduleFlush();
        });
    }
  }

  /** One keep-alive agent per leader, trust and identity: a new leader or a rotated CA gets a fresh one. */
  private agentFor(address: string, tls: LeaderTls): Agent {
    const kept = this.agent;
    if (
      kept?.address === address &&
      kept.tls.verifyName === tls.verifyName &&
      kept.tls.ca === tls.ca &&
      kept.tls.certificatePem === tls.certificatePem
    ) {
      return kept.agent;
    }
    kept?.agent.destroy();
    const agent = new Agent({ keepAlive: true, maxSockets: MAX_BATCHES_IN_FLIGHT });
    this.agent = { address, tls, agent };
    return agent;
  }

  /**
   * The leader's answer to each review of `batch`, in order (undefined: not decided there), and
   * the successor it names when it handed the ledger over.
   */
  private send(
    target: Target,
    batch: readonly Waiting[],
  ): Promise<{ answers: (Buffer | undefined)[]; successor?: string }> {
    const { tls } = target;
    const agent = this.agentFor(`${target.host}:${target.port}`, tls);
    const body = encodeBatch(batch);
    // The batch is as late as its earliest review.
    const timeoutMs = Math.max(1, Math.min(...batch.map((waiting) => waiting.deadline)) - performance.now());
    return new Promise((resolvePromise, reject) => {
      const req = request(
        {
          host: target.host,
          port: target.port,
          path: FORWARD_BATCH_PATH,
          method: 'POST',
          agent,
          ca: tls.ca,
          cert: tls.certificatePem,
          key: tls.privateKeyPem,
          // SNI takes names only; the identity is checked against the certificate's name either way.
          ...(isIP(tls.verifyName) ? {} : { servername: tls.verifyName }),
          checkServerIdentity: (_host: string, certificate: PeerCertificate) =>
            checkServerIdentity(tls.verifyName, certificate),
          headers: {
            'Content-Type': 'application/octet-stream',
            'Content-Length': body.length,
            [FORWARDED_HEADER]: '1',
            ...(target.handoverTo ? { [HANDOVER_HEADER]: target.handoverTo } : {}),
            ...(this.journal ? { [JOURNAL_HEADER]: `${this.journal.id}:${this.journal.next}` } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_ANSWER_BYTES) {
              req.destroy(new Error(`the leader's answer exceeds ${MAX_ANSWER_BYTES} bytes`));
              return;
            }
            chunks.push(chunk);
          });
          res.on('end', () => {
            if (res.statusCode !== 200) {
              reject(new Error(`the leader answered ${res.statusCode}`));
              return;
            }
            try {
              const { answers, journal, successor } = answersOf(
                Buffer.concat(chunks),
                batch.map((waiting) => waiting.uid),
              );
              if (journal) {
                this.journal = { id: journal.id, next: journal.next };
                if (journal.reservations.length > 0) this.options.onReservations?.(journal.reservations);
              }
              resolvePromise(successor ? { answers, successor } : { answers });
            } catch (error) {
              reject(error instanceof Error ? error : new Error(String(error)));
            }
          });
          res.on('error', reject);
        },
      );
      const timer = setTimeout(() => {
        req.destroy(new Error(`the leader did not answer within ${Math.round(timeoutMs)} ms`));
      }, timeoutMs);
      req.on('close', () => {
        clearTimeout(timer);
      });
      req.on('error', reject);
      req.end(body);
    });
  }
}

/**
 * Each answer of a batch's answer, as the JSON of an AdmissionReview answering its uid (undefined
 * for a review the leader did not decide, or answered with something that is not its review),
 * and the page of the leader's journal it carries, if it carries a readable one.
 */
function answersOf(
  answer: Buffer,
  uids: readonly string[],
): { answers: (Buffer | undefined)[]; journal: ReturnType<typeof readPage>; successor?: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.toString('utf8'));
  } catch {
    throw new Error('the leader answered something that is not JSON');
  }
  const { answers, journal, successor } = (parsed ?? {}) as {
    answers?: unknown;
    journal?: unknown;
    successor?: unknown;
  };
  if (!Array.isArray(answers) || answers.length !== uids.length) {
    throw new Error(`the leader did not answer the ${uids.length} reviews of the batch`);
  }
  return {
    answers: answers.map((review: unknown, i) => {
      const response = (review as { response?: { uid?: unknown; allowed?: unknown } } | null)?.response;
      return response !== undefined && response.uid === uids[i] && typeof response.allowed === 'boolean'
        ? Buffer.from(JSON.stringify(review))
        : undefined;
    }),
    journal: readPage(journal),
    // Only a host:port is followed: anything else, the follower decides as before.
    ...(typeof successor === 'string' && successor.length <= 300 && splitHostPort(successor)
      ? { successor }
      : {}),
  };
}
