import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  BUNDLE_UPDATED_ANNOTATION,
  planSecret,
  planSecretWithKeys,
  type CertificatePolicy,
  type KeysNeeded,
  type PlanInputs,
  type SecretPlan,
  type StoredSecret,
} from '../../../../operator/certificates/tls-plan.js';
import {
  createCertificateAuthority,
  generateRsaKeyPair,
  issueCertificate,
  splitPemCertificates,
  type KeyPair,
} from '../../../../operator/certificates/x509.js';

const SECOND = 1000;
const policy: CertificatePolicy = {
  caLifetimeMs: 100 * SECOND,
  caRenewBeforeMs: 40 * SECOND,
  servingLifetimeMs: 20 * SECOND,
  servingRenewBeforeMs: 8 * SECOND,
  bundlePropagationMs: 2 * SECOND,
  maxCheckIntervalMs: 60 * SECOND,
  dnsNames: ['admission-operator.admission-system.svc', 'localhost'],
  ipAddresses: ['127.0.0.1'],
};
const T0 = new Date('2026-01-01T00:00:00Z');
const at = (seconds: number): Date => new Date(T0.getTime() + seconds * SECOND);
/** The plan does not depend on the key size; small keys keep these many issues quick. */
const smallKey = (): Promise<KeyPair> => generateRsaKeyPair(1024);

function plan(
  stored: StoredSecret | undefined,
  now: Date,
  extra: Partial<PlanInputs> = {},
): Promise<SecretPlan> {
  return planSecretWithKeys({ stored, policy, now, isPublished: () => true, ...extra }, smallKey);
}

type Write = Extract<SecretPlan, { kind: 'write' }>;
function asWrite(result: SecretPlan | KeysNeeded): Write {
  assert.equal(result.kind, 'write', `expected a write, got ${result.kind}`);
  return result;
}

/** What the API server would hold after the write. */
function stored(write: Write): StoredSecret {
  return {
    type: 'kubernetes.io/tls',
    managed: true,
    data: { ...write.data },
    annotations: write.annotations,
  };
}

const cas = (s: StoredSecret): X509Certificate[] =>
  splitPemCertificates(s.data['ca.crt'] ?? '').map((pem) => new X509Certificate(pem));
const serving = (s: StoredSecret): X509Certificate => new X509Certificate(s.data['tls.crt'] ?? '');

const first = stored(asWrite(await plan(undefined, at(0))));

