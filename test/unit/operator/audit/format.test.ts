import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AuditReport } from '../../../../operator/audit/audit.js';
import { formatAuditJson, formatAuditText } from '../../../../operator/audit/format.js';

const report: AuditReport = {
  judged: { Pod: 3, ModelBooster: 1 },
  held: { Pod: 3, ModelBooster: 1 },
  resumed: [],
  skipped: ['AutoscalingPolicy: its API is not served (CRD not installed)'],
  dropped: 0,
  findings: [
    {
      webhook: 'validate-pod',
      outcome: 'refused',
      apiVersion: 'v1',
      kind: 'Pod',
      namespace: 'b',
      name: 'p2',
      uid: 'u2',
      message: 'no',
    },
    {
      webhook: 'validate-pod',
      outcome: 'refused',
      apiVersion: 'v1',
      kind: 'Pod',
      namespace: 'a',
      name: 'p1',
      uid: 'u1',
      message: 'nope',
    },
    {
      webhook: 'validate-modelbooster',
      outcome: 'refused',
      apiVersion: 'workload.serving.volcano.sh/v1alpha1',
      kind: 'ModelBooster',
      namespace: 'a',
      name: 'm',
      uid: 'u3',
      message: 'bad',
    },
    {
      webhook: 'mutate-pod',
      outcome: 'changed',
      apiVersion: 'v1',
      kind: 'Pod',
      namespace: 'a',
      name: 'p1',
      uid: 'u1',
      message: 'add /metadata/labels',
    },
  ],
};

describe('audit report', () => {
  it('groups findings by outcome, webhook and namespace, sorted', () => {
    assert.equal(
      formatAuditText(report),
      [
        'audit: 4 of 4 objects judged (Pod 3 of 3, ModelBooster 1 of 1); 3 would be refused, 1 changed',
        '',
        'REFUSED by validate-modelbooster (1)',
        '  namespace a',
        '    ModelBooster a/m: bad',
        '',
        'REFUSED by validate-pod (2)',
        '  namespace a',
        '    Pod a/p1: nope',
        '  namespace b',
        '    Pod b/p2: no',
        '',
        'CHANGED by mutate-pod (1)',
        '  namespace a',
        '    Pod a/p1: add /metadata/labels',
        '',
        'skipped AutoscalingPolicy: its API is not served (CRD not installed)',
        '',
      ].join('\n'),
    );
  });

  it('gives the whole report as JSON', () => {
    assert.deepEqual(JSON.parse(formatAuditJson(report)), report);
  });
});
