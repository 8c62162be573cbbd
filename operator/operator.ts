/**
 * Wires the operator together: the state store, the certificate manager, the configuration
 * reconciler and the admission server, and the readiness check that joins them.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { OPERATOR_CONFIG_NAME, watchedConfigMaps } from '../webhook/names.js';
import { DEFAULT_TIER_MAPPING, type TierMapping } from '../webhook/rules/kubenexus/tier-mapping.js';
import { createAdmissionApp } from '../webhook/server/app.js';
import { QuotaForwarder } from '../webhook/server/quota-forwarder.js';
import { AdmissionHttpsServer } from '../webhook/server/https-server.js';
import { MetricsServer } from '../webhook/server/metrics-server.js';
import { Registry } from 'prom-client';
import { admissionMetrics } from '../webhook/metrics/admission-metrics.js';
import { operatorMetrics, type OperatorMetrics } from './metrics/operator-metrics.js';
import { registerProcessMetrics } from './metrics/process-metrics.js';
import {
  enabledWebhooks,
  webhookShortNames,
  type TableContext,
  type WebhookEntry,
} from '../webhook/table.js';
import { CertificateManager } from './certificates/certificate-manager.js';
import { systemClock, withWallTime } from './kube/clock.js';
import { EventRecorder } from './kube/events.js';
import { leaderElected } from './kube/operator-events.js';
import { KubeLeaseApi, LEASE_NAME, LeaderElector, leaderIdentity } from './kube/leader-election.js';
import { OwnerResolver } from './kube/owner.js';
import type { CertificatePolicy } from './certificates/tls-plan.js';
import type { OperatorOptions } from './config/options.js';
import { publishProblem, readinessReport, type HandshakeTarget, type ReadinessSources } from './readiness.js';
import { PeriodicAudit } from './audit/periodic-audit.js';
import { EnforcementTracker } from './store/enforcement-tracker.js';
import { StateStore } from './store/state-store.js';
import { ConfigurationReconciler } from './webhooks/configuration-reconciler.js';
import type { Endpoint } from './webhooks/desired-configurations.js';

/** The longest a certificate check may wait, so a renewal missed while suspended fires within a minute. */
const MAX_CHECK_INTERVAL_MS = 60_000;

/** What tests may replace: the wall clock (skew) and the webhooks served (entries of their own). */
export interface RunOverrides {
  clock?: () => Date;
  webhooks?: readonly WebhookEntry[];
}

export interface RunningOperator {
  port: number;
  /** The metrics port, when the metrics server runs. */
  metricsPort: number | undefined;
  metrics: OperatorMetrics;
  /**
   * Starts the drain before a stop: /readyz fails from now on (so endpoints drop this replica)
   * while reviews are still answered, each on a connection closed after its answer.
   */
  drain: () => void;
  /** Every watch lists again from scratch (SIGHUP). */
  relist: () => void;
  stop: () => Promise<void>;
}

function servingNames(
  options: OperatorOptions,
  endpoint: Endpoint,
): Pick<CertificatePolicy, 'dnsNames' | 'ipAddresses'> {
  const service = `${options.serviceName}.${options.namespace}.svc`;
  const dnsNames = [service, `${service}.cluster.local`];
  const ipAddresses: string[] = [];
  if (endpoint.mode === 'url') {
    dnsNames.push('localhost');
    ipAddresses.push('127.0.0.1');
    if (/^[\d.]+$/.test(endpoint.host) || endpoint.host.includes(':')) {
      if (!ipAddresses.includes(endpoint.host)) ipAddresses.push(endpoint.host);
    } else if (!dnsNames.includes(endpoint.host)) {
      dnsNames.push(endpoint.host);
    }
  }
  return { dnsNames, ipAddresses };
}