describe('planSecret', () => {
  it('creates a CA and a serving certificate when the Secret does not exist', async () => {
    const write = asWrite(await plan(undefined, at(0)));
    assert.equal(write.mode, 'create');
    assert.deepEqual(write.issued, ['ca', 'serving']);
    const [ca] = cas(stored(write));
    const leaf = serving(stored(write));
    assert.ok(ca && leaf.checkIssued(ca) && leaf.verify(ca.publicKey));
    assert.equal(
      leaf.checkHost('admission-operator.admission-system.svc'),
      'admission-operator.admission-system.svc',
    );
    assert.equal(leaf.checkIP('127.0.0.1'), '127.0.0.1');
    assert.equal(write.material.caBundlePem, write.data['ca.crt']);
  });

  it('leaves a valid Secret unchanged and checks again before the serving renewal point', async () => {
    const result = await plan(first, at(1));
    assert.equal(result.kind, 'unchanged');
    assert.equal(result.nextCheckAt.getTime(), at(12).getTime());
  });

  it('renews the serving certificate from the same CA, leaving the bundle alone', async () => {
    const write = asWrite(await plan(first, at(12)));
    assert.deepEqual(write.issued, ['serving']);
    assert.equal(write.data['ca.crt'], first.data['ca.crt']);
    assert.notEqual(write.data['tls.crt'], first.data['tls.crt']);
  });

  it('rotates the CA in two steps: publish the new CA first, switch the serving certificate after', async () => {
    // Keep the serving certificate fresh so only the CA is due (at 60 s): renewed at 51 s, it
    // does not fall due (63 s) within the bundle propagation either.
    let current = first;
    for (const second of [12, 24, 36, 51]) current = stored(asWrite(await plan(current, at(second))));
    const phase1 = asWrite(await plan(current, at(60)));
    assert.deepEqual(phase1.issued, ['ca']);
    const afterPhase1 = stored(phase1);
    const [newCa, oldCa] = cas(afterPhase1);
    assert.ok(newCa && oldCa);
    assert.equal(oldCa.fingerprint256, cas(current)[0]?.fingerprint256);
    assert.equal(
      afterPhase1.data['tls.crt'],
      current.data['tls.crt'],
      'the serving certificate must not change yet',
    );

    // Not published yet, or published too recently: wait.
    const unpublished = await plan(afterPhase1, at(63), { isPublished: () => false });
    assert.equal(unpublished.kind, 'unchanged');
    const tooSoon = await plan(afterPhase1, at(61));
    assert.equal(tooSoon.kind, 'unchanged');
    assert.equal(tooSoon.nextCheckAt.getTime(), at(62).getTime());

    const phase2 = asWrite(await plan(afterPhase1, at(62)));
    assert.deepEqual(phase2.issued, ['serving']);
    const leaf = serving(stored(phase2));
    assert.ok(leaf.verify(newCa.publicKey));
    assert.equal(phase2.data['ca.crt'], afterPhase1.data['ca.crt'], 'the old CA stays trusted');
  });

  it('keeps serving an unexpired certificate across a CA rotation whose switch waits past its renewal', async () => {
    // The end-to-end suite's chart values: the serving certificate falls due for renewal when
    // the CA does, and would expire within the bundle propagation the switch waits for.
    const e2e: CertificatePolicy = {
      ...policy,
      caLifetimeMs: 60 * SECOND,
      caRenewBeforeMs: 30 * SECOND,
      servingLifetimeMs: 20 * SECOND,
      servingRenewBeforeMs: 10 * SECOND,
      bundlePropagationMs: 10 * SECOND,
    };
    // The leader as the certificate manager runs it: it plans again at each nextCheckAt. It
    // starts mid-second, so certificates end up to a second earlier than planned (notAfter
    // holds whole seconds).
    let now = at(0.6);
    let current = stored(asWrite(await plan(undefined, now, { policy: e2e })));
    const signers = new Set<string>();
    while (now < at(150)) {
      const result = await plan(current, now, { policy: e2e });
      if (result.kind === 'write') current = stored(result);
      const leaf = serving(current);
      const signer = cas(current).find((ca) => leaf.verify(ca.publicKey));
      assert.ok(
        signer,
        `at ${(now.getTime() - T0.getTime()) / SECOND}s the serving certificate chains to no CA`,
      );
      signers.add(signer.fingerprint256);
      // Served until the next check: it must still be valid then, and a moment later (the
      // follower reloads the Secret, and issuing takes time).
      const next = result.nextCheckAt;
      assert.ok(
        new Date(leaf.validTo).getTime() > next.getTime() + SECOND,
        `at ${(now.getTime() - T0.getTime()) / SECOND}s the serving certificate (valid to ${leaf.validTo}) is served until ${next.toISOString()}`,
      );
      now = next;
    }
    assert.ok(signers.size >= 4, `the serving certificate was signed by ${signers.size} CAs in 150 s`);
  });

  it('never holds more than two unexpired CAs across several rotations and prunes expired ones', async () => {
    let current = first;
    let rotations = 0;
    for (let second = 12; second <= 400; second += 4) {
      const result = await plan(current, at(second));
      if (result.kind === 'write') {
        if (result.issued.includes('ca')) rotations++;
        current = stored(result);
      }
      const bundle = cas(current);
      assert.ok(bundle.length <= 2, `bundle of ${bundle.length} at ${second}s`);
      for (const ca of bundle)
        assert.ok(new Date(ca.validTo) > at(second), 'an expired CA stayed in the bundle');
      assert.ok(
        serving(current).verify(bundle[0]!.publicKey) || serving(current).verify(bundle[1]!.publicKey),
      );
    }
    assert.ok(rotations >= 5, `only ${rotations} CA rotations`);
  });

  it('serves a valid bring-your-own Secret untouched', async () => {
    const ca = await createCertificateAuthority({
      commonName: 'byo-ca',
      lifetimeMs: 1000 * SECOND,
      now: at(0),
    });
    const leaf = await issueCertificate(
      {
        commonName: 'byo',
        usage: 'server',
        lifetimeMs: 500 * SECOND,
        dnsNames: [...policy.dnsNames],
        ipAddresses: ['127.0.0.1'],
        now: at(0),
      },
      ca,
    );
    const byo: StoredSecret = {
      type: 'kubernetes.io/tls',
      managed: false,
      data: { 'tls.crt': leaf.certificatePem, 'tls.key': leaf.privateKeyPem, 'ca.crt': ca.certificatePem },
      annotations: {},
    };
    const result = await plan(byo, at(10));
    assert.equal(result.kind, 'bring-your-own');
    assert.equal(result.material.caBundlePem, ca.certificatePem);
    assert.equal(result.material.servingCertPem, leaf.certificatePem);
  });

  for (const [label, data, type] of [
    ['empty', {}, 'kubernetes.io/tls'],
    ['wrong keys', { 'foo.crt': 'x', 'bar.key': 'y' }, 'kubernetes.io/tls'],
    [
      'garbage PEM',
      { 'tls.crt': 'garbage', 'tls.key': 'garbage', 'ca.crt': 'garbage', 'ca.key': 'garbage' },
      'kubernetes.io/tls',
    ],
    ['wrong type', { 'tls.crt': 'x' }, 'Opaque'],
  ] as const) {
    it(`takes over and regenerates an unlabelled Secret that is ${label}`, async () => {
      const write = asWrite(await plan({ type, managed: false, data, annotations: {} }, at(0)));
      assert.equal(write.mode, type === 'Opaque' ? 'recreate' : 'update');
      assert.ok(write.reasons.some((reason) => reason.includes('taking it over')));
      assert.ok(serving(stored(write)).verify(cas(stored(write))[0]!.publicKey));
    });
  }

  it('recreates a managed Secret whose type is wrong, keeping its CA', async () => {
    const write = asWrite(await plan({ ...first, type: 'Opaque' }, at(1)));
    assert.equal(write.mode, 'recreate');
    assert.equal(write.data['ca.crt'], first.data['ca.crt']);
    assert.equal(write.data['tls.crt'], first.data['tls.crt']);
  });

  it("migrates Koordinator's Opaque layout without changing the CA or the serving certificate", async () => {
    const koordinator: StoredSecret = {
      type: 'Opaque',
      managed: false,
      data: {
        'ca-cert.pem': first.data['ca.crt']!,
        'ca-key.pem': first.data['ca.key']!,
        'cert.pem': first.data['tls.crt']!,
        'key.pem': first.data['tls.key']!,
      },
      annotations: {},
    };
    const write = asWrite(await plan(koordinator, at(1)));
    assert.equal(write.mode, 'recreate');
    assert.deepEqual(write.issued, []);
    assert.equal(write.data['ca.crt'], first.data['ca.crt']);
    assert.equal(write.data['tls.crt'], first.data['tls.crt']);
  });

  it('restores a deleted Secret from what it served, with the same CA', async () => {
    const write = asWrite(
      await plan(undefined, at(1), {
        remembered: { ...(first.data as Record<'tls.crt' | 'tls.key' | 'ca.crt' | 'ca.key', string>) },
      }),
    );
    assert.equal(write.mode, 'create');
    assert.deepEqual(write.issued, []);
    assert.equal(write.data['ca.crt'], first.data['ca.crt']);
    assert.equal(write.data['tls.crt'], first.data['tls.crt']);
  });

  it('reissues a serving certificate that does not match its key, immediately', async () => {
    const other = stored(asWrite(await plan(undefined, at(0))));
    const broken: StoredSecret = { ...first, data: { ...first.data, 'tls.key': other.data['tls.key']! } };
    const write = asWrite(await plan(broken, at(1)));
    assert.deepEqual(write.issued, ['serving']);
    assert.equal(write.data['ca.crt'], first.data['ca.crt']);
  });

  it('reissues when the wanted SANs change', async () => {
    const write = asWrite(await plan(first, at(1), { policy: { ...policy, dnsNames: ['other.ns.svc'] } }));
    assert.deepEqual(write.issued, ['serving']);
    assert.equal(serving(stored(write)).checkHost('other.ns.svc'), 'other.ns.svc');
  });

  it('issues certificates that are valid to a clock five minutes behind ours', async () => {
    const write = asWrite(await plan(undefined, at(300)));
    const leaf = serving(stored(write));
    assert.ok(new Date(leaf.validFrom) <= at(0));
  });

  it('checks again at least every maxCheckIntervalMs', async () => {
    const long = {
      ...policy,
      servingLifetimeMs: 1e9,
      servingRenewBeforeMs: 1e6,
      caLifetimeMs: 2e9,
      caRenewBeforeMs: 1e6,
    };
    const created = stored(asWrite(await plan(undefined, at(0), { policy: long })));
    const result = await plan(created, at(1), { policy: long });
    assert.equal(result.kind, 'unchanged');
    assert.equal(result.nextCheckAt.getTime(), at(61).getTime());
  });

  it('records when the bundle changed', async () => {
    const write = asWrite(await plan(undefined, at(5)));
    assert.equal(write.annotations[BUNDLE_UPDATED_ANNOTATION], at(5).toISOString());
  });
});

