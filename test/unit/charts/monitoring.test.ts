import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { repoRoot } from '../../../scripts/cluster/layout.js';
import {
  alertRules,
  dashboardExpressions,
  dashboardPanels,
  metricNames,
  readAlertsFile,
  readDashboard,
} from '../../harness/monitoring-files.js';

const runbooks = join(repoRoot, 'docs', 'runbooks');
const values = parse(readFileSync(join(repoRoot, 'charts', 'admission-operator', 'values.yaml'), 'utf8')) as {
  metrics: { prometheusRule: { runbookBaseUrl: string; enabled: boolean }; dashboard: { enabled: boolean } };
};

describe('the chart’s alert rules', () => {
  it('give every alert a severity, a for: duration, a summary, a description and a runbook that exists', async () => {
    const rules = alertRules(await readAlertsFile());
    assert.ok(rules.length >= 10);
    const index = readFileSync(join(runbooks, 'README.md'), 'utf8');
    for (const rule of rules) {
      assert.ok(
        ['critical', 'warning', 'info'].includes(rule.labels.severity ?? ''),
        `${rule.alert}: severity`,
      );
      assert.match(rule.for ?? '', /^\d+[smh]$/, `${rule.alert}: for`);
      assert.ok(rule.annotations.summary, `${rule.alert}: summary`);
      assert.ok(rule.annotations.description, `${rule.alert}: description`);
      assert.equal(
        rule.annotations.runbook_url,
        `${values.metrics.prometheusRule.runbookBaseUrl}/${rule.alert}.md`,
      );
      assert.ok(existsSync(join(runbooks, `${rule.alert}.md`)), `docs/runbooks/${rule.alert}.md exists`);
      assert.ok(index.includes(`(${rule.alert}.md)`), `docs/runbooks/README.md lists ${rule.alert}`);
    }
  });

  it('select the operator’s metrics by the job the chart rewrites, so each release alerts on its own', async () => {
    for (const rule of alertRules(await readAlertsFile())) {
      const names = metricNames(rule.expr);
      assert.ok(names.length > 0, `${rule.alert} selects a metric`);
      const selectors = [...rule.expr.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*\{([^}]*)\}/g)].map(
        (m) => m[1] ?? '',
      );
      for (const selector of selectors) {
        assert.ok(
          selector.includes('job="admission-operator"') ||
            (selector.includes('namespace="admission-system"') &&
              selector.includes('deployment="admission-operator"')),
          `${rule.alert}: every selector names the job (or the Deployment): {${selector}}`,
        );
      }
    }
  });

  it('cover what an admin needs to hear about', async () => {
    const alerts = alertRules(await readAlertsFile());
    const used = new Set(alerts.flatMap((rule) => metricNames(rule.expr)));
    for (const metric of [
      'admission_certificate_not_after_seconds',
      'admission_certificate_reconcile_errors_total',
      'admission_decisions_total',
      'admission_request_duration_seconds_bucket',
      'admission_leader',
      'admission_gpu_tier_mapping_valid',
      'admission_informer_restarts_total',
      'admission_webhook_configuration_writes_total',
      'admission_quota_forward_total',
      'admission_requests_aborted_total',
      'admission_unverified_requests_total',
    ]) {
      assert.ok(used.has(metric), `an alert reads ${metric}`);
    }
    assert.equal(alerts.find((rule) => rule.alert === 'AdmissionDenialsSpiking')?.labels.severity, 'info');
  });

  it('are off by default', () => {
    assert.equal(values.metrics.prometheusRule.enabled, false);
    assert.equal(values.metrics.dashboard.enabled, false);
  });
});

describe('the chart’s dashboard', () => {
  it('has unique panel ids and shows each panel for the chosen job and namespace', async () => {
    const dashboard = await readDashboard();
    assert.equal(dashboard.uid, 'admission-operator');
    const panels = dashboardPanels(dashboard);
    const ids = panels.map((panel) => panel.id);
    assert.equal(new Set(ids).size, ids.length);
    const variables = (dashboard.templating?.list ?? []).map((variable) => variable.name);
    assert.deepEqual(variables, ['datasource', 'namespace', 'job']);
    for (const expr of dashboardExpressions(dashboard)) {
      const selectors = [...expr.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*\{([^}]*)\}/g)].map((m) => m[1] ?? '');
      assert.ok(selectors.length > 0, expr);
      for (const selector of selectors)
        assert.match(selector, /job=~"\$job", namespace=~"\$namespace"/, expr);
    }
  });

  it('shows rates, latencies, decisions, denials, refused and abandoned calls, certificates, replicas and leader, restarts, event-loop lag and memory', async () => {
    const used = new Set(dashboardExpressions(await readDashboard()).flatMap(metricNames));
    for (const metric of [
      'admission_request_duration_seconds_count',
      'admission_request_duration_seconds_bucket',
      'admission_decisions_total',
      'admission_certificate_not_after_seconds',
      'up',
      'admission_leader',
      'admission_informer_restarts_total',
      'nodejs_eventloop_lag_p99_seconds',
      'process_resident_memory_bytes',
      'admission_bad_requests_total',
      'admission_requests_aborted_total',
      'admission_unverified_requests_total',
    ]) {
      assert.ok(used.has(metric), `a panel reads ${metric}`);
    }
  });
});
