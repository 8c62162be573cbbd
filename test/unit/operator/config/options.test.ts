import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseOptions, usage, type OperatorOptions } from '../../../../operator/config/options.js';

function options(argv: string[], env: NodeJS.ProcessEnv = {}): OperatorOptions {
  const parsed = parseOptions(argv, env);
  assert.equal(parsed.help, false);
  return (parsed as { options: OperatorOptions }).options;
}

describe('operator options', () => {
  it('has production defaults and the public names', () => {
    const o = options([]);
    assert.equal(o.namespace, 'admission-system');
    assert.equal(o.secretName, 'webhook-tls');
    assert.equal(o.port, 9443);
    assert.equal(o.webhookPort, 9443);
    assert.equal(o.caLifetimeMs, 26_280 * 3600_000);
    assert.equal(o.featureGates.PodValidatingWebhook, true);
  });

  it('reads flags before environment variables', () => {
    const o = options(['--port=9555', '--cert-lifetime', '11s', '--cert-renew-before=4s'], {
      ADMISSION_PORT: '1',
      ADMISSION_NAMESPACE: 'from-env',
    });
    assert.equal(o.port, 9555);
    assert.equal(o.namespace, 'from-env');
    assert.equal(o.certLifetimeMs, 11_000);
  });

  it('names the flag and the rule on bad input', () => {
    assert.throws(
      () => parseOptions(['--port=0'], {}),
      /--port: must be an integer from 1 to 65535 \(got "0"\)/,
    );
    assert.throws(() => parseOptions(['--ca-lifetime=10'], {}), /--ca-lifetime: missing unit/);
    assert.throws(() => parseOptions(['--log-level=loud'], {}), /--log-level: must be one of/);
    assert.throws(() => parseOptions(['--feature-gates=Bogus=true'], {}), /unknown gate "Bogus"/);
    assert.throws(
      () => parseOptions(['--cert-lifetime=10s', '--cert-renew-before=10s'], {}),
      /--cert-renew-before must be shorter than --cert-lifetime/,
    );
    assert.throws(
      () => parseOptions(['--cert-lifetime=10s', '--cert-renew-before=5s', '--bundle-propagation=10s'], {}),
      /--cert-lifetime must be longer than --bundle-propagation/,
    );
    assert.throws(
      () => parseOptions(['--ca-renew-before=10s', '--bundle-propagation=10s'], {}),
      /--ca-renew-before must be longer than --bundle-propagation/,
    );
    assert.throws(() => parseOptions(['--nope'], {}), /Unknown option '--nope'/);
  });

  it('serves metrics on :8080 unless told otherwise, and 0 turns them off', () => {
    assert.deepEqual(options([]).metricsAddress, { host: '0.0.0.0', port: 8080 });
    assert.deepEqual(options(['--metrics-bind-address=127.0.0.1:9090']).metricsAddress, {
      host: '127.0.0.1',
      port: 9090,
    });
    assert.deepEqual(options(['--metrics-bind-address=[::1]:0']).metricsAddress, { host: '::1', port: 0 });
    assert.equal(options(['--metrics-bind-address=0']).metricsAddress, undefined);
    assert.throws(
      () => parseOptions(['--metrics-bind-address=8080'], {}),
      /--metrics-bind-address: must be host:port \(e\.g\. :8080, 127\.0\.0\.1:8080\) or 0 to turn it off \(got "8080"\)/,
    );
  });

  it('advertises $POD_IP:port, else a specific bind address, for quota forwarding', () => {
    const advertised = (argv: string[], env: NodeJS.ProcessEnv = {}): string | undefined => {
      const parsed = parseOptions(argv, env);
      assert.equal(parsed.help, false);
      return parsed.help ? undefined : parsed.options.advertiseAddress;
    };
    assert.equal(advertised([]), undefined, 'listening on every address names none of them');
    assert.equal(advertised([], { POD_IP: '10.1.2.3' }), '10.1.2.3:9443');
    assert.equal(advertised(['--port=9444'], { POD_IP: 'fd00::7' }), '[fd00::7]:9444');
    assert.equal(advertised(['--bind-address=127.0.0.1', '--port=19001']), '127.0.0.1:19001');
    assert.equal(
      advertised(['--advertise-address=leader.example:443'], { POD_IP: '10.1.2.3' }),
      'leader.example:443',
    );
    assert.equal(advertised(['--advertise-address=none'], { POD_IP: '10.1.2.3' }), undefined);
    assert.throws(
      () => parseOptions(['--advertise-address=10.1.2.3'], {}),
      /--advertise-address: must be host:port, \[ipv6\]:port or none \(got "10\.1\.2\.3"\)/,
    );
  });

  it('trusts the network only when told, and never beside a verification of the API server', () => {
    assert.equal(options([]).clientVerification.trustNetwork, false);
    assert.equal(options(['--trust-network-callers=true']).clientVerification.trustNetwork, true);
    assert.throws(
      () => parseOptions(['--trust-network-callers=yes'], {}),
      /--trust-network-callers: must be true or false/,
    );
    for (const verified of [
      ['--client-ca-file=/ca.pem', '--client-subject-names=kube-apiserver'],
      ['--client-token-users=apiserver'],
    ]) {
      assert.throws(
        () => parseOptions(['--trust-network-callers=true', ...verified], {}),
        /--trust-network-callers stands in for verifying the API server/,
      );
    }
  });

  it('offers --help listing every flag with its environment variable', () => {
    assert.deepEqual(parseOptions(['--help'], {}), { help: true });
    assert.match(usage(), /--cert-lifetime/);
    assert.match(usage(), /ADMISSION_FEATURE_GATES/);
  });

  it('lists the subcommands in --help, one line each, and --version', () => {
    assert.match(
      usage(),
      /^Commands:\n {2}admit {2,}run the webhooks on manifests offline.*\n {2}audit {2,}list a cluster's existing objects/m,
    );
    assert.match(usage(), /--version {2,}print the version and the git commit/);
  });

  it('reads the enforcement per webhook from the flag or its environment twin, naming what is wrong', () => {
    assert.equal(options([]).enforcement.fallback, 'deny');
    const o = options([], { ADMISSION_ENFORCEMENT: 'validate-pod=warn,*=dryrun' });
    assert.equal(o.enforcement.byWebhook.get('validate-pod'), 'warn');
    assert.equal(o.enforcement.fallback, 'dryrun');
    assert.throws(
      () => parseOptions(['--enforcement=validate-pod=audit'], {}),
      /--enforcement\.validate-pod: action must be one of deny, warn, dryrun, got "audit"/,
    );
  });

  it('reads the admin’s webhook selectors as the API server will validate them, naming what is wrong', () => {
    const selector = '{"matchExpressions":[{"key":"example.com/no-admission","operator":"DoesNotExist"}]}';
    const parsed = parseOptions([`--webhook-namespace-selector=${selector}`], {});
    assert.ok(!parsed.help);
    assert.deepEqual(parsed.options.webhookNamespaceSelector, JSON.parse(selector));
    assert.equal(parsed.options.webhookObjectSelector, undefined);
    for (const [text, message] of [
      ['{', /--webhook-object-selector: not valid JSON/],
      ['{"matchLabels":{"a b":"c"}}', /--webhook-object-selector: key "a b"/],
      ['{"matchLabels":{"a":"c d"}}', /--webhook-object-selector: value "c d" of a/],
      ['{"matchExpressions":[{"key":"a","operator":"In"}]}', /values: Required value/],
      ['{"namespaces":["a"]}', /--webhook-object-selector\.namespaces: unknown field/],
    ] as const) {
      assert.throws(() => parseOptions([`--webhook-object-selector=${text}`], {}), message);
    }
  });

  it('reads per-webhook failure policy and timeout overrides, naming what is wrong', () => {
    const o = options(['--webhook-overrides={"validate-pod":{"failurePolicy":"Ignore","timeoutSeconds":5}}']);
    assert.deepEqual(o.webhookOverrides, { 'validate-pod': { failurePolicy: 'Ignore', timeoutSeconds: 5 } });
    assert.throws(
      () => parseOptions(['--webhook-overrides={"nope":{}}'], {}),
      /--webhook-overrides\.nope: unknown webhook; known: .*validate-pod/,
    );
    assert.throws(
      () => parseOptions(['--webhook-overrides={"validate-pod":{"failurePolicy":"Maybe"}}'], {}),
      /--webhook-overrides\.validate-pod\.failurePolicy: must be Fail or Ignore/,
    );
    assert.throws(
      () => parseOptions(['--webhook-overrides={"validate-pod":{"timeoutSeconds":31}}'], {}),
      /timeoutSeconds: must be an integer from 1 to 30/,
    );
    assert.throws(() => parseOptions(['--webhook-overrides=[1'], {}), /--webhook-overrides: not valid JSON/);
  });

  it('leaves --shutdown-delay to the start-up when not given, and accepts 0 to turn the drain off', () => {
    assert.equal(options([]).shutdownDelayMs, undefined);
    assert.equal(options(['--shutdown-delay=0']).shutdownDelayMs, 0);
    assert.equal(options([], { ADMISSION_SHUTDOWN_DELAY: '2s' }).shutdownDelayMs, 2000);
    assert.equal(options(['--shutdown-delay=500ms']).shutdownDelayMs, 500);
    assert.throws(() => parseOptions(['--shutdown-delay=-1s'], {}), /--shutdown-delay: must not be negative/);
    assert.throws(() => parseOptions(['--shutdown-delay=5'], {}), /--shutdown-delay: missing unit/);
  });
});
