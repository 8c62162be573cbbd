/**
 * What the chart ships for operators of the operator, checked rather than hoped: the alert rules
 * pass promtool (the source file and what the chart renders from it) and their unit tests, helm
 * renders the PrometheusRule and the dashboard, every metric they name is exported by a running
 * operator, and rotations and repairs show up as Events with their reasons.
 *
 * promtool is built from its Go module on first use and cached under .cache/bin, like the
 * control plane.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { CoreV1Api, type CoreV1Event } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { ensureHelm, ensurePromtool } from '../../scripts/cluster/binaries.js';
import { repoRoot } from '../../scripts/cluster/layout.js';
import { clusterKubeConfig, kubectl, testNamespace, waitFor } from '../harness/cluster.js';
import {
  cleanConfigurationsAfter,
  httpGet,
  startOperator,
  waitForPublishedSecret,
} from '../harness/operator.js';
import {
  alertRules,
  dashboardExpressions,
  metricNames,
  readAlertsFile,
  readDashboard,
} from '../harness/monitoring-files.js';
import { temporaryDirectory } from '../harness/temp-dir.js';

const execFileAsync = promisify(execFile);
const chart = join(repoRoot, 'charts', 'admission-operator');
const alertsFile = join(chart, 'files', 'alerts.yaml');

/** Metrics the rules read from elsewhere: Prometheus' own `up` and kube-state-metrics. */
const FROM_ELSEWHERE = new Set(['up', 'kube_deployment_status_replicas_available']);