describe('planSecret without the keys it needs', () => {
  const keysOf = async (): Promise<{ ca: KeyPair; serving: KeyPair }> => ({
    ca: await smallKey(),
    serving: await smallKey(),
  });
  const pure = (stored: StoredSecret | undefined, now: Date, extra: Partial<PlanInputs> = {}) =>
    planSecret({ stored, policy, now, isPublished: () => true, ...extra });

  it('asks for both keys to create the Secret, and issues with exactly the keys it is given', async () => {
    assert.deepEqual(pure(undefined, at(0)), { kind: 'keys-needed', roles: ['ca', 'serving'] });
    const keys = await keysOf();
    const write = asWrite(pure(undefined, at(0), { keys }));
    assert.equal(write.data['ca.key'], keys.ca.privateKeyPem);
    assert.equal(write.data['tls.key'], keys.serving.privateKeyPem);
  });

  it('asks for no key when nothing is issued', () => {
    assert.equal(pure(first, at(1)).kind, 'unchanged');
  });

  it('asks only for the serving key to renew the serving certificate', () => {
    assert.deepEqual(pure(first, at(12)), { kind: 'keys-needed', roles: ['serving'] });
  });

  it('asks only for the CA key when the CA is due and the serving certificate can stay', async () => {
    let current = first;
    for (const second of [12, 24, 36, 51]) current = stored(asWrite(await plan(current, at(second))));
    assert.deepEqual(pure(current, at(60)), { kind: 'keys-needed', roles: ['ca'] });
  });

  it('asks for both keys when the serving certificate falls due within the wait for the switch', async () => {
    let current = first;
    for (const second of [12, 24, 36, 48]) current = stored(asWrite(await plan(current, at(second))));
    // At 60 s the CA is due and the serving certificate (renewal point 60 s) too; the switch
    // could come at 62 s at the earliest, so it is renewed from the old CA in the same write.
    assert.deepEqual(pure(current, at(60)), { kind: 'keys-needed', roles: ['ca', 'serving'] });
    const write = asWrite(pure(current, at(60), { keys: await keysOf(), isPublished: () => false }));
    assert.deepEqual(write.issued, ['ca', 'serving']);
    const [newCa, oldCa] = cas(stored(write));
    const leaf = serving(stored(write));
    assert.ok(oldCa && leaf.verify(oldCa.publicKey), 'renewed from the old CA, which is trusted already');
    assert.ok(newCa && !leaf.verify(newCa.publicKey));
    assert.equal(write.nextCheckAt.getTime(), at(62).getTime(), 'the switch is still checked for on time');
  });

  it('asks for both keys when there is no usable CA and no servable certificate', () => {
    const broken: StoredSecret = { ...first, data: { ...first.data, 'ca.key': '', 'tls.key': '' } };
    assert.deepEqual(pure(broken, at(1)), { kind: 'keys-needed', roles: ['ca', 'serving'] });
  });
});

