/**
 * Two replicas behind one address, called by the real API server under a stream of 20 pod creates
 * a second: a rolling restart refuses no pod, SIGTERM fails /readyz at once while reviews are still
 * answered during the drain, and a CA rotation refuses no pod with at most two CAs in the bundle.
 *
 * The replicas sit behind test/harness/balancer.ts: readiness probed every 1 s, each answer
 * taking effect 1 s later, so a replica that stops being ready still gets new connections for
 * up to 2 s. These tests wait on drains, probes and certificate lifetimes, not on the CPU they
 * get, so they run beside the other files; the kill -9 window and the quota bursts through two
 * replicas run alone (replicas.test.ts).
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { splitPemCertificates } from '../../operator/certificates/x509.js';
import { waitFor } from '../harness/cluster.js';
import { httpsCall, logsMatching, readSecret, secretValue } from '../harness/operator.js';
import { failuresOf, podStream, replicated, SHUTDOWN_DELAY, summary } from '../harness/replicas.js';

describe('two replicas behind one address, under a stream of creates', () => {
  it('refuses no pod while every replica is restarted one at a time under 20 creates/s', async (t) => {
    const { balancer, replicas, workload } = await replicated(t);
    const stream = podStream(workload, 20);
    await sleep(2000);
    for (let index = 0; index < replicas.members.length; index++) {
      const { exitCode } = await replicas.restart(index);
      assert.equal(exitCode, 0, `replica ${index} exits cleanly after its drain`);
      await sleep(1000);
    }
    await sleep(2000);
    const attempts = await stream.stop();
    t.diagnostic(`rolling restart of 2 replicas: ${summary(attempts)}`);
    t.diagnostic(`connections per replica port: ${JSON.stringify(balancer.stats().connections)}`);
    assert.deepEqual(failuresOf(attempts), []);
    assert.ok(attempts.length > 100, `only ${attempts.length} creates were tried`);
  });

  it('answers /readyz 503 at once on SIGTERM (measured, target 100 ms) while reviews are still answered during the delay', async (t) => {
    const { replicas, namespace, workload } = await replicated(t);
    const ca = secretValue(await readSecret(namespace), 'ca.crt');
    const stream = podStream(workload, 20);
    await sleep(1000);
    // The API server takes the idle connection it returned last (Go's pool is a stack), so at
    // 20 creates/s its reviews ride one connection: the replica signalled is the one that answered
    // the latest review. One merely holding connections can see none in the whole delay (CI did).
    const lastDecision = (member: (typeof replicas.members)[number]): number =>
      Math.max(0, ...logsMatching(member, /admission decision/).map((line) => Number(line.time)));
    const replica = await waitFor(
      'a replica to have answered a review in the last 200 ms',
      () => {
        const [latest, other] = [...replicas.members].sort((a, b) => lastDecision(b) - lastDecision(a));
        const at = latest ? lastDecision(latest) : 0;
        const fresh = latest && Date.now() - at < 200 && (!other || lastDecision(other) < at);
        return Promise.resolve(fresh ? latest : undefined);
      },
      { timeoutMs: 10_000, intervalMs: 20 },
    );
    assert.equal((await httpsCall(replica.port, '/readyz', { ca })).status, 200);
    const signalled = Date.now();
    replica.child.kill('SIGTERM');
    // Polled as fast as a request comes back; the first 503 bounds the time from above.
    const firstUnready = await waitFor(
      '/readyz to answer 503',
      async () =>
        (await httpsCall(replica.port, '/readyz', { ca })).status === 503 ? Date.now() : undefined,
      { timeoutMs: 5000, intervalMs: 5 },
    );
    const unreadyAfter = firstUnready - signalled;
    const exitCode = await replica.exited;
    const exitedAfter = Date.now() - signalled;
    await sleep(1000);
    const attempts = await stream.stop();
    // When the replica itself turned unready (its log line follows the switch in the same tick), apart
    // from how long the probe's TLS handshake took on a loaded machine.
    const drainLogged = logsMatching(replica, /shutting down: \/readyz fails/)[0];
    // Reviews the API server sent to the draining replica and got answered once it was unready: from
    // its own switch, since at 20 creates/s the one review on a connection can fall between the switch
    // and the probe's first 503 (CI saw 16 ms and 49 ms), and the connection closes after it.
    const unreadySince = drainLogged ? Math.min(Number(drainLogged.time), firstUnready) : firstUnready;
    const drained = logsMatching(replica, /admission decision/).filter(
      (line) => Number(line.time) > unreadySince,
    ).length;
    const switchedAfter = drainLogged ? `${Number(drainLogged.time) - signalled} ms` : 'not logged';
    t.diagnostic(
      `after SIGTERM: /readyz 503 within ${unreadyAfter} ms (the replica switched ${switchedAfter} after the ` +
        `signal); ${drained} reviews answered by the draining ` +
        `replica after that; exited ${exitedAfter} ms after the signal (delay ${SHUTDOWN_DELAY}); ` +
        `creates meanwhile: ${summary(attempts)}`,
    );
    // The figure (9-89 ms when measured) is reported above; the assertion only separates "at once"
    // from "after the drain": a shared machine's scheduling is not the operator's speed.
    assert.ok(unreadyAfter < 1000, `/readyz failed ${unreadyAfter} ms after SIGTERM`);
    assert.ok(drained > 0, 'the API server was answered by the draining replica after /readyz failed');
    assert.ok(exitedAfter >= 5000, 'it served for the whole delay');
    assert.deepEqual(
      logsMatching(replica, /shutdown grace over/),
      [],
      'no connection held the stop for the whole shutdown grace',
    );
    assert.equal(exitCode, 0);
    assert.deepEqual(failuresOf(attempts), []);
  });

  // Only the elected leader rotates: before leader election, the two replicas fought over the
  // caBundle during a rotation and about 35 creates failed.
  it('refuses no pod across a CA rotation with two replicas under load, with at most two CAs in the bundle', async (t) => {
    const { replicas, namespace, workload } = await replicated(t, {
      args: [
        '--cert-lifetime=6s',
        '--cert-renew-before=3s',
        '--ca-lifetime=24s',
        '--ca-renew-before=10s',
        '--bundle-propagation=1s',
      ],
    });
    const caSerials = new Set<string>();
    let mostCas = 0;
    let stop = false;
    const observer = (async (): Promise<void> => {
      while (!stop) {
        const bundle = splitPemCertificates(secretValue(await readSecret(namespace), 'ca.crt'));
        mostCas = Math.max(mostCas, bundle.length);
        for (const pem of bundle) caSerials.add(new X509Certificate(pem).serialNumber);
        await sleep(200);
      }
    })();
    const initialCas = await waitFor('the first CA', () => Promise.resolve(caSerials.size || undefined));
    const stream = podStream(workload, 20);
    await waitFor('a CA rotation', () => Promise.resolve(caSerials.size >= initialCas + 1), {
      timeoutMs: 60_000,
      intervalMs: 500,
    });
    // Past the rotation's serving-certificate switch (bundle propagation and a serving renewal).
    await sleep(8000);
    const attempts = await stream.stop();
    stop = true;
    await observer;
    t.diagnostic(
      `CA rotation with 2 replicas: ${summary(attempts)}; ${caSerials.size} CAs seen, at most ${mostCas} in the bundle`,
    );
    assert.deepEqual(failuresOf(attempts), []);
    assert.ok(mostCas <= 2, `${mostCas} CAs in the bundle`);
    assert.ok(attempts.length > 100);
    for (const replica of replicas.members) assert.equal(replica.child.exitCode, null);
  });
});
