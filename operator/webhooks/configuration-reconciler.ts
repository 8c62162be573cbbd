/**
 * Keeps both `admission-operator` webhook configurations equal to what the table and the
 * current CA bundle say. It watches them and repairs any drift (a garbage, empty or old
 * caBundle, an edited rule, a removed entry, a deleted object) as soon as it is seen.
 *
 * Writes are replaces guarded by resourceVersion, so two replicas never overwrite each other
 * blindly. If something else keeps rewriting the objects, repairs slow down exponentially
 * instead of fighting at full speed, and the other writers are named in the log.
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
import type { OperatorMetrics } from '../../webhook/metrics/operator-metrics.js';
import { CoalescingRunner } from '../kube/coalescing-runner.js';
import { SupervisedInformer } from '../kube/supervised-informer.js';
import { isConflict, isNotFound } from '../kube/errors.js';
import type { EventRecorder } from '../kube/events.js';
import { configurationRepaired } from '../kube/operator-events.js';
import type { OwnerResolver } from '../kube/owner.js';
import {
  CONFIGURATION_NAME,
  desiredMutating,
  desiredValidating,
  findDrift,
  trustsCa,
  type Endpoint,
} from './desired-configurations.js';

type Configuration = V1MutatingWebhookConfiguration | V1ValidatingWebhookConfiguration;
type ConfigurationKind = 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration';

const FIGHT_WINDOW_MS = 60_000;
const FIGHT_THRESHOLD = 10;
const MAX_FIGHT_DELAY_MS = 30_000;

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
}

export class ConfigurationReconciler extends EventEmitter<{ published: [] }> {
  private readonly api: AdmissionregistrationV1Api;
  private readonly mutating: SupervisedInformer<V1MutatingWebhookConfiguration>;
  private readonly validating: SupervisedInformer<V1ValidatingWebhookConfiguration>;
  private caBundlePem: string | undefined;
  private readonly runner: CoalescingRunner;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly recentRepairs: number[] = [];
  private stopped = false;

  constructor(private readonly options: ConfigurationReconcilerOptions) {
    super();
    const { kubeConfig, logger, metrics } = options;
    this.api = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
    this.runner = new CoalescingRunner(
      () => this.reconcileOnce(),
      (error) => {
        logger.error({ err: error }, 'reconciling the webhook configurations failed; retrying');
        this.retryLater(1000);
      },
    );
    const fieldSelector = `metadata.name=${CONFIGURATION_NAME}`;
    const onRestart = (kind: string): void => {
      metrics.informerRestarts.inc({ kind });
    };
    this.mutating = new SupervisedInformer(
      kubeConfig,
      {
        kind: 'mutatingwebhookconfigurations',
        path: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
        list: () => this.api.listMutatingWebhookConfiguration({ fieldSelector }),
        fieldSelector,
      },
      logger,
      onRestart,
    );
    this.validating = new SupervisedInformer(
      kubeConfig,
      {
        kind: 'validatingwebhookconfigurations',
        path: '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
        list: () => this.api.listValidatingWebhookConfiguration({ fieldSelector }),
        fieldSelector,
      },
      logger,
      onRestart,
    );
    for (const informer of [this.mutating, this.validating]) {
      for (const event of ['add', 'update', 'delete'] as const) {
        informer.on(event, () => {
          this.request();
        });
      }
    }
  }

  async start(): Promise<void> {
    await Promise.all([this.mutating.start(), this.validating.start()]);
    this.request();
  }

  get synced(): boolean {
    return this.mutating.synced && this.validating.synced;
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

  /** Runs a reconcile now, or right after the one in progress. */
  request(): void {
    if (this.caBundlePem !== undefined) this.runner.request();
  }

  private retryLater(delayMs: number): void {
    if (this.retryTimer || this.stopped) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.request();
    }, delayMs);
  }

  private async reconcileOnce(): Promise<void> {
    const caBundlePem = this.caBundlePem;
    if (caBundlePem === undefined) return;
    const entries = this.options.webhooks();
    const owner = await this.options.owner?.reference();
    const owned = <T extends Configuration>(configuration: T): T =>
      owner
        ? { ...configuration, metadata: { ...configuration.metadata, ownerReferences: [owner] } }
        : configuration;
    const results = await Promise.all([
      this.ensure(
        'MutatingWebhookConfiguration',
        owned(desiredMutating(entries, this.options.endpoint, caBundlePem)),
      ),
      this.ensure(
        'ValidatingWebhookConfiguration',
        owned(desiredValidating(entries, this.options.endpoint, caBundlePem)),
      ),
    ]);
    if (results.every((wrote) => !wrote) && this.isPublished(caBundlePem)) this.emit('published');
  }

  /** Creates or repairs one configuration; resolves true when it wrote. */
  private async ensure(kind: ConfigurationKind, desired: Configuration): Promise<boolean> {
    const informer = kind === 'MutatingWebhookConfiguration' ? this.mutating : this.validating;
    const actual = informer.get(CONFIGURATION_NAME);
    if (!actual) {
      try {
        if (kind === 'MutatingWebhookConfiguration') {
          await this.api.createMutatingWebhookConfiguration({
            body: desired,
          });
        } else {
          await this.api.createValidatingWebhookConfiguration({
            body: desired,
          });
        }
      } catch (error) {
        // Another replica created it first, or our cache lags: the watch event brings it.
        if (isConflict(error)) return false;
        throw error;
      }
      this.options.metrics.configurationRepairs.inc({ configuration: kind, action: 'create' });
      this.options.logger.info({ configuration: kind }, 'created webhook configuration');
      return true;
    }

    const drift =
      findDrift(desired.webhooks, actual.webhooks, 'webhooks') ??
      findDrift(desired.metadata?.labels, actual.metadata?.labels, 'metadata.labels') ??
      findDrift(
        desired.metadata?.ownerReferences,
        actual.metadata?.ownerReferences,
        'metadata.ownerReferences',
      );
    if (!drift) return false;

    const delay = this.fightDelay();
    if (delay > 0) {
      const writers = [
        ...new Set((actual.metadata?.managedFields ?? []).map((field) => field.manager ?? '?')),
      ];
      this.options.logger.warn(
        { configuration: kind, drift, writers, retryInMs: delay },
        'the webhook configuration keeps being changed by another writer; slowing down repairs',
      );
      this.retryLater(delay);
      return false;
    }

    const body = {
      ...desired,
      metadata: {
        ...actual.metadata,
        labels: { ...(actual.metadata?.labels ?? {}), ...(desired.metadata?.labels ?? {}) },
        ...(desired.metadata?.ownerReferences ? { ownerReferences: desired.metadata.ownerReferences } : {}),
        managedFields: undefined,
      },
    };
    try {
      if (kind === 'MutatingWebhookConfiguration') {
        await this.api.replaceMutatingWebhookConfiguration({
          name: CONFIGURATION_NAME,
          body: body,
        });
      } else {
        await this.api.replaceValidatingWebhookConfiguration({
          name: CONFIGURATION_NAME,
          body: body,
        });
      }
    } catch (error) {
      // A newer version exists (our cache lags, or another replica repaired it): the watch event re-runs us.
      if (isConflict(error) || isNotFound(error)) return false;
      throw error;
    }
    this.recentRepairs.push(Date.now());
    this.options.metrics.configurationRepairs.inc({ configuration: kind, action: 'repair' });
    configurationRepaired(this.options.events, kind, actual, drift);
    this.options.logger.info({ configuration: kind, drift }, 'repaired webhook configuration');
    return true;
  }

  /** 0 normally; a growing delay while repairs exceed FIGHT_THRESHOLD a minute. */
  private fightDelay(): number {
    const now = Date.now();
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
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await Promise.all([this.mutating.stop(), this.validating.stop(), this.runner.stop()]);
  }
}
