/**
 * Sends a review that would reserve quota to the leader, so that one ledger decides every
 * reservation and concurrent pods on different replicas cannot together pass a quota's max.
 * Each replica's own ledger only knows its own admissions until the pod watch brings the others'.
 *
 * Availability first: the forward is bounded (time, answer size, forwards in flight), and on
 * any failure the caller decides locally, exactly as it would without a leader. A forwarded
 * review carries FORWARDED_HEADER and is never forwarded again; it is sent with this replica's
 * client certificate, without which the leader refuses it (caller-verification.ts).
 */
import { Agent, request } from 'node:https';
import { isIP } from 'node:net';
import { checkServerIdentity, type PeerCertificate } from 'node:tls';
import { splitHostPort } from '../util/host-port.js';

/** Marks a review forwarded by another replica: the receiver decides it itself. */
export const FORWARDED_HEADER = 'x-admission-forwarded';

/** Well under the webhooks' timeout: a slow leader leaves time to decide locally. */
const FORWARD_TIMEOUT_MS = 1000;
/** Beyond this many forwards at once, reviews are decided locally rather than queued. */
const MAX_FORWARDS_IN_FLIGHT = 256;
/** An AdmissionReview answer to a pod review is a few hundred bytes; more is not an answer. */
const MAX_ANSWER_BYTES = 1024 * 1024;

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
  /** The leader's host:port, or undefined when this replica leads or no leader is known. */
  leaderAddress: () => string | undefined;
  /** How to verify the leader and prove this replica; undefined until it has both. */
  tls: () => LeaderTls | undefined;
  onResult?: (result: ForwardResult, error?: Error) => void;
  timeoutMs?: number;
  maxInFlight?: number;
}

export class QuotaForwarder {
  private agent: { address: string; tls: LeaderTls; agent: Agent } | undefined;
  private inFlight = 0;

  constructor(private readonly options: QuotaForwarderOptions) {}

  /**
   * The leader's answer (the response body, verbatim) to `body`, a review of `uid` sent to
   * `path`; undefined when there is nobody to forward to (decide locally, synchronously), or a
   * promise of undefined when the forward failed (decide locally, again: the state moved).
   */
  forward(path: string, body: Buffer, uid: string): Promise<Buffer | undefined> | undefined {
    const address = this.options.leaderAddress();
    const tls = this.options.tls();
    const target = address ? splitHostPort(address) : undefined;
    if (!target || !tls) return undefined;
    if (this.inFlight >= (this.options.maxInFlight ?? MAX_FORWARDS_IN_FLIGHT)) {
      this.options.onResult?.('busy');
      return undefined;
    }
    this.inFlight += 1;
    return this.send(target, tls, path, body, uid)
      .then((answer) => {
        this.options.onResult?.('answered');
        return answer;
      })
      .catch((error: unknown) => {
        this.options.onResult?.('failed', error instanceof Error ? error : new Error(String(error)));
        return undefined;
      })
      .finally(() => {
        this.inFlight -= 1;
      });
  }

  /** Closes the kept-alive connections to the leader. */
  close(): void {
    this.agent?.agent.destroy();
    this.agent = undefined;
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
    const agent = new Agent({ keepAlive: true, maxSockets: 64 });
    this.agent = { address, tls, agent };
    return agent;
  }

  private send(
    target: { host: string; port: number },
    tls: LeaderTls,
    path: string,
    body: Buffer,
    uid: string,
  ): Promise<Buffer> {
    const agent = this.agentFor(`${target.host}:${target.port}`, tls);
    const timeoutMs = this.options.timeoutMs ?? FORWARD_TIMEOUT_MS;
    return new Promise<Buffer>((resolvePromise, reject) => {
      const req = request(
        {
          host: target.host,
          port: target.port,
          path,
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
            'Content-Type': 'application/json',
            'Content-Length': body.length,
            [FORWARDED_HEADER]: '1',
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
            const answer = Buffer.concat(chunks);
            const problem =
              res.statusCode === 200 ? answerProblem(answer, uid) : `the leader answered ${res.statusCode}`;
            if (problem) reject(new Error(problem));
            else resolvePromise(answer);
          });
          res.on('error', reject);
        },
      );
      const timer = setTimeout(() => {
        req.destroy(new Error(`the leader did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      req.on('close', () => {
        clearTimeout(timer);
      });
      req.on('error', reject);
      req.end(body);
    });
  }
}

/** Why `answer` is not an AdmissionReview answering `uid`; undefined when it is one. */
function answerProblem(answer: Buffer, uid: string): string | undefined {
  let review: unknown;
  try {
    review = JSON.parse(answer.toString('utf8'));
  } catch {
    return 'the leader answered something that is not JSON';
  }
  const response = (review as { response?: { uid?: unknown; allowed?: unknown } } | null)?.response;
  if (response?.uid !== uid || typeof response.allowed !== 'boolean') {
    return 'the leader answered something that is not an AdmissionReview for this request';
  }
  return undefined;
}