export async function runOperator(
  options: OperatorOptions,
  kubeConfig: KubeConfig,
  endpoint: Endpoint,
  logger: Logger,
  overrides: RunOverrides = {},
): Promise<RunningOperator> {
  // One registry for the process's /metrics: its own, the operator's and the admission server's.
  const registry = new Registry();
  registerProcessMetrics(registry, options.memoryLimitBytes);
  const metrics = operatorMetrics(registry);
  const admission = admissionMetrics(registry);
  // One clock for every loop, timer and reading of the time; a skewed wall clock moves what reads
  // the wall time (certificate validity, pods' deletion deadlines, timestamps), never a duration.
  const clock = overrides.clock ? withWallTime(overrides.clock) : systemClock;
  // The ConfigMaps the store watches and /validate-configmap checks.
  const configMaps = watchedConfigMaps(options.namespace, options.sloConfigNamespace, options.featureGates);
  // The GPU-class webhook's selectors follow the tier mapping, so the table is rebuilt when it changes.
  const buildWebhooks = (mapping: TierMapping): readonly WebhookEntry[] => {
    const context: TableContext = {
      namespace: options.namespace,
      excludedNamespaces: options.excludedNamespaces,
      tierLabelKey: mapping.namespaceLabelKey,
      gpuResourceNames: mapping.gpuResources,
      configMaps,
      koordinatorNamespace: options.sloConfigNamespace,
      gates: options.featureGates,
      overrides: options.webhookOverrides,
      maxAmplificationRatio: options.maxAmplificationRatio,
    };
    return overrides.webhooks ?? enabledWebhooks(context);
  };
  let webhooks = buildWebhooks(DEFAULT_TIER_MAPPING);

  const events = new EventRecorder(kubeConfig, logger, { clock });
  const store = new StateStore({
    kubeConfig,
    configMaps,
    tierMappingNamespace: options.namespace,
    logger,
    metrics,
    events,
    clock,
  });
  const enforcement = new EnforcementTracker(
    options.enforcement,
    webhookShortNames(),
    logger,
    metrics,
    events,
  );
  store.on('configMapChanged', (namespace, name) => {
    if (namespace === options.namespace && name === OPERATOR_CONFIG_NAME)
      enforcement.observe(store.configMap(namespace, name));
  });
  const owner = new OwnerResolver(kubeConfig, options.ownerClusterRole || undefined, logger);
  // Every replica serves; only the holder of the Lease writes the Secret and the configurations.
  const elector = new LeaderElector({
    identity: leaderIdentity(process.env),
    api: new KubeLeaseApi(kubeConfig, options.namespace, LEASE_NAME),
    timings: {
      leaseDurationMs: options.leaseDurationMs,
      renewDeadlineMs: options.renewDeadlineMs,
      retryPeriodMs: options.retryPeriodMs,
    },
    logger,
    ...(options.advertiseAddress ? { advertise: options.advertiseAddress } : {}),
    onTransition: (leading) => {
      metrics.leader.set(leading ? 1 : 0);
    },
    clock,
  });
  const isLeader = (): boolean => elector.isLeader();
  // Set once the admission server listens: until then nothing could answer a webhook.
  let listening = false;
  const configurations: ConfigurationReconciler = new ConfigurationReconciler({
    kubeConfig,
    webhooks: () => webhooks,
    endpoint,
    owner,
    logger,
    metrics,
    events,
    repairsAlsoOn: {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      namespace: options.namespace,
      name: LEASE_NAME,
    },
    isLeader,
    // The first write of a failurePolicy=Fail configuration must find someone to answer it:
    // this replica, with its certificate verifying against the bundle written and its caches synced.
    canPublish: (caBundlePem) => publishProblem(readiness, caBundlePem),
    clock,
  });
  store.on('tierMappingChanged', (mapping) => {
    webhooks = buildWebhooks(mapping);
    configurations.request();
  });
  const names = servingNames(options, endpoint);
  const handshakeTarget: HandshakeTarget = {
    host: ['0.0.0.0', '::'].includes(options.bindAddress) ? '127.0.0.1' : options.bindAddress,
    port: options.port,
    verifyName: endpoint.mode === 'url' ? endpoint.host : (names.dnsNames[0] ?? ''),
  };
  const readiness: ReadinessSources = {
    handshakeTarget,
    listening: () => listening,
    draining: () => server.isDraining,
    hasCertificate: () => server.certificate !== undefined,
    publishedCaBundle: () => configurations.publishedCaBundle(),
    storeUnsynced: () => store.unsynced(),
    configurationsSynced: () => configurations.synced,
    certificateSynced: () => certificates.synced,
  };
  const certificates: CertificateManager = new CertificateManager({
    kubeConfig,
    namespace: options.namespace,
    secretName: options.secretName,
    policy: {
      caLifetimeMs: options.caLifetimeMs,
      caRenewBeforeMs: options.caRenewBeforeMs,
      servingLifetimeMs: options.certLifetimeMs,
      servingRenewBeforeMs: options.certRenewBeforeMs,
      bundlePropagationMs: options.bundlePropagationMs,
      maxCheckIntervalMs: MAX_CHECK_INTERVAL_MS,
      ...names,
    },
    isPublished: (caPem) => configurations.isPublished(caPem),
    owner,
    logger,
    metrics,
    events,
    isLeader,
    clock,
  });
  elector.on('started', () => {
    leaderElected(events, { namespace: options.namespace, name: LEASE_NAME }, elector.identity);
    certificates.request();
    configurations.request();
  });
  // A newly published bundle may let a pending serving-certificate switch proceed.
  configurations.on('published', () => {
    certificates.request();
  });

  const audit =
    options.auditIntervalMs > 0
      ? new PeriodicAudit({
          intervalMs: options.auditIntervalMs,
          policyReports: options.auditPolicyReports,
          kubeConfig,
          store,
          webhooks: () => webhooks,
          configMaps,
          isLeader,
          events,
          metrics,
          logger,
          clock,
        })
      : undefined;
  const storeStarted = store.start().then(() => {
    logger.info('state store synced');
    configurations.request();
    audit?.start();
  });
  elector.start();
  await configurations.start();
  const material = await certificates.start();
  configurations.setCaBundle(material.caBundlePem);

  const forwarder = new QuotaForwarder({
    leaderAddress: () => elector.leaderAddress(),
    tls: () => {
      const ca = certificates.material?.caBundlePem;
      return ca ? { ca, verifyName: handshakeTarget.verifyName } : undefined;
    },
    onResult: (result, error) => {
      admission.quotaForwards.inc({ result });
      if (error) logger.debug({ err: error }, 'forwarding a quota admission to the leader failed');
    },
  });
  const server = new AdmissionHttpsServer(
    createAdmissionApp({
      webhooks: () => webhooks,
      state: () => store,
      readiness: () => readinessReport(readiness),
      metrics: admission,
      logger,
      enforcement: () => enforcement.enforcement,
      reserve: (reservation) => {
        store.reserve(reservation);
      },
      forward: (path, body, uid) => forwarder.forward(path, body, uid),
    }),
    logger,
    admission,
  );
  const port = await server.listen(options.port, options.bindAddress, {
    certificatePem: material.servingCertPem,
    privateKeyPem: material.servingKeyPem,
  });
  handshakeTarget.port = port;
  listening = true;
  configurations.request();
  const metricsServer = new MetricsServer({
    registry,
    logger,
    debug: { '/elasticQuota': () => store.quotaDebugView() },
  });
  const metricsPort = options.metricsAddress
    ? await metricsServer.listen(options.metricsAddress.port, options.metricsAddress.host)
    : undefined;
  certificates.on('material', (next) => {
    server.setCertificate({ certificatePem: next.servingCertPem, privateKeyPem: next.servingKeyPem });
    configurations.setCaBundle(next.caBundlePem);
  });
  storeStarted.catch((error: unknown) => {
    logger.error({ err: error }, 'state store failed to start');
  });

  return {
    port,
    metricsPort,
    metrics,
    drain: () => {
      server.drain();
    },
    relist: () => {
      store.relist();
    },
    stop: async () => {
      // Stop writing and hand the lease over at once, so a rolling restart does not wait for it
      // to expire; stop taking requests; a normal stop never deletes the webhook configurations.
      await Promise.all([elector.stop(), server.close(options.shutdownGraceMs), audit?.stop()]);
      forwarder.close();
      await Promise.all([metricsServer.close(), certificates.stop(), configurations.stop(), store.stop()]);
    },
  };
}
