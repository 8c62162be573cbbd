import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { differingPaths, messageShape, podShape, QUOTA_LABEL } from '../../bench/koord-manager-decisions.js';
import { rotation, sideBySideSettings } from '../../bench/koord-manager-settings.js';
import {
  chartRenderArguments,
  koordManagerObjects,
  koordManagerProcess,
  webhookConfigurationNames,
  type RenderedObject,
} from '../../harness/koord-manager-chart.js';
import { parseRelayArguments } from '../../harness/relay-arguments.js';

/** The shape of Koordinator v1.8.0's render (`helm template`), cut to what the harness reads. */
const render: RenderedObject[] = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'koordinator-system' } },
  {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'elasticquotas.scheduling.sigs.k8s.io' },
  },
  { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'koord-batch' } },
  {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'slo-controller-config', namespace: 'koordinator-system' },
  },
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'elsewhere', namespace: 'default' } },
  {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'koordinator-webhook-certs', namespace: 'koordinator-system' },
  },
  {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'koordinator-webhook-service', namespace: 'koordinator-system' },
  },
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'koord-manager-role' },
  },
  {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'koordlet', namespace: 'koordinator-system' },
  },
  {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: 'koordinator-mutating-webhook-configuration' },
  },
  {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'koordinator-validating-webhook-configuration' },
  },
  {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'koord-manager', namespace: 'koordinator-system' },
    spec: {
      template: {
        spec: {
          containers: [
            {
              name: 'manager',
              command: ['/koord-manager'],
              args: ['--enable-leader-election', '--feature-gates=EnableQuotaAdmission=true', '--v=4'],
              env: [
                { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                { name: 'WEBHOOK_PORT', value: '9876' },
                { name: 'WEBHOOK_CONFIGURATION_FAILURE_POLICY_PODS', value: 'Ignore' },
              ],
            },
          ],
        },
      },
    },
  },
];

const HOST_MODE = { host: '127.0.0.1', port: 31000, certDir: '/tmp/certs' };

describe('koord-manager from its chart', () => {
  it('renders the chart with the chart-default gates plus quota admission and the replica count', () => {
    assert.deepEqual(chartRenderArguments('/charts/koordinator', 2), [
      'template',
      'koordinator',
      '/charts/koordinator',
      '--set',
      'featureGates=EnableQuotaAdmission=true',
      '--set',
      'manager.replicas=2',
    ]);
    assert.throws(() => chartRenderArguments('/c', 0), /replicas must be a positive integer, got 0/);
  });

  it("applies its namespace, CRDs, priority classes, configurations and its namespace's ConfigMaps and Secret only", () => {
    const names = koordManagerObjects(render, 'koordinator-system').map(
      (object) => `${object.kind}/${object.metadata?.name}`,
    );
    assert.deepEqual(names, [
      'Namespace/koordinator-system',
      'CustomResourceDefinition/elasticquotas.scheduling.sigs.k8s.io',
      'PriorityClass/koord-batch',
      'ConfigMap/slo-controller-config',
      'Secret/koordinator-webhook-certs',
      'MutatingWebhookConfiguration/koordinator-mutating-webhook-configuration',
      'ValidatingWebhookConfiguration/koordinator-validating-webhook-configuration',
    ]);
  });

  it("runs with the Deployment's flags, its environment resolved, and host mode on the balancer's port", () => {
    const launch = koordManagerProcess(render, HOST_MODE);
    assert.deepEqual(launch.args, [
      '--enable-leader-election',
      '--feature-gates=EnableQuotaAdmission=true',
      '--v=4',
    ]);
    assert.deepEqual(launch.env, {
      POD_NAMESPACE: 'koordinator-system',
      WEBHOOK_PORT: '31000',
      WEBHOOK_CONFIGURATION_FAILURE_POLICY_PODS: 'Ignore',
      WEBHOOK_HOST: '127.0.0.1',
      WEBHOOK_CERT_WRITER: 'secret',
      WEBHOOK_CERT_DIR: '/tmp/certs',
    });
  });

  it('names what it cannot find or resolve in the render', () => {
    assert.throws(() => koordManagerProcess([], HOST_MODE), /no Deployment koord-manager/);
    const secretRef = structuredClone(render);
    const deployment = secretRef.at(-1) as {
      spec: { template: { spec: { containers: { env: unknown[] }[] } } };
    };
    deployment.spec.template.spec.containers[0]?.env.push({
      name: 'TOKEN',
      valueFrom: { secretKeyRef: { name: 's', key: 'k' } },
    });
    assert.throws(
      () => koordManagerProcess(secretRef, HOST_MODE),
      /env TOKEN has a source this harness cannot resolve/,
    );
    assert.throws(
      () => koordManagerProcess(render, { ...HOST_MODE, port: 70000 }),
      /webhook port must be an integer/,
    );
    assert.throws(() => webhookConfigurationNames([]), /no MutatingWebhookConfiguration/);
    assert.deepEqual(webhookConfigurationNames(render), {
      mutating: 'koordinator-mutating-webhook-configuration',
      validating: 'koordinator-validating-webhook-configuration',
    });
  });
});

