/**
 * Who a caller is, by bearer token: the certificate cases run over real TLS in
 * quota-forwarder.test.ts; here the token cases, which need no TLS (a socket with no certificate).
 */
import assert from 'node:assert/strict';
import type { TLSSocket } from 'node:tls';
import { describe, it } from 'node:test';
import {
  CallerVerifier,
  refusalStatus,
  type TokenVerdict,
} from '../../../../webhook/server/caller-verification.js';

const noCertificate = { getPeerX509Certificate: () => undefined, authorized: false } as unknown as TLSSocket;

function verifier(verdict: TokenVerdict | 'unavailable', tokenUsers = ['apiserver']): CallerVerifier {
  return new CallerVerifier({
    policy: { subjectNames: [], tokenUsers },
    replicaCas: () => [],
    reviewToken: () => Promise.resolve(verdict),
  });
}

describe('CallerVerifier with bearer tokens', () => {
  it('verifies a token a TokenReview authenticates as an allowed user', async () => {
    const caller = await verifier({ authenticated: true, username: 'apiserver' }).identify(
      noCertificate,
      'Bearer abc',
      false,
    );
    assert.deepEqual(caller, { verified: true, as: 'api-server', via: 'token' });
  });

  it('refuses other users, unauthenticated tokens, no token and a review it cannot make', async () => {
    const cases: [CallerVerifier, string | undefined, string, number][] = [
      [verifier({ authenticated: true, username: 'team-a' }), 'Bearer abc', 'token-user-not-allowed', 403],
      [verifier({ authenticated: false }), 'Bearer abc', 'token-not-authenticated', 401],
      [verifier({ authenticated: true, username: 'apiserver' }), undefined, 'no-credentials', 401],
      [verifier({ authenticated: true, username: 'apiserver' }), 'Basic YTpi', 'no-credentials', 401],
      [verifier('unavailable'), 'Bearer abc', 'token-review-unavailable', 503],
    ];
    for (const [callers, authorization, reason, status] of cases) {
      const caller = await callers.identify(noCertificate, authorization, false);
      assert.deepEqual(caller, { verified: false, reason }, String(authorization));
      if (!caller.verified) assert.equal(refusalStatus(caller.reason), status);
    }
  });

  it('takes no token as a forward: only a replica certificate makes one', async () => {
    const caller = await verifier({ authenticated: true, username: 'apiserver' }).identify(
      noCertificate,
      'Bearer abc',
      true,
    );
    assert.deepEqual(caller, { verified: false, reason: 'forward-without-replica-certificate' });
  });

  it('is required only when certificates or tokens are configured', () => {
    assert.equal(verifier({ authenticated: false }, []).required, false);
    assert.equal(verifier({ authenticated: false }).required, true);
  });

  it('takes every caller as the API server when the network vouches for them, but no forward without a replica certificate', async () => {
    const callers = new CallerVerifier({
      policy: { subjectNames: [], tokenUsers: [], trustNetwork: true },
      replicaCas: () => [],
    });
    assert.equal(callers.required, false);
    for (const authorization of [undefined, 'Bearer abc']) {
      assert.deepEqual(await callers.identify(noCertificate, authorization, false), {
        verified: true,
        as: 'api-server',
        via: 'network',
      });
    }
    assert.deepEqual(await callers.identify(noCertificate, undefined, true), {
      verified: false,
      reason: 'forward-without-replica-certificate',
    });
  });
});
