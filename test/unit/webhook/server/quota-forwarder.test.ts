/**
 * Quota admissions handed to the leader, over real TLS between two admission apps: the leader
 * decides and reserves, the follower answers with the leader's answer and reserves nothing; on
 * every kind of failure the follower decides and reserves itself. The leader answers a forward
 * only with a replica's client certificate, and nobody but the API server and replicas at all.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { createServer as createTlsServer, type Server as TlsServer, type TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import type { Decision } from '../../../../webhook/admission/types.js';
import { admissionMetrics } from '../../../../webhook/metrics/admission-metrics.js';
import { createAdmissionApp } from '../../../../webhook/server/app.js';
import { AdmissionHttpsServer } from '../../../../webhook/server/https-server.js';
import { CallerVerifier, REPLICA_COMMON_NAME } from '../../../../webhook/server/caller-verification.js';
import { issueCertificate } from '../../../../operator/certificates/x509.js';
import { WEBHOOK_CLIENT_NAME } from '../../../../scripts/cluster/pki.js';
import {
  FORWARDED_HEADER,
  QuotaForwarder,
  type ForwardResult,
} from '../../../../webhook/server/quota-forwarder.js';
import type { WebhookEntry } from '../../../../webhook/table.js';
import { ReservationJournal } from '../../../../webhook/server/reservation-journal.js';
import { HANDOVER_HEADER, QuotaAuthority } from '../../../../webhook/server/quota-authority.js';
import {
  localServingCertificate,
  testValidatePodEntry,
  type LocalCertificate,
} from '../../../harness/allowing-server.js';
import { admissionRequest, reviewBody } from '../../../harness/requests.js';
import { stateSnapshot } from '../../../harness/state.js';

type Reservation = NonNullable<Decision['reserve']>;

/** Forwards to `address`, when there is one. */
function targetAt(address: string | undefined): { address: string } | undefined {
  return address ? { address } : undefined;
}

/** /validate-pod allowing every pod with a reservation, and a warning naming who decided. */
function reservingEntry(who: string): WebhookEntry {
  return testValidatePodEntry('reserve.test.io', (request) => ({
    allowed: true,
    warnings: [`decided by ${who}`],
    reserve: { key: `default/${request.uid}`, quota: 'q', requests: new Map([['cpu', 500_000_000n]]) },
  }));
}

interface Replica {
  port: number;
  reserved: Reservation[];
  forwards: ForwardResult[];
  close: () => Promise<void>;
}

/** How a replica verifies its callers: the API server by its client certificate, replicas by ours. */
interface Trust {
  /** The CA of `webhook-tls`: it serves, and issues replicas' client certificates. */
  own: LocalCertificate;
  /** Another CA, which issued the API server's client certificate. */
  apiServer: LocalCertificate;
}

async function startReplica(
  who: string,
  trust: Trust,
  forwarder?: (results: ForwardResult[]) => QuotaForwarder,
  serving: LocalCertificate = trust.own,
  authority?: QuotaAuthority,
): Promise<Replica> {
  const reserved: Reservation[] = [];
  const forwards: ForwardResult[] = [];
  const metrics = admissionMetrics();
  const quotaForwarder = forwarder?.(forwards);
  const ownCa = new X509Certificate(trust.own.ca);
  const app = createAdmissionApp({
    journal: new ReservationJournal(),
    webhooks: () => [reservingEntry(who)],
    state: () => stateSnapshot(),
    readiness: () => Promise.resolve({ ready: true, checks: {} }),
    metrics,
    logger: pino({ level: 'silent' }),
    reserve: (reservation) => reserved.push(reservation),
    ...(quotaForwarder ? { forward: quotaForwarder.forward.bind(quotaForwarder) } : {}),
    ...(authority ? { authority } : {}),
    callers: new CallerVerifier({
      policy: { subjectNames: [WEBHOOK_CLIENT_NAME], tokenUsers: [] },
      replicaCas: () => [ownCa],
    }),
  });
  const server = new AdmissionHttpsServer(app, pino({ level: 'silent' }), metrics);
  const port = await server.listen(0, '127.0.0.1', {
    certificatePem: serving.certificatePem,
    privateKeyPem: serving.privateKeyPem,
    clientCaPem: trust.apiServer.ca + trust.own.ca,
  });
  return {
    port,
    reserved,
    forwards,
    close: async () => {
      quotaForwarder?.close();
      await server.close(100);
    },
  };
}

