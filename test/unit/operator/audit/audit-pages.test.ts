/**
 * The audit against a scripted API server serving pods a page at a time: every page judged and
 * counted beside what the server holds; a list whose snapshot expired resumed and said so, or,
 * when it cannot be, no report at all; and the periodic audit then publishing nothing (no
 * PolicyReport write) and counting the failure.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { afterEach, describe, it } from 'node:test';
import type { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { runAudit, type AuditReport } from '../../../../operator/audit/audit.js';
import { PeriodicAudit } from '../../../../operator/audit/periodic-audit.js';
import { IncompleteList } from '../../../../operator/kube/paged-list.js';
import { operatorMetrics } from '../../../../operator/metrics/operator-metrics.js';
import type { StateStore } from '../../../../operator/store/state-store.js';
import { NO_DECISION_METRICS } from '../../../../webhook/metrics/decision-metrics.js';
import { loopbackKubeConfig } from '../../../harness/loopback-kubeconfig.js';

const logger = pino({ level: 'silent' });
/** What the audit reads of the store for a pod with no quota: nothing. */
const store = { podQuotaUsage: () => undefined } as unknown as StateStore;
const chainContext = () => ({
  webhooks: [],
  state: store,
  logger,
  metrics: NO_DECISION_METRICS,
  namespaceLabels: () => ({}),
});

let server: Server | undefined;
afterEach(async () => {
  const closing = server;
  server = undefined;
  if (closing) await new Promise((done) => closing.close(done));
});

/**
 * Serves `pods` pods in pages (`continue` is the next index) with the server's count, no nodes,
 * and no CRD kinds; the page asked for with `expire` answers 410 (offering `offer`). Records every
 * request but the lists as `METHOD path`.
 */
async function serve(
  pods: number,
  expire?: { token: string; offer?: string },
  writes: string[] = [],
): Promise<KubeConfig> {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    res.setHeader('Content-Type', 'application/json');
    const token = url.searchParams.get('continue');
    if (req.method !== 'GET') writes.push(`${req.method ?? ''} ${url.pathname}`);
    if (url.pathname === '/api/v1/pods' && expire && token === expire.token) {
      res.statusCode = 410;
      res.end(
        JSON.stringify({
          kind: 'Status',
          code: 410,
          reason: 'Expired',
          message: 'The provided continue parameter is too old',
          metadata: expire.offer ? { continue: expire.offer } : {},
        }),
      );
    } else if (url.pathname === '/api/v1/pods') {
      const start = token ? Number(token.replace(/^\D+/, '')) : 0;
      const end = Math.min(pods, start + Number(url.searchParams.get('limit')));
      const items = Array.from({ length: end - start }, (_, i) => ({
        metadata: { name: `p-${start + i}`, namespace: 'team' },
        spec: { containers: [{ name: 'main', image: 'app:1' }] },
      }));
      const more = end < pods ? { continue: `at-${end}`, remainingItemCount: pods - end } : {};
      res.end(JSON.stringify({ kind: 'PodList', metadata: { resourceVersion: '9', ...more }, items }));
    } else if (url.pathname === '/api/v1/nodes') {
      res.end(JSON.stringify({ kind: 'NodeList', metadata: { resourceVersion: '9' }, items: [] }));
    } else {
      res.statusCode = 404;
      res.end(JSON.stringify({ kind: 'Status', code: 404, reason: 'NotFound', message: 'not found' }));
    }
  });
  await new Promise<void>((done) => server?.listen(0, '127.0.0.1', done));
  return loopbackKubeConfig(server);
}

const audit = (kubeConfig: KubeConfig): Promise<AuditReport> =>
  runAudit({ kubeConfig, store, chainContext, configMaps: [], chunkSize: 4 });

describe('the audit, a page at a time', () => {
  it('judges every pod of every page and says how many the cluster holds', async () => {
    const report = await audit(await serve(10));
    assert.deepEqual(report.judged, { Pod: 10 });
    assert.deepEqual(report.held, { Pod: 10 });
    assert.deepEqual(report.resumed, []);
    assert.ok(report.skipped.some((line) => line.startsWith('ElasticQuota:')));
  });

  it('goes on from the token a 410 offers, and says the list was resumed', async () => {
    const report = await audit(await serve(10, { token: 'at-8', offer: 'again-8' }));
    assert.deepEqual(report.judged, { Pod: 10 });
    assert.deepEqual(report.resumed, ['Pod']);
  });

  it('reports nothing when a list cannot be read in full', async () => {
    await assert.rejects(
      audit(await serve(10, { token: 'at-4' })),
      (error: unknown) => error instanceof IncompleteList && /offered no way to resume/.test(error.message),
    );
  });

  it('the periodic audit publishes nothing of a run that failed, and counts it', async () => {
    const writes: string[] = [];
    const kubeConfig = await serve(10, { token: 'at-4' }, writes);
    const metrics = operatorMetrics();
    const periodic = new PeriodicAudit({
      intervalMs: 60_000,
      policyReports: true,
      chunkSize: 4,
      kubeConfig,
      store,
      webhooks: () => [],
      configMaps: [],
      isLeader: () => true,
      events: { warning: () => Promise.resolve() },
      metrics,
      logger,
    });
    assert.equal(await periodic.runOnce(), undefined);
    assert.deepEqual(writes, []);
    const failures = await metrics.auditFailures.get();
    assert.deepEqual(
      failures.values.map(({ labels, value }) => [labels.stage, value]),
      [['list', 1]],
    );
    assert.equal((await metrics.auditLastSuccess.get()).values[0]?.value ?? 0, 0);
  });
});
