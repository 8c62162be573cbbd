/**
 * The probe pods of the integration and end-to-end tests (test/harness/governed-pod.ts) must be
 * sent to both pod webhooks and admitted unchanged: otherwise those tests would pass with the
 * operator stopped.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { matchWebhook } from '../../../../webhook/chain/match-webhook.js';
import { NO_DECISION_METRICS } from '../../../../webhook/metrics/decision-metrics.js';
import { narrowWebhooks } from '../../../../webhook/narrowing/narrow-webhooks.js';
import { decide } from '../../../../webhook/server/decide.js';
import { defaultWebhooks } from '../../../harness/table-context.js';
import { governedMetadata } from '../../../harness/governed-pod.js';
import { admissionRequest } from '../../../harness/requests.js';
import { stateSnapshot } from '../../../harness/state.js';

describe('the tests’ probe pod', () => {
  it('is sent to both pod webhooks, which admit it unchanged', () => {
    const state = stateSnapshot({
      namespaces: [{ name: 'work', labels: { 'kubernetes.io/metadata.name': 'work' } }],
    });
    const request = admissionRequest({
      kind: 'Pod',
      resource: 'pods',
      namespace: 'work',
      name: 'probe-x',
      object: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'probe-x', namespace: 'work', ...governedMetadata() },
        spec: { containers: [{ name: 'main', image: 'registry.invalid/probe:1', resources: {} }] },
      },
    });
    const table = defaultWebhooks();
    const narrowed = narrowWebhooks(table, state);
    const match = { namespaceLabels: () => ({ 'kubernetes.io/metadata.name': 'work' }), namespaced: true };
    for (const path of ['/mutate-pod', '/validate-pod']) {
      const sent = narrowed.filter(
        (entry) => entry.path === path && matchWebhook(entry, request, match).call === true,
      );
      assert.equal(sent.length, 1, path);
      const entry = table.find((each) => each.path === path);
      assert.ok(entry);
      const judged = decide(entry, request, state, pino({ level: 'silent' }), NO_DECISION_METRICS);
      assert.equal(judged.decision.allowed, true, path);
      assert.equal(judged.patch?.length ?? 0, 0, path);
    }
  });
});