describe('planSecretWithKeys', () => {
  const counting = (): { generate: () => Promise<KeyPair>; count: () => number } => {
    let generated = 0;
    return {
      generate: () => {
        generated++;
        return smallKey();
      },
      count: () => generated,
    };
  };
  const inputs = (stored: StoredSecret | undefined, now: Date, extra: Partial<PlanInputs> = {}) => ({
    stored,
    policy,
    now,
    isPublished: () => true,
    ...extra,
  });

  it('generates exactly the keys the plan issues with', async () => {
    const created = counting();
    assert.deepEqual(asWrite(await planSecretWithKeys(inputs(undefined, at(0)), created.generate)).issued, [
      'ca',
      'serving',
    ]);
    assert.equal(created.count(), 2);

    const unchanged = counting();
    assert.equal((await planSecretWithKeys(inputs(first, at(1)), unchanged.generate)).kind, 'unchanged');
    assert.equal(unchanged.count(), 0);

    const renewed = counting();
    assert.deepEqual(asWrite(await planSecretWithKeys(inputs(first, at(12)), renewed.generate)).issued, [
      'serving',
    ]);
    assert.equal(renewed.count(), 1);
  });

  it('plans again when the new CA turns out to be usable at once', async () => {
    // With no propagation delay the serving certificate switches in the same plan, which the
    // first round could not know before the new CA existed.
    const instant = { ...policy, bundlePropagationMs: 0 };
    let current = first;
    for (const second of [12, 24, 36, 51]) current = stored(asWrite(await plan(current, at(second))));
    const keys = counting();
    const write = asWrite(
      await planSecretWithKeys(inputs(current, at(60), { policy: instant }), keys.generate),
    );
    assert.deepEqual(write.issued, ['ca', 'serving']);
    assert.equal(keys.count(), 2);
    assert.ok(serving(stored(write)).verify(cas(stored(write))[0]!.publicKey));
  });
});