async function run(command: string, args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await execFileAsync(command, args, { cwd: repoRoot, maxBuffer: 64 << 20 });
    return stdout + stderr;
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed:\n${stdout}${stderr}`, { cause: error });
  }
}

async function helmTemplate(args: string[]): Promise<Record<string, unknown>[]> {
  const out = await run(await ensureHelm(), ['template', ...args]);
  return parseAllDocuments(out)
    .map((document) => document.toJS() as Record<string, unknown> | null)
    .filter((document): document is Record<string, unknown> => document !== null);
}

const kindOf = (document: Record<string, unknown>): unknown => document.kind;

describe('alerts, dashboard and Events', () => {
  let promtool = '';
  before(async () => {
    const started = Date.now();
    promtool = await ensurePromtool((line) => {
      console.error(`[promtool] ${line}`);
    });
    const seconds = Math.round((Date.now() - started) / 1000);
    if (seconds > 1) console.error(`[promtool] ready after ${seconds} s`);
  });

  it('the alert rules pass promtool check rules and their unit tests', async () => {
    const rules = alertRules(await readAlertsFile());
    const checked = await run(promtool, ['check', 'rules', alertsFile]);
    assert.match(checked, new RegExp(`SUCCESS: ${rules.length} rules found`));
    const tested = await run(promtool, [
      'test',
      'rules',
      join(repoRoot, 'test', 'promtool', 'alerts.test.yaml'),
    ]);
    assert.match(tested, /SUCCESS/);
  });

  it('helm renders the PrometheusRule and the dashboard on request, and promtool passes what it renders', async () => {
    const plain = await helmTemplate(['admission-operator', chart, '-n', 'admission-system']);
    assert.ok(!plain.some((document) => kindOf(document) === 'PrometheusRule'));
    assert.ok(
      !plain.some((document) => document.metadata && JSON.stringify(document).includes('grafana_dashboard')),
    );

    const documents = await helmTemplate([
      'mon',
      chart,
      '-n',
      'ops',
      '--set',
      'metrics.prometheusRule.enabled=true,metrics.dashboard.enabled=true',
      '--set',
      'metrics.prometheusRule.labels.release=prometheus,metrics.prometheusRule.alertLabels.team=platform',
      '--set',
      'metrics.prometheusRule.runbookBaseUrl=https://runbooks.example/admission/',
    ]);
    const rule = documents.find((document) => kindOf(document) === 'PrometheusRule') as
      | { metadata: { namespace: string; labels: Record<string, string> }; spec: { groups: unknown[] } }
      | undefined;
    assert.ok(rule, 'a PrometheusRule is rendered');
    assert.equal(rule.metadata.namespace, 'ops');
    assert.equal(rule.metadata.labels.release, 'prometheus');
    const rendered = alertRules({ groups: rule.spec.groups });
    const source = alertRules(await readAlertsFile());
    assert.deepEqual(
      rendered.map((alert) => alert.alert),
      source.map((alert) => alert.alert),
    );
    for (const alert of rendered) {
      assert.equal(alert.annotations.runbook_url, `https://runbooks.example/admission/${alert.alert}.md`);
      assert.equal(alert.labels.team, 'platform');
      assert.ok(!alert.expr.includes('job="admission-operator"'), `${alert.alert} selects the release's job`);
      assert.ok(!alert.expr.includes('namespace="admission-system"'));
    }
    assert.match(rendered.map((alert) => alert.expr).join('\n'), /job="mon-admission-operator-metrics"/);
    const renderedFile = join(await temporaryDirectory('rules-'), 'rendered.yaml');
    await writeFile(renderedFile, JSON.stringify({ groups: rule.spec.groups }));
    assert.match(await run(promtool, ['check', 'rules', renderedFile]), /SUCCESS/);

    const dashboard = documents.find(
      (document) =>
        kindOf(document) === 'ConfigMap' &&
        (document.metadata as { labels?: Record<string, string> }).labels?.grafana_dashboard === '1',
    ) as { data: Record<string, string> } | undefined;
    assert.ok(dashboard, 'a ConfigMap labelled grafana_dashboard: "1" is rendered');
    assert.deepEqual(JSON.parse(dashboard.data['admission-operator.json'] ?? ''), await readDashboard());
  });

  it('a running operator exports every metric the alerts and the dashboard use, and records rotations and repairs as Events', async (t) => {
    cleanConfigurationsAfter(t);
    const namespace = await testNamespace(t, 'ops');
    const operator = await startOperator(t, {
      namespace,
      args: ['--cert-lifetime=6s', '--cert-renew-before=3s', '--bundle-propagation=1s'],
    });
    await waitForPublishedSecret(namespace);

    const used = new Set([
      ...alertRules(await readAlertsFile()).flatMap((alert) => metricNames(alert.expr)),
      ...dashboardExpressions(await readDashboard()).flatMap(metricNames),
    ]);
    const exported = await waitFor('the operator to export its metrics', async () => {
      const { body } = await httpGet(operator.metricsPort, '/metrics');
      return body.includes('admission_certificate_not_after_seconds{') ? body : undefined;
    });
    const names = new Set<string>();
    for (const match of exported.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
      const [, name = '', type] = match;
      names.add(name);
      if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
      if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(name + suffix);
    }
    const missing = [...used].filter((name) => !names.has(name) && !FROM_ELSEWHERE.has(name)).sort();
    assert.deepEqual(
      missing,
      [],
      'metrics the alerts or the dashboard use that the operator does not export',
    );

    // A rotation (the serving certificate lives 6 s) and a repair of a corrupted configuration.
    await kubectl([
      'patch',
      'validatingwebhookconfiguration',
      'admission-operator',
      '--type=json',
      '-p',
      '[{"op": "replace", "path": "/webhooks/0/timeoutSeconds", "value": 29}]',
    ]);
    const core = (await clusterKubeConfig()).makeApiClient(CoreV1Api);
    const reasons = async (eventNamespace: string, name: string): Promise<CoreV1Event[]> =>
      (await core.listNamespacedEvent({ namespace: eventNamespace })).items.filter(
        (event) => event.involvedObject.name === name && event.source?.component === 'admission-operator',
      );
    const secretEvents = await waitFor(
      'CertificateIssued and CertificateRotated Events on the Secret',
      async () => {
        const events = await reasons(namespace, 'webhook-tls');
        const found = new Set(events.map((event) => event.reason));
        return found.has('CertificateIssued') && found.has('CertificateRotated') ? events : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    assert.ok(
      secretEvents.every((event) => event.involvedObject.uid),
      'the Events name the Secret by uid',
    );
    const repaired = await waitFor(
      'a WebhookConfigurationRepaired Event naming kubectl',
      async () =>
        (await reasons('default', 'admission-operator')).find(
          (event) =>
            event.reason === 'WebhookConfigurationRepaired' &&
            event.involvedObject.kind === 'ValidatingWebhookConfiguration' &&
            /last changed by kubectl/.test(event.message ?? ''),
        ),
      // The recorder writes one Event per object and reason a minute: if the operator repaired this
      // configuration at start-up (another test's left it behind), this repair comes with the next.
      { timeoutMs: 75_000, intervalMs: 250 },
    );
    assert.match(repaired.message ?? '', /timeoutSeconds/);
    const { stdout } = await kubectl(['get', 'events', '-n', namespace]);
    assert.match(stdout, /CertificateRotated/);
    // The same repair, on the leader's Lease in the operator's namespace, where its admins look.
    await waitFor(
      'the repair on the Lease in the operator namespace',
      async () => {
        const { stdout: here } = await kubectl(['get', 'events', '-n', namespace]);
        return /WebhookConfigurationRepaired.*Repaired ValidatingWebhookConfiguration admission-operator: .*last changed by kubectl/.test(
          here,
        )
          ? here
          : undefined;
      },
      { timeoutMs: 75_000, intervalMs: 500 },
    );
    t.diagnostic(
      `Events: ${[...secretEvents, repaired].map((event) => `${event.reason ?? ''}: ${event.message ?? ''}`).join(' | ')}`,
    );
    // The reasons are documented where people look for them.
    const runbooks = await readFile(join(repoRoot, 'docs', 'runbooks', 'README.md'), 'utf8');
    assert.match(runbooks, /WebhookConfigurationRepaired/);
  });
});
