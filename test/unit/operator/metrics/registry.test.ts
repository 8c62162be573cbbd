import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { operatorMetrics } from '../../../../operator/metrics/operator-metrics.js';
import { processRegistry } from '../../../../operator/metrics/process-registry.js';
import { repoRoot } from '../../../../scripts/cluster/layout.js';
import { admissionMetrics } from '../../../../webhook/metrics/admission-metrics.js';

/** The registry as runOperator assembles it. */
const operatorRegistry = (): Registry => processRegistry(1024).registry;

const names = async (registry: Registry): Promise<string[]> =>
  (await registry.getMetricsAsJSON()).map((metric) => metric.name);

/** The series the chart's alert rules and dashboard query, as exported names (histograms by their base name). */
function namesTheChartQueries(): string[] {
  const files = ['alerts.yaml', 'dashboard.json'].map((file) =>
    readFileSync(join(repoRoot, 'charts/admission-operator/files', file), 'utf8'),
  );
  const queried = files.flatMap((text) => text.match(/\b(?:admission|nodejs|process)_[a-z_]+/g) ?? []);
  return [...new Set(queried.map((name) => name.replace(/_(?:bucket|count|sum)$/, '')))];
}

describe('the registry /metrics serves', () => {
  it('exports every series the chart’s alert rules and dashboard query', async () => {
    const exported = new Set(await names(operatorRegistry()));
    const queried = namesTheChartQueries();
    assert.ok(queried.length > 20, `found only ${String(queried.length)} queried names`);
    // nodejs_eventloop_lag_p50/p90/p99 are matched by their common prefix.
    const missing = queried.filter(
      (name) => !exported.has(name) && ![...exported].some((each) => each.startsWith(name)),
    );
    assert.deepEqual(missing, []);
  });

  it('holds the admission server’s and the operator’s metrics once, without clashing names', async () => {
    const exported = await names(operatorRegistry());
    assert.equal(new Set(exported).size, exported.length);
    assert.ok(exported.includes('admission_decisions_total'));
    assert.ok(exported.includes('admission_leader'));
    assert.ok(exported.includes('admission_quota_ledger_entries'));
    assert.ok(exported.includes('admission_quota_ledger_evictions_total'));
    assert.ok(exported.includes('process_cpu_seconds_total'));
  });

  it('gets no process metrics from what the commands build: their counts reach no served registry', async () => {
    const registry = new Registry();
    operatorMetrics(registry);
    admissionMetrics(registry);
    const exported = await names(registry);
    assert.deepEqual(
      exported.filter((name) => name.startsWith('process_') || name.startsWith('nodejs_')),
      [],
    );
  });
});