function podReview(uid: string, dryRun = false): string {
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: uid, namespace: 'default' }, spec: {} };
  const request = admissionRequest({
    kind: 'Pod',
    resource: 'pods',
    namespace: 'default',
    object: pod,
    dryRun,
  });
  return reviewBody({ ...request, uid });
}

interface Answer {
  response: { uid: string; allowed: boolean; warnings?: string[] };
}

interface Call {
  headers?: Record<string, string>;
  dryRun?: boolean;
  /** The client certificate presented (the API server's when omitted; null: none). */
  client?: { cert: string; key: string } | null;
}

async function call(
  replica: Replica,
  trust: Trust,
  uid: string,
  { headers = {}, dryRun = false, client = trust.apiServer.apiServer }: Call = {},
): Promise<{ status: number; text: string }> {
  const { request } = await import('node:https');
  const body = podReview(uid, dryRun);
  return new Promise((resolvePromise, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: replica.port,
        path: '/validate-pod',
        method: 'POST',
        ca: trust.own.ca,
        ...(client ?? {}),
        servername: 'localhost',
        headers: { 'Content-Type': 'application/json', ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          resolvePromise({ status: res.statusCode ?? 0, text });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The answer of a call that must be a review. */
async function review(replica: Replica, trust: Trust, uid: string, options: Call = {}): Promise<Answer> {
  const { status, text } = await call(replica, trust, uid, options);
  assert.equal(status, 200, text);
  return JSON.parse(text) as Answer;
}

describe('quota forwarding to the leader', () => {
  let trust: Trust;
  let cert: LocalCertificate;
  /** This replica's client certificate, from the CA of `webhook-tls`. */
  let replicaClient: { certificatePem: string; privateKeyPem: string };
  let leader: Replica;
  /** A TLS server that accepts and never answers: a leader that hangs. */
  let hanging: TlsServer;
  let hangingPort = 0;
  const hangingSockets: TLSSocket[] = [];
  const opened: Replica[] = [];

  before(async () => {
    cert = await localServingCertificate();
    trust = { own: cert, apiServer: await localServingCertificate('apiserver-client-ca') };
    const issued = await issueCertificate(
      { commonName: REPLICA_COMMON_NAME, usage: 'client', lifetimeMs: 3600_000 },
      cert.authority,
    );
    replicaClient = { certificatePem: issued.certificatePem, privateKeyPem: issued.privateKeyPem };
    leader = await startReplica('the leader', trust);
    hanging = createTlsServer({ cert: cert.certificatePem, key: cert.privateKeyPem }, (socket) => {
      hangingSockets.push(socket);
    });
    await new Promise<void>((resolvePromise) => hanging.listen(0, '127.0.0.1', resolvePromise));
    hangingPort = (hanging.address() as AddressInfo).port;
  });
  after(async () => {
    await Promise.all([leader.close(), ...opened.map((replica) => replica.close())]);
    for (const socket of hangingSockets) socket.destroy();
    await new Promise((resolvePromise) => hanging.close(resolvePromise));
  });

  const follower = async (
    address: () => string | undefined,
    extra: { timeoutMs?: number; maxInFlight?: number } = {},
  ): Promise<Replica> => {
    const replica = await startReplica('the follower', trust, (results) => {
      return new QuotaForwarder({
        target: () => targetAt(address()),
        tls: () => ({ ca: cert.ca, verifyName: 'localhost', ...replicaClient }),
        onResult: (result) => results.push(result),
        ...extra,
      });
    });
    opened.push(replica);
    return replica;
  };

  it("answers with the leader's decision; the leader reserves, and the follower holds the same reservation", async () => {
    const replica = await follower(() => `127.0.0.1:${leader.port}`);
    const before = leader.reserved.length;
    const answer = await review(replica, trust, 'pod-1');
    assert.deepEqual(answer.response, { uid: 'pod-1', allowed: true, warnings: ['decided by the leader'] });
    assert.deepEqual(
      leader.reserved.slice(before).map((reservation) => reservation.key),
      ['default/pod-1'],
    );
    // Held in case it must decide alone later (the leader lost): it still counts what it handed over.
    assert.deepEqual(
      replica.reserved.map((reservation) => reservation.key),
      ['default/pod-1'],
    );
    assert.deepEqual(replica.forwards, ['answered']);
  });

  it('verifies the leader against the CA: an untrusted leader is not asked, the follower decides', async () => {
    const stranger = await localServingCertificate('another-ca');
    const other = await startReplica('an impostor', trust, undefined, stranger);
    opened.push(other);
    const replica = await follower(() => `127.0.0.1:${other.port}`);
    const answer = await review(replica, trust, 'pod-2');
    assert.deepEqual(answer.response.warnings, ['decided by the follower']);
    assert.deepEqual(other.reserved, []);
    assert.deepEqual(
      replica.reserved.map((reservation) => reservation.key),
      ['default/pod-2'],
    );
    assert.deepEqual(replica.forwards, ['failed']);
  });

  it('decides itself when the leader does not answer within the time-out', async () => {
    const replica = await follower(() => `127.0.0.1:${hangingPort}`, { timeoutMs: 200 });
    const answer = await review(replica, trust, 'pod-3');
    assert.deepEqual(answer.response.warnings, ['decided by the follower']);
    assert.equal(replica.reserved.length, 1);
    assert.deepEqual(replica.forwards, ['failed']);
  });

  it('decides itself when the leader answers something other than a review of this request', async () => {
    const { createServer } = await import('node:https');
    const confused = createServer({ cert: cert.certificatePem, key: cert.privateKeyPem }, (_req, res) => {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ response: { uid: 'another-request', allowed: false } }));
    });
    await new Promise<void>((resolvePromise) => confused.listen(0, '127.0.0.1', resolvePromise));
    const port = (confused.address() as AddressInfo).port;
    try {
      const replica = await follower(() => `127.0.0.1:${port}`);
      const answer = await review(replica, trust, 'pod-9');
      assert.deepEqual(answer.response, {
        uid: 'pod-9',
        allowed: true,
        warnings: ['decided by the follower'],
      });
      assert.equal(replica.reserved.length, 1);
      assert.deepEqual(replica.forwards, ['failed']);
    } finally {
      confused.closeAllConnections();
      await new Promise((resolvePromise) => confused.close(resolvePromise));
    }
  });

  it('decides itself when the leader cannot be reached', async () => {
    const gone = await startReplica('a stopped leader', trust);
    await gone.close();
    const replica = await follower(() => `127.0.0.1:${gone.port}`);
    const answer = await review(replica, trust, 'pod-4');
    assert.deepEqual(answer.response.warnings, ['decided by the follower']);
    assert.equal(replica.reserved.length, 1);
    assert.deepEqual(replica.forwards, ['failed']);
  });

  it('decides itself, without counting a forward, when no leader is known (or it leads)', async () => {
    const replica = await follower(() => undefined);
    const answer = await review(replica, trust, 'pod-5');
    assert.deepEqual(answer.response.warnings, ['decided by the follower']);
    assert.equal(replica.reserved.length, 1);
    assert.deepEqual(replica.forwards, []);
  });

  it('reports each review it cannot hand to anyone (no leader known), and not one it is too busy to queue', () => {
    let noTarget = 0;
    const busy: string[] = [];
    const forwarder = (address: string | undefined, maxInFlight?: number): QuotaForwarder =>
      new QuotaForwarder({
        target: () => targetAt(address),
        tls: () => ({ ca: cert.ca, verifyName: 'localhost', ...replicaClient }),
        onNoTarget: () => (noTarget += 1),
        onResult: (result) => busy.push(result),
        ...(maxInFlight === undefined ? {} : { maxInFlight }),
      });
    const body = Buffer.from('{}');
    assert.equal(forwarder(undefined).forward('/validate-pod', body, 'uid-1'), undefined);
    assert.equal(noTarget, 1);
    // A leader is known, but no forward may wait: decided here, counted as busy, not as leaderless.
    assert.equal(forwarder(`127.0.0.1:${leader.port}`, 0).forward('/validate-pod', body, 'uid-2'), undefined);
    assert.equal(noTarget, 1);
    assert.deepEqual(busy, ['busy']);
  });

  it("never forwards a replica's forward again, nor a dry run", async () => {
    const replica = await follower(() => `127.0.0.1:${leader.port}`);
    const client = { cert: replicaClient.certificatePem, key: replicaClient.privateKeyPem };
    const forwarded = await review(replica, trust, 'pod-6', { headers: { [FORWARDED_HEADER]: '1' }, client });
    assert.deepEqual(forwarded.response.warnings, ['decided by the follower']);
    const dryRun = await review(replica, trust, 'pod-7', { dryRun: true });
    assert.deepEqual(dryRun.response.warnings, ['decided by the follower']);
    assert.deepEqual(
      replica.reserved.map((reservation) => reservation.key),
      ['default/pod-6'],
      'a dry run reserves nothing',
    );
    assert.deepEqual(replica.forwards, []);
  });

  it("refuses a forward without a replica's certificate: no decision, no reservation", async () => {
    const before = leader.reserved.length;
    // The API server's own certificate does not make a forward, and neither does none at all.
    for (const client of [trust.apiServer.apiServer, null]) {
      const { status, text } = await call(leader, trust, 'forged-forward', {
        headers: { [FORWARDED_HEADER]: '1' },
        client,
      });
      assert.equal(status, 403, text);
      assert.doesNotMatch(text, /decided by/);
    }
    assert.equal(leader.reserved.length, before);
  });

  it('answers nobody but the API server: no certificate, a stranger CA or another name get no decision', async () => {
    const stranger = await localServingCertificate('stranger-ca');
    const ownNamed = await issueCertificate(
      { commonName: WEBHOOK_CLIENT_NAME, usage: 'client', lifetimeMs: 3600_000 },
      cert.authority,
    );
    const before = leader.reserved.length;
    const cases: [string, { cert: string; key: string } | null, number][] = [
      ['no certificate', null, 401],
      ["the API server's name from another CA", stranger.apiServer, 401],
      [
        "the API server's name from our own CA",
        { cert: ownNamed.certificatePem, key: ownNamed.privateKeyPem },
        403,
      ],
      [
        "a replica's certificate without the forward header",
        { cert: replicaClient.certificatePem, key: replicaClient.privateKeyPem },
        200,
      ],
    ];
    for (const [what, client, expected] of cases) {
      const { status, text } = await call(leader, trust, `caller-${expected}`, { client });
      assert.equal(status, expected, `${what}: ${text}`);
      if (expected !== 200) assert.doesNotMatch(text, /decided by|allowed/, what);
    }
    assert.equal(leader.reserved.length, before + 1, "only the replica's call reserved");
  });

  it('hands a burst of 300 concurrent admissions to the leader in batches, every one answered by it', async () => {
    const batches: number[] = [];
    const replica = await startReplica('the follower', trust, (results) => {
      return new QuotaForwarder({
        target: () => ({ address: `127.0.0.1:${leader.port}` }),
        tls: () => ({ ca: cert.ca, verifyName: 'localhost', ...replicaClient }),
        onResult: (result) => results.push(result),
        onBatch: (reviews) => batches.push(reviews),
        // What is checked is the batching, not the deadline (tested above with 200 ms): the default 4 s
        // was passed when the suite ran in the idle scheduling class beside a cold machine's Go builds
        // (300 reviews took 86 s there), and a forward past it is decided by the follower.
        timeoutMs: 120_000,
      });
    });
    opened.push(replica);
    const before = leader.reserved.length;
    const uids = Array.from({ length: 300 }, (_, i) => `burst-${i}`);
    const answers = await Promise.all(uids.map((uid) => review(replica, trust, uid)));
    for (const [i, answer] of answers.entries()) {
      assert.deepEqual(answer.response, { uid: uids[i], allowed: true, warnings: ['decided by the leader'] });
    }
    assert.deepEqual(
      leader.reserved
        .slice(before)
        .map((reservation) => reservation.key)
        .sort(),
      uids.map((uid) => `default/${uid}`).sort(),
    );
    assert.equal(replica.forwards.filter((result) => result === 'answered').length, 300);
    assert.equal(
      batches.reduce((sum, size) => sum + size, 0),
      300,
    );
    assert.ok(batches.length < 300, `300 reviews in ${batches.length} batches: some were sent together`);
    assert.ok(Math.max(...batches) <= 256);
  });

  it('answers a batch of forwarded reviews to a replica only: the API server and strangers get 403', async () => {
    const { encodeBatch, FORWARD_BATCH_PATH } = await import('../../../../webhook/server/forward-batch.js');
    const { request } = await import('node:https');
    const body = encodeBatch([{ path: '/validate-pod', body: Buffer.from(podReview('batch-forged')) }]);
    const before = leader.reserved.length;
    const send = (client: { cert: string; key: string } | null, headers: Record<string, string>) =>
      new Promise<{ status: number; text: string }>((resolvePromise, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port: leader.port,
            path: FORWARD_BATCH_PATH,
            method: 'POST',
            ca: trust.own.ca,
            ...(client ?? {}),
            servername: 'localhost',
            headers: { 'Content-Type': 'application/octet-stream', ...headers },
          },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (text += chunk));
            res.on('end', () => {
              resolvePromise({ status: res.statusCode ?? 0, text });
            });
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    for (const [client, headers, expected] of [
      [trust.apiServer.apiServer, {}, 403],
      [trust.apiServer.apiServer, { [FORWARDED_HEADER]: '1' }, 403],
      [null, { [FORWARDED_HEADER]: '1' }, 403],
      // A handover from anyone but a replica is no handover.
      [trust.apiServer.apiServer, { [FORWARDED_HEADER]: '1', [HANDOVER_HEADER]: '127.0.0.1:1' }, 403],
    ] as const) {
      const { status, text } = await send(client, headers);
      assert.equal(status, expected, text);
      assert.doesNotMatch(text, /decided by|allowed/);
    }
    assert.equal(leader.reserved.length, before);
    const replicaCall = await send(
      { cert: replicaClient.certificatePem, key: replicaClient.privateKeyPem },
      { [FORWARDED_HEADER]: '1' },
    );
    assert.equal(replicaCall.status, 200, replicaCall.text);
    assert.equal(
      (JSON.parse(replicaCall.text) as { answers: Answer[] }).answers[0]?.response.uid,
      'batch-forged',
    );
    assert.equal(leader.reserved.length, before + 1);
    const malformed = await send(
      { cert: replicaClient.certificatePem, key: replicaClient.privateKeyPem },
      { [FORWARDED_HEADER]: '1', [HANDOVER_HEADER]: 'not an address' },
    );
    assert.equal(malformed.status, 400);
    assert.match(malformed.text, /x-admission-handover must be the new leader's host:port/);
    assert.equal(leader.reserved.length, before + 1);
  });

  it("holds the leader's own admissions too, from the journal each batch answer carries", async () => {
    const held: string[] = [];
    const replica = await startReplica('the follower', trust, (results) => {
      return new QuotaForwarder({
        target: () => ({ address: `127.0.0.1:${leader.port}` }),
        tls: () => ({ ca: cert.ca, verifyName: 'localhost', ...replicaClient }),
        onResult: (result) => results.push(result),
        onReservations: (reservations) => held.push(...reservations.map((entry) => entry.key)),
      });
    });
    opened.push(replica);
    await review(replica, trust, 'journal-1');
    // Admitted by the leader directly (the API server called it), then one more through the follower.
    await review(leader, trust, 'journal-direct');
    await review(replica, trust, 'journal-2');
    assert.ok(held.includes('default/journal-direct'), `held: ${held.join(', ')}`);
    assert.equal(held.filter((key) => key === 'default/journal-direct').length, 1, 'handed out once');
    assert.deepEqual(
      replica.reserved.map((reservation) => reservation.key),
      ['default/journal-1', 'default/journal-2'],
    );
  });

  it('waits, where it would decide alone, for the lease read in doubt, then hands the review to the holder it names', async () => {
    let holder: string | undefined;
    let waits = 0;
    const alone: number[] = [];
    const replica = await startReplica('the resumed holder', trust, (results) => {
      return new QuotaForwarder({
        target: () => targetAt(holder),
        tls: () => ({ ca: cert.ca, verifyName: 'localhost', ...replicaClient }),
        onResult: (result) => results.push(result),
        onNoTarget: () => alone.push(1),
        // The fresh read names the leader that took over while this replica was stopped.
        beforeDecidingAlone: () => {
          waits += 1;
          return new Promise((resolvePromise) =>
            setTimeout(() => {
              holder = `127.0.0.1:${leader.port}`;
              resolvePromise();
            }, 20),
          );
        },
      });
    });
    opened.push(replica);
    assert.deepEqual((await review(replica, trust, 'resumed-1')).response.warnings, [
      'decided by the leader',
    ]);
    assert.equal(waits, 1);
    assert.deepEqual(replica.forwards, ['answered']);
    assert.equal(alone.length, 0, 'nothing decided alone');
    // A read that names nobody else: decided here after the one wait, counted as decided alone.
    holder = undefined;
    const lone = await startReplica('the lone holder', trust, (results) => {
      return new QuotaForwarder({
        target: () => undefined,
        tls: () => ({ ca: cert.ca, verifyName: 'localhost', ...replicaClient }),
        onResult: (result) => results.push(result),
        onNoTarget: () => alone.push(1),
        beforeDecidingAlone: () => Promise.resolve(),
      });
    });
    opened.push(lone);
    assert.deepEqual((await review(lone, trust, 'lone-1')).response.warnings, ['decided by the lone holder']);
    assert.equal(alone.length, 1);
    assert.deepEqual(lone.forwards, []);
  });

  it('decides itself when too many forwards are in flight', async () => {
    const replica = await follower(() => `127.0.0.1:${leader.port}`, { maxInFlight: 0 });
    const answer = await review(replica, trust, 'pod-8');
    assert.deepEqual(answer.response.warnings, ['decided by the follower']);
    assert.deepEqual(replica.forwards, ['busy']);
  });
  it('hands the ledger over: the new leader asks the old holder, holds its admissions, then decides; the old holder forwards', async () => {
    /** What each replica's elector would say: the old holder's renewals stalled, the other took the lease. */
    const oldView = { address: '', leads: false };
    const newView = { address: '', leads: false, tookOver: false };
    const oldAuthority = new QuotaAuthority({
      leads: () => oldView.leads,
      leaderAddress: () => undefined,
      takenOverFrom: () => undefined,
      get advertise() {
        return oldView.address;
      },
    });
    const newAuthority = new QuotaAuthority({
      leads: () => newView.leads,
      leaderAddress: () => (newView.leads ? undefined : oldView.address),
      takenOverFrom: () =>
        newView.leads && newView.tookOver ? { address: oldView.address, term: 1 } : undefined,
      get advertise() {
        return newView.address;
      },
    });
    const handovers: boolean[] = [];
    const held: string[] = [];
    const tls = () => ({ ca: cert.ca, verifyName: 'localhost', ...replicaClient });
    const old = await startReplica(
      'the old leader',
      trust,
      (results) =>
        new QuotaForwarder({ target: () => oldAuthority.target(), tls, onResult: (r) => results.push(r) }),
      trust.own,
      oldAuthority,
    );
    opened.push(old);
    oldView.address = `127.0.0.1:${old.port}`;
    const fresh = await startReplica(
      'the new leader',
      trust,
      (results) =>
        new QuotaForwarder({
          target: () => newAuthority.target(),
          tls,
          onResult: (r) => results.push(r),
          onReservations: (reservations) => held.push(...reservations.map((entry) => entry.key)),
          onHandoverEnded: (answered) => {
            handovers.push(answered);
            newAuthority.handoverEnded();
          },
        }),
      trust.own,
      newAuthority,
    );
    opened.push(fresh);
    newView.address = `127.0.0.1:${fresh.port}`;
    // As a follower, it hands its admissions over and opens its copy of the journal.
    assert.deepEqual((await review(fresh, trust, 'before-1')).response.warnings, [
      'decided by the old leader',
    ]);
    // The old holder admits one directly, then the follower takes the lease over.
    assert.deepEqual((await review(old, trust, 'direct-1')).response.warnings, ['decided by the old leader']);
    newView.leads = true;
    newView.tookOver = true;
    assert.deepEqual((await review(fresh, trust, 'handover-1')).response.warnings, [
      'decided by the old leader',
    ]);
    assert.deepEqual(handovers, [true]);
    assert.ok(held.includes('default/direct-1'), `held: ${held.join(', ')}`);
    // From now on the new leader decides, and the old holder hands its admissions to it.
    assert.deepEqual((await review(fresh, trust, 'after-1')).response.warnings, [
      'decided by the new leader',
    ]);
    assert.deepEqual((await review(old, trust, 'after-2')).response.warnings, ['decided by the new leader']);
    assert.deepEqual(
      fresh.reserved.map((reservation) => reservation.key),
      ['default/before-1', 'default/handover-1', 'default/after-1', 'default/after-2'],
    );
    // A third replica whose read of the lease still names the old holder: the old holder decides
    // nothing of its batch and names its successor, where the batch goes once more.
    const staleAuthority = new QuotaAuthority({
      leads: () => false,
      leaderAddress: () => oldView.address,
      takenOverFrom: () => undefined,
      advertise: '127.0.0.1:1',
    });
    const stale = await startReplica('a third replica', trust, (results) => {
      return new QuotaForwarder({
        target: () => staleAuthority.target(),
        tls,
        onResult: (result) => results.push(result),
        onSuccessor: (from, to) => staleAuthority.redirected(from, to),
      });
    });
    opened.push(stale);
    assert.deepEqual((await review(stale, trust, 'stale-1')).response.warnings, [
      'decided by the new leader',
    ]);
    assert.deepEqual((await review(stale, trust, 'stale-2')).response.warnings, [
      'decided by the new leader',
    ]);
    assert.deepEqual(stale.forwards, ['answered', 'answered']);
    assert.deepEqual(staleAuthority.target(), { address: newView.address });
    assert.deepEqual(fresh.reserved.map((reservation) => reservation.key).slice(-2), [
      'default/stale-1',
      'default/stale-2',
    ]);
    // Without a way to follow the successor, it is sent once more to the same place, then decided here.
    const unfollowing = await follower(() => oldView.address);
    assert.deepEqual((await review(unfollowing, trust, 'stale-3')).response.warnings, [
      'decided by the follower',
    ]);
    assert.deepEqual(unfollowing.forwards, ['failed']);
  });

  it('decides alone when the old holder does not answer the handover, and asks only once', async () => {
    const handovers: boolean[] = [];
    const sources = {
      leads: () => true,
      leaderAddress: () => undefined,
      takenOverFrom: () => ({ address: `127.0.0.1:${hangingPort}`, term: 1 }),
      advertise: '127.0.0.1:1',
    };
    const authority = new QuotaAuthority(sources);
    const replica = await startReplica('the new leader', trust, (results) => {
      return new QuotaForwarder({
        target: () => authority.target(),
        tls: () => ({ ca: cert.ca, verifyName: 'localhost', ...replicaClient }),
        onResult: (result) => results.push(result),
        onHandoverEnded: (answered) => {
          handovers.push(answered);
          authority.handoverEnded();
        },
        timeoutMs: 300,
      });
    });
    opened.push(replica);
    assert.deepEqual((await review(replica, trust, 'lost-1')).response.warnings, [
      'decided by the new leader',
    ]);
    assert.deepEqual((await review(replica, trust, 'lost-2')).response.warnings, [
      'decided by the new leader',
    ]);
    assert.deepEqual(handovers, [false]);
    assert.deepEqual(replica.forwards, ['failed']);
  });
});
