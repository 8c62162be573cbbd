import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CoreV1Event } from '@kubernetes/client-node';
import pino from 'pino';
import { EventRecorder, type EventTarget } from '../../../../operator/kube/events.js';
import { withWallTime } from '../../../../operator/kube/clock.js';
import {
  certificateWritten,
  configurationRepaired,
  leaderElected,
} from '../../../../operator/kube/operator-events.js';

const logger = pino({ level: 'silent' });
const configMap: EventTarget = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  namespace: 'ns',
  name: 'cm',
  uid: 'u1',
};

function recorder(intervalMs = 10_000): {
  events: EventRecorder;
  written: { namespace: string; event: CoreV1Event }[];
  clock: { now: number };
} {
  const written: { namespace: string; event: CoreV1Event }[] = [];
  const clock = { now: 1_000_000 };
  const events = new EventRecorder(undefined, logger, {
    intervalMs,
    clock: withWallTime(() => new Date(clock.now)),
    write: (namespace, event) => {
      written.push({ namespace, event });
      return Promise.resolve();
    },
    lookupUid: () => Promise.resolve('looked-up'),
  });
  return { events, written, clock };
}

describe('EventRecorder', () => {
  it('writes the first Event at once, holds the rest of the interval and writes them as one with their count', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const { events, written, clock } = recorder();
    await events.warning(configMap, 'InvalidTierMapping', 'first');
    assert.equal(written.length, 1);
    assert.equal(written[0]?.event.count, 1);
    assert.equal(written[0]?.event.message, 'first');
    for (let i = 1; i <= 500; i++) {
      clock.now += 10;
      await events.warning(configMap, 'InvalidTierMapping', `fight ${i}`);
    }
    assert.equal(written.length, 1, 'a fight within the interval writes nothing more');
    clock.now = 1_000_000 + 10_000;
    t.mock.timers.tick(10_000);
    await Promise.resolve();
    assert.equal(written.length, 2);
    const aggregate = written[1]?.event;
    assert.equal(aggregate?.count, 500);
    assert.equal(aggregate?.reason, 'InvalidTierMapping');
    assert.equal(aggregate?.type, 'Warning');
    assert.equal(aggregate?.message, 'fight 500 (500 times in 5 s)');
    assert.equal(aggregate?.involvedObject.uid, 'u1');
  });

  it('limits each object and reason on its own', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const { events, written } = recorder();
    await events.warning(configMap, 'A', 'a');
    await events.warning(configMap, 'B', 'b');
    await events.warning({ ...configMap, name: 'other' }, 'A', 'a');
    await events.warning(configMap, 'A', 'again');
    assert.deepEqual(
      written.map(({ event }) => `${event.involvedObject.name}/${event.reason ?? ''}`),
      ['cm/A', 'cm/B', 'other/A'],
    );
  });

  it('writes again at once after a quiet interval', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const { events, written, clock } = recorder();
    await events.normal(configMap, 'A', 'one');
    clock.now += 10_001;
    await events.normal(configMap, 'A', 'two');
    assert.deepEqual(
      written.map(({ event }) => [event.message, event.count, event.type]),
      [
        ['one', 1, 'Normal'],
        ['two', 1, 'Normal'],
      ],
    );
  });

  it('puts Events about cluster-scoped objects in default, and looks up a missing uid', async () => {
    const { events, written } = recorder();
    await events.warning(
      { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', name: 'x' },
      'R',
      'm',
    );
    assert.equal(written[0]?.namespace, 'default');
    assert.equal(written[0]?.event.metadata.namespace, 'default');
    assert.equal(written[0]?.event.involvedObject.namespace, undefined);
    assert.equal(written[0]?.event.involvedObject.uid, 'looked-up');
  });

  it('keeps messages within the 1 KiB the API server accepts, the count included', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const { events, written } = recorder();
    await events.warning(configMap, 'R', 'x'.repeat(100_000));
    await events.warning(configMap, 'R', 'y'.repeat(100_000));
    await events.warning(configMap, 'R', 'y'.repeat(100_000));
    t.mock.timers.tick(10_000);
    await Promise.resolve();
    assert.equal(written.length, 2);
    for (const { event } of written) assert.ok(Buffer.byteLength(event.message ?? '') <= 1024);
    assert.match(written[1]?.event.message ?? '', /more chars\) \(2 times in 1 s\)$/);
  });

  it('counts the 1 KiB in bytes, so a message of multi-byte characters fits too', async () => {
    const { events, written } = recorder();
    await events.warning(configMap, 'R', 'é'.repeat(5000));
    await events.warning({ ...configMap, name: 'emoji' }, 'R', '🙂'.repeat(5000));
    for (const { event } of written) {
      assert.ok(
        Buffer.byteLength(event.message ?? '') <= 1024,
        String(Buffer.byteLength(event.message ?? '')),
      );
      assert.match(event.message ?? '', /more chars\)$/);
    }
  });

  it('remembers a bounded number of objects, writing what a forgotten one held', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const written: CoreV1Event[] = [];
    const events = new EventRecorder(undefined, logger, {
      intervalMs: 10_000,
      maxTracked: 2,
      clock: withWallTime(() => new Date(0)),
      write: (_namespace, event) => {
        written.push(event);
        return Promise.resolve();
      },
    });
    await events.warning(configMap, 'A', 'a1');
    await events.warning(configMap, 'A', 'a2');
    await events.warning(configMap, 'B', 'b');
    await events.warning(configMap, 'C', 'c');
    assert.deepEqual(
      written.map((event) => event.message),
      ['a1', 'b', 'a2', 'c'],
    );
  });

  it('logs a failed write and never throws', async () => {
    const lines: string[] = [];
    const events = new EventRecorder(
      undefined,
      pino({ level: 'warn' }, { write: (line: string) => lines.push(line) }),
      { write: () => Promise.reject(new Error('forbidden')) },
    );
    await events.warning(configMap, 'R', 'm');
    assert.match(lines.join(''), /could not record an Event/);
  });
});

