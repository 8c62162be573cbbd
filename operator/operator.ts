/**
 * Wires the operator together: the state store, the certificate manager, the configuration
 * reconciler and the admission server, and the readiness check that joins them. What each part
 * does lives in its own module; the order they start and stop in, in lifecycle.ts.
 */
import { hostname } from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import { replaceResourcesCounted } from '../webhook/feature-gates.js';
import type { Logger } from 'pino';
import { OPERATOR_CONFIG_NAME, watchedConfigMaps } from '../webhook/names.js';
import { createAdmissionApp } from '../webhook/server/app.js';
import { LEASE_IN_DOUBT_WAIT_MS, QuotaAuthority } from '../webhook/server/quota-authority.js';
import { QuotaForwarder } from '../webhook/server/quota-forwarder.js';
import { ReservationJournal } from '../webhook/server/reservation-journal.js';
import { CallerVerifier } from '../webhook/server/caller-verification.js';
import { AdmissionHttpsServer } from '../webhook/server/https-server.js';
import { MetricsServer } from '../webhook/server/metrics-server.js';
import type { OperatorMetrics } from './metrics/operator-metrics.js';
import { processRegistry } from './metrics/process-registry.js';
import { enforceableNames, type WebhookEntry } from '../webhook/table.js';
import { AdmissionTls } from './certificates/admission-tls.js';
import { CertificateManager } from './certificates/certificate-manager.js';
import { certificatePolicy, verifiedName } from './certificates/certificate-policy.js';
import { systemClock, withWallTime } from './kube/clock.js';
import { EventRecorder } from './kube/events.js';
import { TokenReviews, tokenReviewer } from './kube/token-reviews.js';
import { leaderElected } from './kube/operator-events.js';
import { KubeLeaseApi, LEASE_NAME, LeaderElector, leaderIdentity } from './kube/leader-election.js';
import { OwnerResolver } from './kube/owner.js';
import type { OperatorOptions } from './config/options.js';
import { startInOrder, stopInOrder, type OperatorParts } from './lifecycle.js';
import { handshakeTarget, publishProblem, readinessReport, type ReadinessSources } from './readiness.js';
import { PeriodicAudit } from './audit/periodic-audit.js';
import { EnforcementTracker } from './store/enforcement-tracker.js';
import { StateStore } from './store/state-store.js';
import { ConfigurationReconciler } from './webhooks/configuration-reconciler.js';
import type { Endpoint } from './webhooks/desired-configurations.js';
import { ServedWebhooks } from './webhooks/served-webhooks.js';
import { PublishedWebhooks } from './webhooks/published-webhooks.js';

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

