/**
 * Keeps both `admission-operator` webhook configurations equal to what the table and the
 * current CA bundle say. It watches them and repairs any drift (a garbage, empty or old
 * caBundle, an edited rule, a removed entry, a deleted object) as soon as it is seen.
 *
 * Every replica watches them (readiness and the certificate rotation read what is published);
 * only the elected leader writes, and only while it could answer the webhooks itself
 * (`canPublish`), so a failurePolicy=Fail configuration is never published before some replica
 * can answer it. Writes are replaces guarded by resourceVersion, so a leader that lost the lease
 * a moment ago never overwrites its successor blindly. If something else keeps rewriting the
 * objects, repairs slow down exponentially instead of fighting at full speed, and the other
 * writers are named in the log.
 *
 * The entries follow the state (operator/webhooks/published-webhooks.ts): when what the webhooks
 * could act on changes, the stored objects no longer match and are rewritten. Such a write is a
 * "follow", not a repair: changes close in time are written together (FOLLOW_COALESCE_MS), and
 * follows are at least FOLLOW_INTERVAL_MS apart, so a burst of changes is a handful of writes.
 * A write is a follow when nobody else wrote the object since we did.
 */
import { EventEmitter } from 'node:events';
import {
  AdmissionregistrationV1Api,
  type KubeConfig,
  type V1MutatingWebhookConfiguration,
  type V1ValidatingWebhookConfiguration,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { WebhookEntry } from '../../webhook/table.js';
import type { OperatorMetrics } from '../metrics/operator-metrics.js';
import { systemClock, type Clock } from '../kube/clock.js';
import { ReconcileLoop } from '../kube/reconcile-loop.js';
import { SupervisedInformer } from '../kube/supervised-informer.js';
import { isConflict, isNotFound } from '../kube/errors.js';
import { abortAfter, API_CALL_TIMEOUT_MS } from '../kube/request-timeout.js';
import type { EventRecorder, EventTarget } from '../kube/events.js';
import { configurationRepaired, watchSilenceHandler } from '../kube/operator-events.js';
import { FIELD_MANAGER } from '../kube/leader-election.js';
import type { OwnerResolver } from '../kube/owner.js';
import {
  CONFIGURATION_NAME,
  desiredMutating,
  desiredValidating,
  findDrift,
  mergeOwnerReferences,
  ownerReferenceDrift,
  trustsCa,
  type Endpoint,
} from './desired-configurations.js';

type Configuration = V1MutatingWebhookConfiguration | V1ValidatingWebhookConfiguration;
type ConfigurationKind = 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration';

const FIGHT_WINDOW_MS = 60_000;
const FIGHT_THRESHOLD = 10;
const MAX_FIGHT_DELAY_MS = 30_000;
/** How soon a leader that cannot answer the webhooks yet looks again. */
const NOT_READY_RETRY_MS = 500;
/** How long a change of the state waits for the changes that come with it before it is written. */
export const FOLLOW_COALESCE_MS = 100;
/** The least time between two writes of one configuration that follow the state. */
export const FOLLOW_INTERVAL_MS = 500;

export interface ConfigurationReconcilerOptions {
  kubeConfig: KubeConfig;
  webhooks: () => readonly WebhookEntry[];
  endpoint: Endpoint;
  /**
   * The owner of both configurations (the chart's ClusterRole): deleting it lets the garbage
   * collector remove them, since one left pointing at a deleted Service with failurePolicy
   * Fail would block the cluster.
   */
  owner?: OwnerResolver;
  logger: Logger;
  metrics: OperatorMetrics;
  /** Where repairs are recorded as Events on the configuration. */
  events?: EventRecorder;
  /** An object in the operator's namespace (the leader's Lease) on which repairs are recorded too. */
  repairsAlsoOn?: EventTarget;
  /** True while this replica may write (it holds the lease); always, when omitted. */
  isLeader?: () => boolean;
  /**
   * Why this replica could not answer webhooks published with `caBundlePem` yet (certificate
   * not loaded, a handshake that does not verify against it, caches not synced), or undefined
   * when it could. Nothing is written until it can.
   */
  canPublish?: (caBundlePem: string) => Promise<string | undefined>;
  clock?: Clock;
  /** The replica's own Pod, where Events about its watches go. */
  selfPod?: { namespace: string; name: string };
}

export class ConfigurationReconciler extends EventEmitter<{ published: [] }> {
  private readonly api: AdmissionregistrationV1Api;
  private readonly mutating: SupervisedInformer<V1MutatingWebhookConfiguration>;
  private readonly validating: SupervisedInformer<V1ValidatingWebhookConfiguration>;
  private caBundlePem: string | undefined;
  private readonly loop: ReconcileLoop;
  private readonly clock: Clock;
  /** Monotonic times of recent repairs, to notice another writer fighting us. */
  private readonly recentRepairs: number[] = [];
  private notReadyLogged: string | undefined;
  /** The resourceVersion of our last write of each configuration. */
  private readonly written = new Map<ConfigurationKind, string>();
  /** Monotonic time of the last write of each configuration. */
  private readonly lastWrite = new Map<ConfigurationKind, number>();

  constructor(private readonly options: ConfigurationReconcilerOptions) {
    super();
    const { kubeConfig, logger, metrics } = options;
    this.api = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
    this.clock = options.clock ?? systemClock;
    const fieldSelector = `metadata.name=${CONFIGURATION_NAME}`;
    const onRestart = (kind: string): void => {
      metrics.informerRestarts.inc({ kind });
    };
    const onSilent = watchSilenceHandler(options);
    this.mutating = new SupervisedInformer(
      kubeConfig,
      {
        kind: 'mutatingwebhookconfigurations',
        path: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
        list: (bounded) => this.api.listMutatingWebhookConfiguration({ fieldSelector }, bounded),
        fieldSelector,
      },
      logger,
      onRestart,
      this.clock,
      onSilent,
    );
    this.validating = new SupervisedInformer(
      kubeConfig,
      {
        kind: 'validatingwebhookconfigurations',
        path: '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
        list: (bounded) => this.api.listValidatingWebhookConfiguration({ fieldSelector }, bounded),
        fieldSelector,
      },
      logger,
      onRestart,
      this.clock,
      onSilent,
    );
    metrics.informers.add(this.mutating);
    metrics.informers.add(this.validating);
    this.loop = new ReconcileLoop({
      reconcile: () => this.reconcileOnce(),
      onError: (error, retryInMs) => {
        logger.error({ err: error, retryInMs }, 'reconciling the webhook configurations failed; retrying');
      },
      watches: [this.mutating, this.validating],
      clock: this.clock,
    });
  }

  async start(): Promise<void> {
    await this.loop.start();
  }

  get synced(): boolean {
    return this.loop.synced;
  }

  /** Sets the CA bundle to publish and reconciles. */
  setCaBundle(caBundlePem: string): void {
    if (caBundlePem === this.caBundlePem) return;
    this.caBundlePem = caBundlePem;
    this.request();
  }

  /** True when both stored configurations trust `caPem` in every webhook. */
  isPublished(caPem: string): boolean {
    const mutating = this.mutating.get(CONFIGURATION_NAME);
    const validating = this.validating.get(CONFIGURATION_NAME);
    return (
      mutating !== undefined &&
      validating !== undefined &&
      trustsCa(mutating, caPem) &&
      trustsCa(validating, caPem)
    );
  }

  /** The caBundle the API server currently holds (from the first webhook that has one). */
  publishedCaBundle(): string | undefined {
    for (const configuration of [
      this.validating.get(CONFIGURATION_NAME),
      this.mutating.get(CONFIGURATION_NAME),
    ]) {
      const caBundle = configuration?.webhooks?.find((webhook) => webhook.clientConfig.caBundle)?.clientConfig
        .caBundle;
      if (caBundle) return Buffer.from(caBundle, 'base64').toString('utf8');
    }
    return undefined;
  }

  /**
   * What the entries derive from changed (a profile, a quota...): reconcile shortly, so the
   * changes that come with this one are written in the same pass.
   */
  follow(): void {
    if (this.caBundlePem !== undefined) this.loop.requeueAfter(FOLLOW_COALESCE_MS);
  }

  /** Runs a reconcile now, or right after the one in progress. */
  request(): void {
    if (this.caBundlePem !== undefined) this.loop.request();
  }

  private isLeader(): boolean {
    return this.options.isLeader?.() ?? true;
  }

  private async reconcileOnce(): Promise<void> {
    const caBundlePem = this.caBundlePem;
    if (caBundlePem === undefined) return;
    if (!this.isLeader()) {
      // Followers only watch; the published bundle may still let their rotation proceed.
      if (this.isPublished(caBundlePem)) this.emit('published');
      return;
    }
    const entries = this.options.webhooks();
    const owner = await this.options.owner?.reference();
    const owned = <T extends Configuration>(configuration: T): T =>
      owner
        ? { ...configuration, metadata: { ...configuration.metadata, ownerReferences: [owner] } }
        : configuration;
    const desired = [
      owned(desiredMutating(entries, this.options.endpoint, caBundlePem)),
      owned(desiredValidating(entries, this.options.endpoint, caBundlePem)),
    ] as const;
    const drifts = [
      this.driftOf('MutatingWebhookConfiguration', desired[0]),
      this.driftOf('ValidatingWebhookConfiguration', desired[1]),
    ];
    if (drifts.some((drift) => drift !== undefined)) {
      const problem = await this.options.canPublish?.(caBundlePem);
      if (problem !== undefined) {
        if (problem !== this.notReadyLogged) {
          this.options.logger.info(
            { problem },
            'not writing the webhook configurations until this replica can answer them',
          );
          this.notReadyLogged = problem;
        }
        this.loop.requeueAfter(NOT_READY_RETRY_MS);
        return;
      }
      this.notReadyLogged = undefined;
    }
    const results = await Promise.all([
      this.ensure('MutatingWebhookConfiguration', desired[0]),
      this.ensure('ValidatingWebhookConfiguration', desired[1]),
    ]);
    if (results.every((wrote) => !wrote) && this.isPublished(caBundlePem)) this.emit('published');
  }

  /** What differs between the stored configuration and `desired` ('absent' when there is none). */
  private driftOf(kind: ConfigurationKind, desired: Configuration): string | undefined {
    const informer = kind === 'MutatingWebhookConfiguration' ? this.mutating : this.validating;
    const actual = informer.get(CONFIGURATION_NAME);
    if (!actual) return 'absent';
    return (
      findDrift(desired.webhooks, actual.webhooks, 'webhooks') ??
      findDrift(desired.metadata?.labels, actual.metadata?.labels, 'metadata.labels') ??
      ownerReferenceDrift(desired.metadata?.ownerReferences?.[0], actual.metadata?.ownerReferences)
    );
  }

  /** Creates or repairs one configuration; resolves true when it wrote. */
  private async ensure(kind: ConfigurationKind, desired: Configuration): Promise<boolean> {
    const informer = kind === 'MutatingWebhookConfiguration' ? this.mutating : this.validating;
    const actual = informer.get(CONFIGURATION_NAME);
    const drift = this.driftOf(kind, desired);
    if (!drift) return false;
    // Checked right before each write: a replica that just lost the lease writes nothing more.
    if (!this.isLeader()) return false;
    if (!actual) {
      try {
        this.wrote(
          kind,
          kind === 'MutatingWebhookConfiguration'
            ? await this.api.createMutatingWebhookConfiguration(
                { body: desired, fieldManager: FIELD_MANAGER },
                abortAfter(API_CALL_TIMEOUT_MS),
              )
            : await this.api.createValidatingWebhookConfiguration(
                { body: desired, fieldManager: FIELD_MANAGER },
                abortAfter(API_CALL_TIMEOUT_MS),
              ),
        );
      } catch (error) {
        // Another replica created it first, or our cache lags: the watch event brings it.
        if (isConflict(error)) return false;
        throw error;
      }
      this.options.metrics.configurationRepairs.inc({ configuration: kind, action: 'create' });
      this.options.logger.info({ configuration: kind }, 'created webhook configuration');
      return true;
    }

    // Only we wrote it since our last write: the entries moved with the state, nobody is fighting.
    const following =
      actual.metadata?.resourceVersion === this.written.get(kind) ||
      (actual.metadata?.managedFields ?? []).every((field) => field.manager === FIELD_MANAGER);
    if (following) {
      const wait = (this.lastWrite.get(kind) ?? -Infinity) + FOLLOW_INTERVAL_MS - this.clock.monotonic();
      if (wait > 0) {
        this.loop.requeueAfter(wait);
        return false;
      }
    }
    const delay = following ? 0 : this.fightDelay();
    if (delay > 0) {
      const writers = [
        ...new Set((actual.metadata?.managedFields ?? []).map((field) => field.manager ?? '?')),
      ];
      this.options.logger.warn(
        { configuration: kind, drift, writers, retryInMs: delay },
        'the webhook configuration keeps being changed by another writer; slowing down repairs',
      );
      this.loop.requeueAfter(delay);
      return false;
    }

    const body = {
      ...desired,
      metadata: {
        ...actual.metadata,
        labels: { ...(actual.metadata?.labels ?? {}), ...(desired.metadata?.labels ?? {}) },
        ownerReferences: mergeOwnerReferences(
          desired.metadata?.ownerReferences?.[0],
          actual.metadata?.ownerReferences,
        ),
        managedFields: undefined,
      },
    };
    let stored: Configuration;
    try {
      stored =
        kind === 'MutatingWebhookConfiguration'
          ? await this.api.replaceMutatingWebhookConfiguration(
              { name: CONFIGURATION_NAME, body: body, fieldManager: FIELD_MANAGER },
              abortAfter(API_CALL_TIMEOUT_MS),
            )
          : await this.api.replaceValidatingWebhookConfiguration(
              { name: CONFIGURATION_NAME, body: body, fieldManager: FIELD_MANAGER },
              abortAfter(API_CALL_TIMEOUT_MS),
            );
    } catch (error) {
      // A newer version exists (our cache lags, or another replica repaired it): the watch event re-runs us.
      if (isConflict(error) || isNotFound(error)) return false;
      throw error;
    }
    this.wrote(kind, stored);
    if (following) {
      this.options.metrics.configurationRepairs.inc({ configuration: kind, action: 'follow' });
      this.options.logger.info(
        { configuration: kind, drift },
        'updated webhook configuration to follow the state',
      );
      return true;
    }
    this.recentRepairs.push(this.clock.monotonic());
    this.options.metrics.configurationRepairs.inc({ configuration: kind, action: 'repair' });
    configurationRepaired(this.options.events, kind, actual, drift, this.options.repairsAlsoOn);
    this.options.logger.info({ configuration: kind, drift }, 'repaired webhook configuration');
    return true;
  }

  private wrote(kind: ConfigurationKind, stored: Configuration): void {
    this.lastWrite.set(kind, this.clock.monotonic());
    const version = stored.metadata?.resourceVersion;
    if (version !== undefined) this.written.set(kind, version);
  }

  /** 0 normally; a growing delay while repairs exceed FIGHT_THRESHOLD a minute. */
  private fightDelay(): number {
    const now = this.clock.monotonic();
    while (this.recentRepairs.length > 0 && (this.recentRepairs[0] ?? now) < now - FIGHT_WINDOW_MS) {
      this.recentRepairs.shift();
    }
    const excess = this.recentRepairs.length - FIGHT_THRESHOLD;
    if (excess < 0) return 0;
    const last = this.recentRepairs[this.recentRepairs.length - 1] ?? now;
    const wait = Math.min(1000 * 2 ** excess, MAX_FIGHT_DELAY_MS);
    return Math.max(0, last + wait - now);
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }
}
