/**
 * Keeps the `webhook-tls` Secret holding a valid CA bundle and serving certificate, and
 * tells the server and the configuration writer what to use.
 *
 * Every replica runs it and serves what the Secret holds; only the elected leader writes it
 * (`isLeader`). A follower never plans a change: it takes the Secret as it is when it can be
 * served, and otherwise waits for the leader. Writes are still guarded by resourceVersion
 * (create: AlreadyExists means someone else won, so re-read; update: Conflict means the same),
 * so a leader that lost the lease a moment ago cannot overwrite its successor blindly.
 */
import { EventEmitter } from 'node:events';
import { CoreV1Api, type KubeConfig, type V1Secret } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { OperatorMetrics } from '../metrics/operator-metrics.js';
import { systemClock, type Clock } from '../kube/clock.js';
import { ReconcileLoop } from '../kube/reconcile-loop.js';
import { isConflict, isNotFound } from '../kube/errors.js';
import { abortAfter, API_CALL_TIMEOUT_MS } from '../kube/request-timeout.js';
import type { EventRecorder } from '../kube/events.js';
import { certificateWritten, watchSilenceHandler } from '../kube/operator-events.js';
import type { OwnerResolver } from '../kube/owner.js';
import { SupervisedInformer } from '../kube/supervised-informer.js';
import { FIELD_MANAGER } from '../kube/leader-election.js';
import {
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  TLS_SECRET_TYPE,
  planSecretWithKeys,
  servableSecret,
  type CertificatePolicy,
  type SecretPlan,
  type ServingMaterial,
  type StoredSecret,
  type TlsSecretData,
} from './tls-plan.js';
import { parseCertificate, splitPemCertificates } from './x509.js';
import { KINDS } from '../../webhook/kinds.js';

export interface CertificateManagerOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  secretName: string;
  policy: CertificatePolicy;
  /** True when both webhook configurations trust the CA. */
  isPublished: (caPem: string) => boolean;
  logger: Logger;
  metrics: OperatorMetrics;
  clock?: Clock;
  /** The owner of the Secret (the chart's ClusterRole), so an uninstall removes it. */
  owner?: OwnerResolver;
  /** Where certificates issued and rotated are recorded as Events on the Secret. */
  events?: EventRecorder;
  /** True while this replica may write the Secret (it holds the lease); always, when omitted. */
  isLeader?: () => boolean;
  /** The replica's own Pod, where Events about its watch go. */
  selfPod?: { namespace: string; name: string };
}

const MAX_WRITE_ATTEMPTS = 8;

function decode(data: Record<string, string> | undefined): Record<string, string> {
  const decoded: Record<string, string> = {};
  for (const [key, value] of Object.entries(data ?? {}))
    decoded[key] = Buffer.from(value, 'base64').toString('utf8');
  return decoded;
}

function stored(secret: V1Secret): StoredSecret {
  return {
    type: secret.type ?? 'Opaque',
    managed: secret.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY_VALUE,
    data: decode(secret.data),
    annotations: secret.metadata?.annotations ?? {},
  };
}

export class CertificateManager extends EventEmitter<{ material: [ServingMaterial] }> {
  private readonly core: CoreV1Api;
  private readonly informer: SupervisedInformer<V1Secret>;
  private readonly clock: Clock;
  private current: ServingMaterial | undefined;
  private remembered: TlsSecretData | undefined;
  private readonly loop: ReconcileLoop;

  constructor(private readonly options: CertificateManagerOptions) {
    super();
    this.clock = options.clock ?? systemClock;
    this.core = options.kubeConfig.makeApiClient(CoreV1Api);
    const fieldSelector = `metadata.name=${options.secretName}`;
    this.informer = new SupervisedInformer(
      options.kubeConfig,
      {
        kind: KINDS.secret.plural,
        path: `/api/${KINDS.secret.version}/namespaces/${options.namespace}/${KINDS.secret.plural}`,
        list: (bounded) =>
          this.core.listNamespacedSecret({ namespace: options.namespace, fieldSelector }, bounded),
        fieldSelector,
      },
      options.logger,
      (kind) => {
        options.metrics.informerRestarts.inc({ kind });
      },
      this.clock,
      watchSilenceHandler(options),
    );
    options.metrics.informers.add(this.informer);
    this.loop = new ReconcileLoop({
      reconcile: () => this.reconcile(),
      onError: (error, retryInMs) => {
        options.metrics.certificateReconcileErrors.inc();
        options.logger.error({ err: error, retryInMs }, 'certificate reconcile failed; retrying');
      },
      watches: [this.informer],
      clock: this.clock,
    });
  }

