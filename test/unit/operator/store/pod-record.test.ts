import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JsonObject } from '../../../../webhook/admission/types.js';
import {
  amountsOf,
  podKeyOf,
  podRecord as recordOf,
  type PodRecord,
} from '../../../../operator/store/pod-record.js';

const NOW = new Date('2026-11-25T12:00:00Z');
const defaultQuota = (): string => 'default';

/** The record of `pod` as the store makes it, or undefined for a pod it does not keep. */
function podRecord(
  pod: JsonObject,
  now: Date,
  quotaOf: (label: string | undefined, namespace: string) => string,
): PodRecord | undefined {
  const id = podKeyOf(pod);
  return id ? recordOf(pod, id, now, quotaOf) : undefined;
}

function pod(name: string, extra: JsonObject = {}): JsonObject {
  return {
    metadata: { name, namespace: 'team', labels: { app: 'web' } },
    spec: {
      containers: [
        { name: 'app', resources: { requests: { cpu: '250m', memory: '256Mi' } } },
        { name: 'proxy', resources: { limits: { cpu: '50m' } } },
      ],
    },
    status: { phase: 'Running' },
    ...extra,
  };
}

describe('podRecord', () => {
  it('keeps the key, namespace, quota label, resolved quota and summed requests', () => {
    const record = podRecord(
      pod('a', {
        metadata: {
          name: 'a',
          namespace: 'team',
          labels: { 'quota.scheduling.koordinator.sh/name': 'q1' },
        },
      }),
      NOW,
      (label, namespace) => `${label ?? '-'}@${namespace}`,
    );
    assert.ok(record);
    assert.equal(podKeyOf(pod('a'))?.key, 'team/a');
    assert.equal(record.namespace, 'team');
    assert.equal(record.quotaLabel, 'q1');
    assert.equal(record.quota, 'q1@team');
    assert.deepEqual(
      amountsOf(record.requests),
      new Map([
        ['cpu', 300_000_000n],
        ['memory', 256n * 2n ** 20n * 1_000_000_000n],
      ]),
    );
  });

  it('counts a pod’s pod-level requests in place of its containers’ for cpu and memory', () => {
    const record = podRecord(
      pod('a', {
        spec: {
          containers: [{ name: 'app', resources: { requests: { cpu: '250m' } } }],
          resources: { requests: { cpu: '3', memory: '1Gi' } },
        },
      }),
      NOW,
      defaultQuota,
    );
    assert.deepEqual(
      amountsOf(record!.requests),
      new Map([
        ['cpu', 3_000_000_000n],
        ['memory', 2n ** 30n * 1_000_000_000n],
      ]),
    );
  });

  it('shares one requests object between the pods that request the same', () => {
    const a = podRecord(pod('a'), NOW, defaultQuota);
    const b = podRecord(pod('b'), NOW, defaultQuota);
    assert.ok(a && b);
    assert.equal(a.requests, b.requests);
  });

  it('keeps nothing of a finished pod, a pod past its deletion grace period, or a pod without a name', () => {
    assert.equal(podRecord(pod('done', { status: { phase: 'Succeeded' } }), NOW, defaultQuota), undefined);
    const deleted = pod('deleted', {
      metadata: {
        name: 'deleted',
        namespace: 'team',
        deletionTimestamp: '2026-11-25T11:59:00Z',
        deletionGracePeriodSeconds: 30,
      },
    });
    assert.equal(podRecord(deleted, NOW, defaultQuota), undefined);
    const terminating = pod('terminating', {
      metadata: {
        name: 'terminating',
        namespace: 'team',
        deletionTimestamp: '2026-11-25T11:59:50Z',
        deletionGracePeriodSeconds: 30,
      },
    });
    assert.ok(podRecord(terminating, NOW, defaultQuota), 'still within its grace period: still counts');
    assert.equal(podRecord({ metadata: { namespace: 'team' } }, NOW, defaultQuota), undefined);
  });
});
