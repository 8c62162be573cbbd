/**
 * Records Kubernetes Events on objects, so what the operator noticed shows up in
 * `kubectl describe` next to the object. Recording is best effort: a failure is logged, never
 * thrown, because an Event must not stop the work it reports on.
 */
import { hostname } from 'node:os';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';

export interface EventTarget {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  uid?: string;
  resourceVersion?: string;
}

export class EventRecorder {
  private readonly core: CoreV1Api;

  constructor(
    kubeConfig: KubeConfig,
    private readonly logger: Logger,
  ) {
    this.core = kubeConfig.makeApiClient(CoreV1Api);
  }

  async warning(target: EventTarget, reason: string, message: string): Promise<void> {
    const now = new Date();
    try {
      await this.core.createNamespacedEvent({
        namespace: target.namespace,
        body: {
          metadata: { generateName: `${target.name}.`, namespace: target.namespace },
          involvedObject: {
            apiVersion: target.apiVersion,
            kind: target.kind,
            namespace: target.namespace,
            name: target.name,
            ...(target.uid ? { uid: target.uid } : {}),
            ...(target.resourceVersion ? { resourceVersion: target.resourceVersion } : {}),
          },
          type: 'Warning',
          reason,
          // The API server refuses Event messages over 1 KiB.
          message: message.length > 1024 ? `${message.slice(0, 1021)}...` : message,
          source: { component: 'admission-operator' },
          reportingComponent: 'admission-operator',
          reportingInstance: hostname(),
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
        },
      });
    } catch (error) {
      this.logger.warn(
        { err: error, reason, object: `${target.namespace}/${target.name}` },
        'could not record an Event',
      );
    }
  }
}