describe('relay arguments', () => {
  it('reads listeners, the pid and log files and the command after --', () => {
    assert.deepEqual(
      parseRelayArguments([
        '--loopback-up',
        '--tcp=6443:/tmp/a/api.sock',
        '--tcp=0:/tmp/a/webhook.sock',
        '--unix=/tmp/a/webhook.sock:9876',
        '--pid-file=/tmp/a/pid',
        '--log-file=/tmp/a/log',
        '--',
        '/bin/koord-manager',
        '--v=4',
      ]),
      {
        loopbackUp: true,
        tcp: [
          { port: 6443, socket: '/tmp/a/api.sock' },
          { port: 0, socket: '/tmp/a/webhook.sock' },
        ],
        unix: [{ socket: '/tmp/a/webhook.sock', port: 9876 }],
        pidFile: '/tmp/a/pid',
        logFile: '/tmp/a/log',
        command: ['/bin/koord-manager', '--v=4'],
      },
    );
  });

  it('refuses what it does not know, naming the flag and the rule', () => {
    assert.throws(() => parseRelayArguments(['--udp=1:/s']), /unknown argument "--udp=1:\/s"/);
    assert.throws(() => parseRelayArguments(['--tcp=/s']), /--tcp takes PORT:SOCKET/);
    assert.throws(
      () => parseRelayArguments(['--tcp=x:/s']),
      /--tcp: the port must be an integer from 0 to 65535/,
    );
    assert.throws(
      () => parseRelayArguments(['--unix=/s:0']),
      /--unix: the port must be an integer from 1 to 65535/,
    );
    assert.throws(() => parseRelayArguments(['--pid-file=']), /--pid-file: a path is required/);
  });
});

describe('side-by-side settings and comparisons', () => {
  it("takes the issue's figures by default and checks each flag", () => {
    const settings = sideBySideSettings(new Map(), 3);
    assert.deepEqual(settings, {
      rounds: 3,
      burst: 1000,
      room: 500,
      replicas: [1, 2],
      steady: 1000,
      rate: 20,
      scalePods: 0,
      scaleNamespaces: 400,
      parts: ['burst', 'steady', 'scale'],
    });
    assert.equal(sideBySideSettings(new Map([['burst', '40']]), 1).room, 20);
    assert.throws(() => sideBySideSettings(new Map([['replicas', '1,x']]), 1), /--replicas takes a list/);
    assert.throws(() => sideBySideSettings(new Map([['rate', '0']]), 1), /--rate must be a positive integer/);
    assert.throws(
      () => sideBySideSettings(new Map([['parts', 'bursts']]), 1),
      /--parts takes .*; got bursts/,
    );
  });

  it('rotates the order of the three from round to round', () => {
    assert.deepEqual(rotation(0), ['koord-manager', 'ours', 'none']);
    assert.deepEqual(rotation(1), ['ours', 'none', 'koord-manager']);
    assert.deepEqual(rotation(2), ['none', 'koord-manager', 'ours']);
    assert.deepEqual(rotation(3), rotation(0));
  });

  it('compares refusal messages by their shape: names and quantities taken out', () => {
    const names = { 'bench-km-burst-abc-1': '<namespace>', 'burst-abc-2': '<quota>' };
    const a = messageShape(
      'exceeded quota: bench-km-burst-abc-1/burst-abc-2, requested: cpu=500m, used: cpu=250, limited: cpu=250',
      names,
    );
    assert.equal(a, 'exceeded quota: <namespace>/<quota>, requested: cpu=N, used: cpu=N, limited: cpu=N');
    assert.equal(
      messageShape(
        'exceeded quota: bench-km-burst-abc-1/burst-abc-2, requested: cpu=1, used: cpu=249500m, limited: cpu=250',
        names,
      ),
      a,
    );
  });

  it("compares mutated pods without the quota's name or the token volume's generated name", () => {
    const pod = (quota: string, token: string, extra: Record<string, string> = {}) =>
      podShape({
        metadata: { name: 'x', labels: { [QUOTA_LABEL]: quota, ...extra } },
        spec: { containers: [{ name: 'main', volumeMounts: [{ name: token, mountPath: '/t' }] }] },
      });
    const ours = pod('q-1', 'kube-api-access-abcde');
    const theirs = pod('q-2', 'kube-api-access-xyz12', { 'koordinator.sh/qos': 'LS' });
    assert.deepEqual(differingPaths(ours, pod('q-3', 'kube-api-access-zzzzz')), []);
    assert.deepEqual(differingPaths(ours, theirs), ['labels.koordinator.sh/qos: absent → "LS"']);
  });
});
