/**
 * KindPresence: what a replica says when a watched kind's CRD is absent or appears (a log line,
 * an Event on its own Pod naming every CRD absent now, the admission_kind_installed gauge, the
 * readiness detail).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CoreV1Event } from '@kubernetes/client-node';
import { pino } from 'pino';
import { EventRecorder } from '../../../../operator/kube/events.js';
import { KindPresence } from '../../../../operator/store/kind-presence.js';
import { KINDS } from '../../../../webhook/kinds.js';

function presence(): {
  kinds: KindPresence;
  gauge: Map<string, number>;
  written: CoreV1Event[];
  lines: string[];
} {
  const gauge = new Map<string, number>();
  const written: CoreV1Event[] = [];
  const lines: string[] = [];
  const logger = pino(
    { level: 'info' },
    {
      write: (line: string) => {
        lines.push((JSON.parse(line) as { msg: string; crd?: string }).msg);
      },
    },
  );
  // One Event per reason at once, as the recorder writes it when nothing was held.
  const events = new EventRecorder(undefined, pino({ level: 'silent' }), {
    intervalMs: 0,
    write: (_namespace, event) => {
      written.push(event);
      return Promise.resolve();
    },
    lookupUid: () => Promise.resolve('pod-uid'),
  });
  const kinds = new KindPresence({
    logger,
    metrics: { kindInstalled: { set: ({ kind }, value) => gauge.set(kind, value) } },
    events,
    selfPod: { namespace: 'admission-system', name: 'operator-0' },
    settleMs: 5,
  });
  return { kinds, gauge, written, lines };
}

const settle = (): Promise<void> => new Promise((done) => setTimeout(done, 30));

describe('KindPresence', () => {
  it('says nothing but the gauge for a kind installed from the start', async () => {
    const { kinds, gauge, written, lines } = presence();
    kinds.observe('clustercolocationprofiles', KINDS.clusterColocationProfile, true);
    await settle();
    assert.deepEqual([...gauge], [['clustercolocationprofiles', 1]]);
    assert.deepEqual(written, []);
    assert.deepEqual(lines, []);
    assert.deepEqual(kinds.missing(), []);
  });

  it('logs, records and counts CRDs found absent together in one Event, then an appearance, each naming every CRD still absent', async () => {
    const { kinds, gauge, written, lines } = presence();
    kinds.observe('elasticquotas', KINDS.elasticQuota, false);
    kinds.observe('reservations', KINDS.reservation, false);
    await settle();
    assert.deepEqual(kinds.missing(), [
      'elasticquotas.scheduling.sigs.k8s.io',
      'reservations.scheduling.koordinator.sh',
    ]);
    assert.equal(gauge.get('elasticquotas'), 0);
    assert.equal(lines.filter((line) => line.startsWith('CRD not installed')).length, 2);
    assert.equal(written.length, 1, 'the absences found together are told in one Event');
    const absent = written.at(-1);
    assert.equal(absent?.reason, 'KindNotInstalled');
    assert.equal(absent?.involvedObject.kind, 'Pod');
    assert.equal(absent?.involvedObject.name, 'operator-0');
    assert.match(
      absent?.message ?? '',
      /^The CRDs elasticquotas\.scheduling\.sigs\.k8s\.io, reservations\.scheduling\.koordinator\.sh are not installed: .* \(not installed: elasticquotas\.scheduling\.sigs\.k8s\.io, reservations\.scheduling\.koordinator\.sh\)$/,
    );

    kinds.observe('elasticquotas', KINDS.elasticQuota, true);
    await settle();
    assert.equal(gauge.get('elasticquotas'), 1);
    assert.deepEqual(kinds.missing(), ['reservations.scheduling.koordinator.sh']);
    assert.equal(lines.at(-1), 'CRD installed; watching its objects');
    const appeared = written.at(-1);
    assert.equal(appeared?.reason, 'KindInstalled');
    assert.equal(
      appeared?.message,
      'The CRD elasticquotas.scheduling.sigs.k8s.io appeared; its objects are watched and its rules apply ' +
        '(not installed: reservations.scheduling.koordinator.sh)',
    );
  });
});
