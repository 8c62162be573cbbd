/**
 * Who a bearer token belongs to, asked of the API server with a TokenReview (as kube-rbac-proxy
 * and every delegated authenticator do), with answers kept so that the API server's own token,
 * presented on every review, costs one TokenReview a minute, not one per pod.
 *
 * Anyone who can reach the admission port can send tokens, so what they cost is bounded: tokens
 * that authenticate as an allowed user are kept apart from the rest (a flood of invented tokens
 * cannot push the API server's out), an accepted token is served from memory while it is
 * re-reviewed in the background, and at most MAX_REVIEWS_IN_FLIGHT reviews run at once (more are
 * answered 'unavailable' at once rather than queued).
 */
import { createHash } from 'node:crypto';
import { AuthenticationV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { TokenVerdict } from '../../webhook/server/caller-verification.js';
import type { Clock } from './clock.js';
import { abortAfter } from './request-timeout.js';

/** An accepted token is re-reviewed after this long (in the background)... */
const FRESH_MS = 60_000;
/** ...and forgotten when it has not been confirmed for this long. */
const STALE_MS = 10 * 60_000;
/** A refused token is refused again from memory for this long. */
const REFUSED_MS = 10_000;
const MAX_ACCEPTED = 64;
const MAX_REFUSED = 1024;
const MAX_REVIEWS_IN_FLIGHT = 16;
const REVIEW_TIMEOUT_MS = 5000;

interface Kept {
  verdict: TokenVerdict;
  checkedAt: number;
}

/** Whether a verdict belongs among the accepted tokens (its user is one the policy allows). */
export type Allowed = (username: string) => boolean;

export type ReviewToken = (token: string) => Promise<TokenVerdict>;

/** A TokenReview through the API server, aborted (its connection closed) at its deadline. */
export function tokenReviewer(kubeConfig: KubeConfig): ReviewToken {
  const api = kubeConfig.makeApiClient(AuthenticationV1Api);
  return async (token) => {
    let review;
    try {
      review = await api.createTokenReview(
        { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } } },
        abortAfter(REVIEW_TIMEOUT_MS),
      );
    } catch (error) {
      if ((error as { name?: unknown }).name === 'TimeoutError')
        throw new Error(`the TokenReview took longer than ${REVIEW_TIMEOUT_MS} ms`, { cause: error });
      throw error;
    }
    const username = review.status?.user?.username;
    return review.status?.authenticated === true && username
      ? { authenticated: true, username }
      : { authenticated: false };
  };
}

export class TokenReviews {
  private readonly accepted = new Map<string, Kept>();
  private readonly refused = new Map<string, Kept>();
  private readonly inFlight = new Map<string, Promise<TokenVerdict | 'unavailable'>>();

  constructor(
    private readonly review: ReviewToken,
    private readonly allowed: Allowed,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Who `token` is: from memory when known, else from a TokenReview. */
  verdict(token: string): Promise<TokenVerdict | 'unavailable'> {
    const key = createHash('sha256').update(token).digest('hex');
    const now = this.clock.monotonic();
    const kept = this.accepted.get(key);
    if (kept && now - kept.checkedAt < STALE_MS) {
      if (now - kept.checkedAt >= FRESH_MS) void this.reviewOnce(key, token);
      return Promise.resolve(kept.verdict);
    }
    const refused = this.refused.get(key);
    if (refused && now - refused.checkedAt < REFUSED_MS) return Promise.resolve(refused.verdict);
    return this.reviewOnce(key, token);
  }

  /** One review per token at a time; callers of the same token share it. */
  private reviewOnce(key: string, token: string): Promise<TokenVerdict | 'unavailable'> {
    const running = this.inFlight.get(key);
    if (running) return running;
    if (this.inFlight.size >= MAX_REVIEWS_IN_FLIGHT) return Promise.resolve('unavailable');
    const review = this.review(token)
      .then((verdict) => {
        this.keep(key, verdict);
        return verdict;
      })
      .catch((error: unknown) => {
        this.logger.warn({ err: error }, 'a TokenReview failed; the caller is not verified');
        // A token already accepted stays so until it is stale: the API server being briefly
        // away must not refuse its own reviews.
        const kept = this.accepted.get(key);
        return kept && this.clock.monotonic() - kept.checkedAt < STALE_MS
          ? kept.verdict
          : ('unavailable' as const);
      })
      .finally(() => {
        this.inFlight.delete(key);
      });
    this.inFlight.set(key, review);
    return review;
  }

  private keep(key: string, verdict: TokenVerdict): void {
    const now = this.clock.monotonic();
    if (verdict.authenticated && this.allowed(verdict.username)) {
      this.accepted.delete(key);
      this.accepted.set(key, { verdict, checkedAt: now });
      this.refused.delete(key);
      evictOldest(this.accepted, MAX_ACCEPTED);
      return;
    }
    this.accepted.delete(key);
    this.refused.delete(key);
    this.refused.set(key, { verdict, checkedAt: now });
    evictOldest(this.refused, MAX_REFUSED);
  }
}

/** Maps iterate in insertion order: the first keys are the oldest. */
function evictOldest(map: Map<string, unknown>, max: number): void {
  for (const key of map.keys()) {
    if (map.size <= max) return;
    map.delete(key);
  }
}