  /** The material in use, once the first reconcile has succeeded. */
  get material(): ServingMaterial | undefined {
    return this.current;
  }

  get synced(): boolean {
    return this.loop.synced;
  }

  /** Starts watching and resolves with the first usable material. */
  async start(): Promise<ServingMaterial> {
    await this.loop.start();
    // Becoming the leader may have run a reconcile already, so the material may be here.
    if (this.current) return this.current;
    return new Promise<ServingMaterial>((resolvePromise) => {
      this.once('material', resolvePromise);
    });
  }

  /** Reconciles now, or right after the reconcile in progress. */
  request(): void {
    this.loop.request();
  }

  private async read(): Promise<V1Secret | undefined> {
    try {
      return await this.core.readNamespacedSecret(
        { name: this.options.secretName, namespace: this.options.namespace },
        abortAfter(API_CALL_TIMEOUT_MS),
      );
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  private isLeader(): boolean {
    return this.options.isLeader?.() ?? true;
  }

  /** A follower serves the Secret as it is, or waits for the leader to make it servable. */
  private async follow(): Promise<void> {
    const secret = await this.read();
    const now = this.clock.now();
    const servable = secret ? servableSecret(stored(secret), this.options.policy, now) : 'it does not exist';
    if (typeof servable === 'string') {
      this.options.logger.debug(
        { problem: servable },
        'webhook-tls cannot be served yet; waiting for the leader',
      );
      this.schedule(new Date(now.getTime() + this.options.policy.maxCheckIntervalMs));
      return;
    }
    if (secret?.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY_VALUE) {
      // Should this replica lead later and find the Secret deleted, it restores this CA.
      this.remembered = { ...(decode(secret.data) as TlsSecretData) };
    }
    this.publish(servable.material);
    this.schedule(servable.nextCheckAt);
  }

  private async reconcile(): Promise<void> {
    if (!this.isLeader()) {
      await this.follow();
      return;
    }
    for (let attempt = 1; attempt <= MAX_WRITE_ATTEMPTS; attempt++) {
      const secret = await this.read();
      // Any key this needs is generated off the event loop, so serving goes on meanwhile.
      const plan = await planSecretWithKeys({
        stored: secret ? stored(secret) : undefined,
        policy: this.options.policy,
        now: this.clock.now(),
        isPublished: this.options.isPublished,
        remembered: this.remembered,
      });
      const write = plan.kind === 'write' ? plan : await this.ownerMissing(secret, plan);
      if (!write) {
        if (plan.kind === 'unchanged') this.remembered = { ...(decode(secret?.data) as TlsSecretData) };
        this.publish(plan.material);
        this.schedule(plan.nextCheckAt);
        return;
      }
      if (!this.isLeader()) {
        await this.follow();
        return;
      }
      if (await this.write(secret, write)) {
        for (const certificate of write.issued)
          this.options.metrics.certificateRotations.inc({ certificate });
        this.options.logger.info(
          { mode: write.mode, issued: write.issued, reasons: write.reasons },
          'wrote webhook-tls',
        );
        certificateWritten(
          this.options.events,
          { namespace: this.options.namespace, name: this.options.secretName },
          write,
        );
        this.remembered = write.data;
        this.publish(write.material);
        this.schedule(write.nextCheckAt);
        return;
      }
      this.options.logger.debug({ attempt }, 'webhook-tls changed under us; re-reading');
    }
    throw new Error(`could not write Secret ${this.options.secretName} after ${MAX_WRITE_ATTEMPTS} attempts`);
  }

  /**
   * A managed Secret written before an owner was configured gets it added (same content), so an
   * uninstall still removes it. Undefined when nothing needs writing.
   */
  private async ownerMissing(
    secret: V1Secret | undefined,
    plan: Exclude<SecretPlan, { kind: 'write' }>,
  ): Promise<Extract<SecretPlan, { kind: 'write' }> | undefined> {
    if (plan.kind !== 'unchanged' || !secret) return undefined;
    const owner = await this.options.owner?.reference();
    if (!owner || (secret.metadata?.ownerReferences ?? []).some((ref) => ref.uid === owner.uid))
      return undefined;
    return {
      kind: 'write',
      mode: 'update',
      data: decode(secret.data) as TlsSecretData,
      annotations: {},
      material: plan.material,
      issued: [],
      reasons: ['adding the owner reference'],
      nextCheckAt: plan.nextCheckAt,
    };
  }

  /** Writes the planned Secret; false when another writer got there first. */
  private async write(
    existing: V1Secret | undefined,
    plan: Extract<SecretPlan, { kind: 'write' }>,
  ): Promise<boolean> {
    const { namespace, secretName: name } = this.options;
    const owner = await this.options.owner?.reference();
    const ownerReferences = owner
      ? [...(existing?.metadata?.ownerReferences ?? []).filter((ref) => ref.uid !== owner.uid), owner]
      : existing?.metadata?.ownerReferences;
    const body: V1Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      type: TLS_SECRET_TYPE,
      metadata: {
        name,
        namespace,
        labels: { ...(existing?.metadata?.labels ?? {}), [MANAGED_BY_LABEL]: MANAGED_BY_VALUE },
        annotations: { ...(existing?.metadata?.annotations ?? {}), ...plan.annotations },
        ...(ownerReferences ? { ownerReferences } : {}),
      },
      data: Object.fromEntries(
        Object.entries(plan.data).map(([key, value]) => [key, Buffer.from(value).toString('base64')]),
      ),
    };
    try {
      if (plan.mode === 'update' && existing) {
        body.metadata = { ...body.metadata, resourceVersion: existing.metadata?.resourceVersion };
        await this.core.replaceNamespacedSecret(
          { name, namespace, body, fieldManager: FIELD_MANAGER },
          abortAfter(API_CALL_TIMEOUT_MS),
        );
      } else {
        if (plan.mode === 'recreate' && existing) {
          // The type is immutable: delete exactly the version we read, then create.
          await this.core.deleteNamespacedSecret(
            {
              name,
              namespace,
              body: { preconditions: { resourceVersion: existing.metadata?.resourceVersion } },
            },
            abortAfter(API_CALL_TIMEOUT_MS),
          );
        }
        await this.core.createNamespacedSecret(
          { namespace, body, fieldManager: FIELD_MANAGER },
          abortAfter(API_CALL_TIMEOUT_MS),
        );
      }
      return true;
    } catch (error) {
      if (isConflict(error) || isNotFound(error)) return false;
      throw error;
    }
  }

  private publish(material: ServingMaterial): void {
    const changed =
      this.current?.servingCertPem !== material.servingCertPem ||
      this.current.servingKeyPem !== material.servingKeyPem ||
      this.current.caBundlePem !== material.caBundlePem;
    this.current = material;
    this.recordExpiries(material);
    if (changed) this.emit('material', material);
  }

  private recordExpiries(material: ServingMaterial): void {
    const gauge = this.options.metrics.certificateNotAfter;
    gauge.reset();
    const serving = parseCertificate(material.servingCertPem);
    if (serving) {
      gauge.set({ certificate: 'serving', serial: serving.serialNumber }, Date.parse(serving.validTo) / 1000);
    }
    for (const pem of splitPemCertificates(material.caBundlePem)) {
      const ca = parseCertificate(pem);
      if (ca) gauge.set({ certificate: 'ca', serial: ca.serialNumber }, Date.parse(ca.validTo) / 1000);
    }
  }

  /** Looks again at `at`, or within the policy's longest check interval if that comes first. */
  private schedule(at: Date): void {
    this.loop.requeueAfter(
      Math.min(at.getTime() - this.clock.now().getTime(), this.options.policy.maxCheckIntervalMs),
    );
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }
}