describe('operator Events', () => {
  function capture(): { events: EventRecorder; written: CoreV1Event[] } {
    const written: CoreV1Event[] = [];
    const events = new EventRecorder(undefined, logger, {
      write: (_namespace, event) => {
        written.push(event);
        return Promise.resolve();
      },
    });
    return { events, written };
  }
  const secret = { namespace: 'admission-system', name: 'webhook-tls' };

  it('tells issued, rotated and restored certificates apart, and says nothing for a write that issued none', async () => {
    const { events, written } = capture();
    certificateWritten(events, secret, {
      mode: 'create',
      issued: ['ca', 'serving'],
      reasons: ['the Secret does not exist'],
    });
    certificateWritten(events, secret, {
      mode: 'update',
      issued: ['serving'],
      reasons: ['the serving certificate is due for renewal: issuing a serving certificate'],
    });
    certificateWritten(events, secret, {
      mode: 'create',
      issued: [],
      reasons: ['the Secret does not exist'],
    });
    certificateWritten(events, secret, {
      mode: 'update',
      issued: [],
      reasons: ['adding the owner reference'],
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      written.map((event) => [event.reason, event.type, event.involvedObject.kind, event.message]),
      [
        [
          'CertificateIssued',
          'Normal',
          'Secret',
          'Issued a new CA and serving certificate: the Secret does not exist',
        ],
        [
          'CertificateRotated',
          'Normal',
          'Secret',
          'Issued a new serving certificate: the serving certificate is due for renewal: issuing a serving certificate',
        ],
        [
          'CertificateRestored',
          'Warning',
          'Secret',
          'Restored the Secret from the certificates this replica serves: the Secret does not exist',
        ],
      ],
    );
  });

  it('names the manager of the latest change to a repaired configuration', async () => {
    const managedFields = [
      { manager: 'admission-operator', operation: 'Update', time: new Date('2026-01-01T00:00:00Z') },
      { manager: 'kubectl-edit', operation: 'Update', time: new Date('2026-01-02T00:00:00Z') },
    ];
    const { events, written } = capture();
    configurationRepaired(
      events,
      'ValidatingWebhookConfiguration',
      { metadata: { name: 'admission-operator', uid: 'u', managedFields } },
      'webhooks[0].failurePolicy',
    );
    // Without managedFields nobody is named (another recorder: one Event per object and interval).
    const unknown = capture();
    configurationRepaired(
      unknown.events,
      'ValidatingWebhookConfiguration',
      { metadata: { name: 'admission-operator' } },
      'webhooks[0].failurePolicy',
    );
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(written[0]?.reason, 'WebhookConfigurationRepaired');
    assert.equal(written[0]?.involvedObject.kind, 'ValidatingWebhookConfiguration');
    assert.equal(written[0]?.involvedObject.uid, 'u');
    assert.equal(written[0]?.message, 'Repaired webhooks[0].failurePolicy; last changed by kubectl-edit');
    assert.equal(unknown.written[0]?.message, 'Repaired webhooks[0].failurePolicy');
  });

  it('records no repair when what is replaced was our own last write, and repeats a repair on the Lease', async () => {
    const { events, written } = capture();
    const ours = [
      { manager: 'admission-operator', operation: 'Update', time: new Date('2026-01-02T00:00:00Z') },
    ];
    configurationRepaired(
      events,
      'ValidatingWebhookConfiguration',
      { metadata: { name: 'admission-operator', managedFields: ours } },
      'webhooks[0].clientConfig.caBundle',
    );
    // In the same second as our own write: only the other writer is named.
    const theirs = [
      ...ours,
      { manager: 'kubectl-patch', operation: 'Update', time: new Date('2026-01-02T00:00:00Z') },
    ];
    configurationRepaired(
      events,
      'ValidatingWebhookConfiguration',
      { metadata: { name: 'admission-operator', managedFields: theirs } },
      'webhooks[0].timeoutSeconds',
      {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        namespace: 'admission-system',
        name: 'admission-operator',
      },
    );
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      written.map((event) => [event.involvedObject.kind, event.message]),
      [
        [
          'ValidatingWebhookConfiguration',
          'Repaired webhooks[0].timeoutSeconds; last changed by kubectl-patch',
        ],
        [
          'Lease',
          'Repaired ValidatingWebhookConfiguration admission-operator: webhooks[0].timeoutSeconds; last changed by kubectl-patch',
        ],
      ],
    );
  });

  it('records a leader on its Lease', async () => {
    const { events, written } = capture();
    leaderElected(events, { namespace: 'admission-system', name: 'admission-operator' }, 'pod-a');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(written[0]?.reason, 'LeaderElection');
    assert.equal(written[0]?.involvedObject.kind, 'Lease');
    assert.equal(written[0]?.message, 'pod-a became leader');
  });
});