export async function runOperator(
  options: OperatorOptions,
  kubeConfig: KubeConfig,
  endpoint: Endpoint,
  logger: Logger,
  overrides: RunOverrides = {},
): Promise<RunningOperator> {
  const { registry, metrics, admission } = processRegistry(options.memoryLimitBytes);
  // One clock for every loop, timer and reading of the time; a skewed wall clock moves what reads
  // the wall time (certificate validity, pods' deletion deadlines, timestamps), never a duration.
  const clock = overrides.clock ? withWallTime(overrides.clock) : systemClock;
  // The ConfigMaps the store watches and /validate-configmap checks.
  const configMaps = watchedConfigMaps(options.namespace, options.sloConfigNamespace, options.featureGates);
  const webhooks = new ServedWebhooks(options, configMaps, overrides.webhooks);
  const events = new EventRecorder(kubeConfig, logger, { clock });
  // The replica's own Pod, where every watch replaced for silence is recorded.
  const selfPod = { namespace: options.namespace, name: process.env.POD_NAME || hostname() };
  // What the store and the loops all take.
  const shared = { kubeConfig, logger, metrics, events, clock, selfPod };
  const store = new StateStore({
    ...shared,
    configMaps,
    tierMappingNamespace: options.namespace,
    replaceResources: replaceResourcesCounted(options.featureGates),
  });
  const enforcement = new EnforcementTracker(
    options.enforcement,
    enforceableNames(),
    logger,
    metrics,
    events,
  );
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
  const policy = certificatePolicy(options, endpoint);
  // Its port is the bound one once the server listens (options.port may be 0).
  const selfCheck = handshakeTarget(options.bindAddress, options.port, verifiedName(policy, endpoint));
  // Set once the admission server listens: until then nothing could answer a webhook.
  let listening = false;
  const readiness: ReadinessSources = {
    handshakeTarget: selfCheck,
    listening: () => listening,
    draining: () => server.isDraining,
    hasCertificate: () => server.certificate !== undefined,
    publishedCaBundle: () => configurations.publishedCaBundle(),
    storeUnsynced: () => store.unsynced(),
    kindsNotInstalled: () => store.kindsNotInstalled(),
    configurationsSynced: () => configurations.synced,
    certificateSynced: () => certificates.synced,
  };
  // What the configurations hold: the table narrowed to what its webhooks could act on now.
  const published = new PublishedWebhooks(webhooks.entries, store);
  const configurations: ConfigurationReconciler = new ConfigurationReconciler({
    ...shared,
    webhooks: published.entries,
    endpoint,
    owner,
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
  });
  const certificates: CertificateManager = new CertificateManager({
    ...shared,
    namespace: options.namespace,
    secretName: options.secretName,
    policy,
    isPublished: (caPem) => configurations.isPublished(caPem),
    owner,
    isLeader,
  });
  const audit =
    options.auditIntervalMs > 0
      ? new PeriodicAudit({
          ...shared,
          intervalMs: options.auditIntervalMs,
          policyReports: options.auditPolicyReports,
          chunkSize: options.auditChunkSize,
          store,
          webhooks: webhooks.entries,
          configMaps,
          isLeader,
        })
      : undefined;
  const { clientVerification } = options;
  const tls = new AdmissionTls({ clientCaFile: clientVerification.caFile, clock, logger });
  const tokenReviews =
    clientVerification.tokenUsers.length > 0
      ? new TokenReviews(
          tokenReviewer(kubeConfig),
          (user) => clientVerification.tokenUsers.includes(user),
          clock,
          logger,
        )
      : undefined;
  const callers = new CallerVerifier({
    policy: clientVerification,
    replicaCas: () => tls.replicaCas(),
    ...(tokenReviews ? { reviewToken: (token: string) => tokenReviews.verdict(token) } : {}),
  });
  if (clientVerification.trustNetwork) {
    logger.info(
      'every caller reaching the admission port is taken as the API server (--trust-network-callers): only a NetworkPolicy makes that true',
    );
  }
  const authority = new QuotaAuthority({
    leads: isLeader,
    leaderAddress: () => elector.leaderAddress(),
    takenOverFrom: () => elector.takenOverFrom(),
    leaseInDoubt: () => elector.leaseInDoubt(LEASE_IN_DOUBT_WAIT_MS),
    ...(options.advertiseAddress ? { advertise: options.advertiseAddress } : {}),
  });
  const forwarder = new QuotaForwarder({
    target: () => authority.target(),
    beforeDecidingAlone: () => authority.beforeDecidingAlone(),
    onSuccessor: (from, to) => {
      if (authority.redirected(from, to))
        logger.info(
          { from, to },
          'the leader this replica last read handed quota decisions over: forwarding to its successor',
        );
    },
    onHandoverEnded: (answered) => {
      authority.handoverEnded();
      if (answered) logger.info('the previous leader handed quota decisions over');
      else
        logger.warn(
          'the previous leader did not answer the handover: deciding quota without its latest admissions',
        );
    },
    tls: () => {
      const ca = certificates.material?.caBundlePem;
      const own = tls.replicaCertificate();
      return ca && own ? { ca, verifyName: selfCheck.verifyName, ...own } : undefined;
    },
    onResult: (result, error) => {
      admission.quotaForwards.inc({ result });
      if (error) logger.debug({ err: error }, 'forwarding a quota admission to the leader failed');
    },
    onBatch: (reviews) => {
      admission.quotaForwardBatches.observe({ side: 'sent' }, reviews);
    },
    // The leader decides here by design; any other replica deciding here is a second decider.
    onNoTarget: () => {
      if (!elector.isLeader()) admission.quotaDecidedWithoutLeader.inc();
    },
    // Held on the leader's behalf until the pod watch delivers their pods (or they settle).
    onReservations: (reservations) => {
      for (const reservation of reservations) store.reserve(reservation);
      admission.quotaJournalReservations.inc(reservations.length);
    },
  });
  const server = new AdmissionHttpsServer(
    createAdmissionApp({
      webhooks: webhooks.entries,
      state: () => store,
      readiness: () => readinessReport(readiness),
      metrics: admission,
      logger,
      enforcement: () => enforcement.enforcement,
      reserve: (reservation) => {
        store.reserve(reservation);
      },
      forward: (path, body, uid) => forwarder.forward(path, body, uid),
      authority,
      journal: new ReservationJournal(),
      callers,
    }),
    logger,
    admission,
  );
  const metricsServer = new MetricsServer({
    registry,
    logger,
    debug: { '/elasticQuota': () => store.quotaDebugView() },
  });

  store.on('configMapChanged', (namespace, name) => {
    if (namespace === options.namespace && name === OPERATOR_CONFIG_NAME)
      enforcement.observe(store.configMap(namespace, name));
  });
  store.on('tierMappingChanged', (mapping) => {
    webhooks.follow(mapping);
    configurations.request();
  });
  store.on('reachChanged', () => {
    configurations.follow();
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

  const parts: OperatorParts = {
    store,
    elector,
    configurations,
    certificates,
    audit,
    forwarder,
    tls,
    server,
    metricsServer,
  };
  const { port, metricsPort } = await startInOrder(parts, options, logger, (bound) => {
    selfCheck.port = bound;
    listening = true;
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
    stop: () => stopInOrder(parts, options.shutdownGraceMs),
  };
}
