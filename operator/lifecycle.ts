/**
 * The order in which the operator's parts start and stop, and why each step waits for the one
 * before it. runOperator builds the parts and connects them; this module only sequences them.
 */
import type { Logger } from 'pino';
import type { AdmissionHttpsServer } from '../webhook/server/https-server.js';
import type { MetricsServer } from '../webhook/server/metrics-server.js';
import type { QuotaForwarder } from '../webhook/server/quota-forwarder.js';
import type { PeriodicAudit } from './audit/periodic-audit.js';
import type { AdmissionTls } from './certificates/admission-tls.js';
import type { CertificateManager } from './certificates/certificate-manager.js';
import type { OperatorOptions } from './config/options.js';
import type { LeaderElector } from './kube/leader-election.js';
import type { StateStore } from './store/state-store.js';
import type { ConfigurationReconciler } from './webhooks/configuration-reconciler.js';

/** What is started and stopped, as far as starting and stopping it goes. */
export interface OperatorParts {
  store: Pick<StateStore, 'start' | 'stop'>;
  elector: Pick<LeaderElector, 'start' | 'stop'>;
  configurations: Pick<ConfigurationReconciler, 'start' | 'stop' | 'request' | 'setCaBundle'>;
  certificates: Pick<CertificateManager, 'start' | 'stop' | 'on'>;
  /** Absent when the periodic audit is off. */
  audit: Pick<PeriodicAudit, 'start' | 'stop'> | undefined;
  forwarder: Pick<QuotaForwarder, 'close'>;
  tls: Pick<AdmissionTls, 'start' | 'stop' | 'setMaterial' | 'serving' | 'on'>;
  server: Pick<AdmissionHttpsServer, 'listen' | 'close' | 'setTls'>;
  metricsServer: Pick<MetricsServer, 'listen' | 'close'>;
}

export interface ListeningPorts {
  port: number;
  /** The metrics port, when the metrics server runs. */
  metricsPort: number | undefined;
}

/**
 * Starts the parts. The state store syncs in the background (readiness and the configurations
 * wait for it); the admission server listens only once a certificate is there, so its first
 * handshake already verifies. `onListening` is told the bound port as soon as it is known.
 */
export async function startInOrder(
  parts: OperatorParts,
  options: Pick<OperatorOptions, 'port' | 'bindAddress' | 'metricsAddress'>,
  logger: Logger,
  onListening: (port: number) => void,
): Promise<ListeningPorts> {
  const { store, elector, configurations, certificates, audit, tls, server, metricsServer } = parts;
  // An unusable client CA file stops the start before anything is written.
  await tls.start();
  const storeStarted = store.start().then(() => {
    logger.info('state store synced');
    configurations.request();
    audit?.start();
  });
  elector.start();
  await configurations.start();
  const material = await certificates.start();
  configurations.setCaBundle(material.caBundlePem);
  tls.setMaterial(material);
  const serving = tls.serving;
  if (!serving) throw new Error('no serving certificate after the material arrived');
  const port = await server.listen(options.port, options.bindAddress, serving);
  onListening(port);
  // Listening may be what a first write of the configurations was waiting for.
  configurations.request();
  const metricsPort = options.metricsAddress
    ? await metricsServer.listen(options.metricsAddress.port, options.metricsAddress.host)
    : undefined;
  // From now on every new certificate (or client CA) is served, and every new CA published.
  tls.on('changed', (next) => {
    server.setTls(next);
  });
  certificates.on('material', (next) => {
    tls.setMaterial(next);
    configurations.setCaBundle(next.caBundlePem);
  });
  storeStarted.catch((error: unknown) => {
    logger.error({ err: error }, 'state store failed to start');
  });
  return { port, metricsPort };
}

/**
 * Stops the parts. First, at once: stop writing and hand the lease over, so a rolling restart
 * does not wait for it to expire, and stop taking requests (those in flight get `graceMs`).
 * Then, with no review left that could forward to the leader, the forwarder; then the rest.
 * A normal stop never deletes the webhook configurations.
 */
export async function stopInOrder(parts: OperatorParts, graceMs: number): Promise<void> {
  await Promise.all([parts.elector.stop(), parts.server.close(graceMs), parts.audit?.stop()]);
  parts.forwarder.close();
  parts.tls.stop();
  await Promise.all([
    parts.metricsServer.close(),
    parts.certificates.stop(),
    parts.configurations.stop(),
    parts.store.stop(),
  ]);
}
