/**
 * The audit's judgements as PolicyReports: one per namespace and one cluster report, the
 * webhook as policy, fail/warn/pass, bounded results and messages, and a summary that counts
 * every result, kept or not.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AuditedObject, AuditJudgement } from '../../../../operator/audit/audit.js';
import {
  MAX_RESULT_MESSAGE_CHARS,
  MAX_RESULTS_BYTES,
  MAX_RESULTS_PER_REPORT,
  PolicyReportCollector,
} from '../../../../operator/audit/policy-report.js';

const pod = (namespace: string, name: string): AuditedObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  namespace,
  name,
  uid: `uid-${name}`,
});
const node: AuditedObject = {
  apiVersion: 'v1',
  kind: 'Node',
  namespace: undefined,
  name: 'n1',
  uid: undefined,
};
const passed = (webhook: string, mutating = false): AuditJudgement => ({
  webhook,
  mutating,
  outcome: 'passed',
  message: '',
});

describe('PolicyReportCollector', () => {
  it('writes a PolicyReport per namespace and a ClusterPolicyReport, webhooks as policies', () => {
    const collector = new PolicyReportCollector(new Date('2026-11-25T12:00:00.500Z'));
    collector.add(pod('b', 'p2'), [
      { webhook: 'validate-pod', mutating: false, outcome: 'refused', message: 'exceeded quota' },
      { webhook: 'mutate-pod', mutating: true, outcome: 'changed', message: 'add /spec/priority' },
    ]);
    collector.add(pod('a', 'p1'), [passed('mutate-pod', true), passed('validate-pod')]);
    collector.add(node, [passed('validate-node')]);
    const reports = collector.reports();
    assert.deepEqual(
      reports.map((report) => [report.kind, report.metadata.namespace, report.metadata.name]),
      [
        ['ClusterPolicyReport', undefined, 'admission-operator-audit'],
        ['PolicyReport', 'a', 'admission-operator-audit'],
        ['PolicyReport', 'b', 'admission-operator-audit'],
      ],
    );
    assert.ok(
      reports.every(
        (report) =>
          report.apiVersion === 'wgpolicyk8s.io/v1alpha2' &&
          report.metadata.labels['app.kubernetes.io/managed-by'] === 'admission-operator',
      ),
    );
    const b = reports[2];
    assert.deepEqual(b?.summary, { pass: 0, fail: 1, warn: 1, error: 0, skip: 0 });
    assert.deepEqual(b?.results[0], {
      source: 'admission-operator',
      policy: 'validate-pod',
      rule: 'admission',
      result: 'fail',
      scored: true,
      message: 'exceeded quota',
      timestamp: { seconds: 1_795_608_000, nanos: 0 },
      resources: [{ apiVersion: 'v1', kind: 'Pod', name: 'p2', namespace: 'b', uid: 'uid-p2' }],
    });
    assert.deepEqual(
      b?.results.map((result) => [result.policy, result.rule, result.result]),
      [
        ['validate-pod', 'admission', 'fail'],
        ['mutate-pod', 'mutation', 'warn'],
      ],
    );
    assert.deepEqual(
      reports[1]?.results.map((result) => [result.policy, result.rule, result.result, result.message]),
      [
        ['mutate-pod', 'mutation', 'pass', undefined],
        ['validate-pod', 'admission', 'pass', undefined],
      ],
    );
    assert.deepEqual(reports[0]?.results[0]?.resources, [{ apiVersion: 'v1', kind: 'Node', name: 'n1' }]);
  });

  it('keeps at most MAX_RESULTS_PER_REPORT results, failures first, and counts them all', () => {
    const collector = new PolicyReportCollector();
    for (let i = 0; i < MAX_RESULTS_PER_REPORT + 10; i += 1)
      collector.add(pod('a', `ok-${i}`), [passed('validate-pod')]);
    collector.add(pod('a', 'bad'), [
      { webhook: 'validate-pod', mutating: false, outcome: 'refused', message: 'x'.repeat(10_000) },
    ]);
    const [report] = collector.reports();
    assert.equal(report?.results.length, MAX_RESULTS_PER_REPORT);
    assert.equal(report?.results[0]?.resources[0]?.name, 'bad');
    assert.ok((report?.results[0]?.message ?? '').length <= MAX_RESULT_MESSAGE_CHARS);
    assert.deepEqual(report?.summary, {
      pass: MAX_RESULTS_PER_REPORT + 10,
      fail: 1,
      warn: 0,
      error: 0,
      skip: 0,
    });
  });

  it('keeps a report of long names and full messages inside MAX_RESULTS_BYTES', () => {
    const collector = new PolicyReportCollector();
    const namespace = 'n'.repeat(63);
    for (let i = 0; i < MAX_RESULTS_PER_REPORT; i += 1) {
      collector.add(pod(namespace, `${'p'.repeat(240)}-${i}`), [
        { webhook: 'validate-pod', mutating: false, outcome: 'refused', message: 'x'.repeat(10_000) },
      ]);
    }
    const [report] = collector.reports();
    const bytes = Buffer.byteLength(JSON.stringify(report));
    assert.ok(bytes <= MAX_RESULTS_BYTES + 4096, `${bytes} bytes`);
    assert.ok((report?.results.length ?? 0) > 0 && (report?.results.length ?? 0) < MAX_RESULTS_PER_REPORT);
    assert.equal(report?.summary.fail, MAX_RESULTS_PER_REPORT);
  });
});
