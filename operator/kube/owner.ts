/**
 * The cluster-scoped object that owns what the operator creates outside Helm's knowledge
 * (both webhook configurations and the webhook-tls Secret): the chart's ClusterRole. When
 * `helm uninstall` deletes it, the garbage collector removes them all.
 */
import { RbacAuthorizationV1Api, type KubeConfig, type V1OwnerReference } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { isNotFound } from './errors.js';
import { abortAfter, API_CALL_TIMEOUT_MS } from './request-timeout.js';

export class OwnerResolver {
  private readonly rbac: RbacAuthorizationV1Api;
  private owner: V1OwnerReference | undefined;

  constructor(
    kubeConfig: KubeConfig,
    private readonly clusterRole: string | undefined,
    private readonly logger: Logger,
  ) {
    this.rbac = kubeConfig.makeApiClient(RbacAuthorizationV1Api);
  }

  /** The owner reference to write (looked up once); undefined when none is configured or it is missing. */
  async reference(): Promise<V1OwnerReference | undefined> {
    if (!this.clusterRole || this.owner) return this.owner;
    try {
      const role = await this.rbac.readClusterRole(
        { name: this.clusterRole },
        abortAfter(API_CALL_TIMEOUT_MS),
      );
      this.owner = {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        name: this.clusterRole,
        uid: role.metadata?.uid ?? '',
        blockOwnerDeletion: false,
      };
    } catch (error) {
      if (!isNotFound(error)) throw error;
      this.logger.warn(
        { clusterRole: this.clusterRole },
        'the owner ClusterRole does not exist: writing without an owner',
      );
    }
    return this.owner;
  }
}
