/** The order the operator's parts start and stop in, on parts that record what is asked of them. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { startInOrder, stopInOrder, type OperatorParts } from '../../../operator/lifecycle.js';

/**
 * Parts that log each call; each stop resolves only when the test releases it (`release`), the
 * store's start when the test says it synced (`syncStore`).
 */
function recordingParts(): {
  parts: OperatorParts;
  log: string[];
  release: () => void;
  syncStore: () => void;
} {
  const log: string[] = [];
  const pending: (() => void)[] = [];
  let syncStore = (): void => undefined;
  const storeSynced = new Promise<void>((done) => (syncStore = done));
  const stop = (name: string) => (): Promise<void> => {
    log.push(`${name}.stop`);
    return new Promise((done) => pending.push(done));
  };
  const material = { caBundlePem: 'ca', servingCertPem: 'cert', servingKeyPem: 'key' };
  let served: typeof material | undefined;
  const parts = {
    store: { start: () => (log.push('store.start'), storeSynced), stop: stop('store') },
    elector: { start: () => void log.push('elector.start'), stop: stop('elector') },
    configurations: {
      start: () => (log.push('configurations.start'), Promise.resolve()),
      stop: stop('configurations'),
      request: () => void log.push('configurations.request'),
      setCaBundle: (pem: string) => void log.push(`configurations.setCaBundle ${pem}`),
    },
    certificates: {
      start: () => (log.push('certificates.start'), Promise.resolve(material)),
      stop: stop('certificates'),
      on: (event: string) => (log.push(`certificates.on ${event}`), parts.certificates),
    },
    audit: { start: () => void log.push('audit.start'), stop: stop('audit') },
    forwarder: { close: () => void log.push('forwarder.close') },
    tls: {
      start: () => (log.push('tls.start'), Promise.resolve()),
      stop: () => void log.push('tls.stop'),
      setMaterial: (next: typeof material) => {
        log.push(`tls.setMaterial ${next.servingCertPem}`);
        served = next;
      },
      get serving() {
        return served && { certificatePem: served.servingCertPem, privateKeyPem: '', clientCaPem: '' };
      },
      on: (event: string) => (log.push(`tls.on ${event}`), parts.tls),
    },
    server: {
      listen: (_port: number, _host: string, served: { certificatePem: string }) => (
        log.push(`server.listen ${served.certificatePem}`),
        Promise.resolve(9443)
      ),
      close: stop('server'),
      setTls: () => void log.push('server.setTls'),
    },
    metricsServer: {
      listen: () => (log.push('metricsServer.listen'), Promise.resolve(9090)),
      close: stop('metricsServer'),
    },
  };
  const release = (): void => {
    for (const done of pending.splice(0)) done();
  };
  return { parts: parts as unknown as OperatorParts, log, release, syncStore };
}

const settle = (): Promise<void> => new Promise((done) => setImmediate(done));

describe('startInOrder', () => {
  it('reads the client CAs first, listens only with the certificate, and follows new ones only once listening', async () => {
    const { parts, log, syncStore } = recordingParts();
    const listened: number[] = [];
    const ports = await startInOrder(
      parts,
      { port: 0, bindAddress: '127.0.0.1', metricsAddress: { host: '127.0.0.1', port: 0 } },
      pino({ level: 'silent' }),
      (port) => listened.push(port),
    );
    syncStore();
    await settle();
    assert.deepEqual(ports, { port: 9443, metricsPort: 9090 });
    assert.deepEqual(listened, [9443]);
    assert.deepEqual(log, [
      'tls.start',
      'store.start',
      'elector.start',
      'configurations.start',
      'certificates.start',
      'configurations.setCaBundle ca',
      'tls.setMaterial cert',
      'server.listen cert',
      'configurations.request',
      'metricsServer.listen',
      'tls.on changed',
      'certificates.on material',
      // The store synced: the configurations may now be written, and the audit runs.
      'configurations.request',
      'audit.start',
    ]);
  });

  it('runs no metrics server without a metrics address', async () => {
    const { parts, log } = recordingParts();
    const ports = await startInOrder(
      parts,
      { port: 0, bindAddress: '127.0.0.1', metricsAddress: undefined },
      pino({ level: 'silent' }),
      () => undefined,
    );
    assert.equal(ports.metricsPort, undefined);
    assert.ok(!log.includes('metricsServer.listen'));
  });
});

describe('stopInOrder', () => {
  it('hands over the lease and stops serving first, then closes the forwarder, then the rest', async () => {
    const { parts, log, release } = recordingParts();
    const stopped = stopInOrder(parts, 1000);
    await settle();
    assert.deepEqual(log, ['elector.stop', 'server.stop', 'audit.stop']);
    release();
    await settle();
    assert.deepEqual(log.slice(3), [
      'forwarder.close',
      'tls.stop',
      'metricsServer.stop',
      'certificates.stop',
      'configurations.stop',
      'store.stop',
    ]);
    release();
    await stopped;
  });
});
