/**
 * A steady stream of pod creates through the API server, as the load of the end-to-end steps:
 * one create every 1/rate seconds (at most `maxInFlight` outstanding, so a stalled API server
 * slows the stream instead of piling requests up), each pod with a nodeSelector no node has, so
 * it stays Pending and only admission is exercised. Every create that fails is recorded with
 * when it was sent and the API server's message.
 */
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { governedMetadata } from '../harness/governed-pod.js';
import { uniqueName } from '../harness/unique-name.js';

export interface FailedCreate {
  /** When the create was sent (ms since the epoch). */
  at: number;
  message: string;
}

export interface StreamResult {
  created: number;
  failures: FailedCreate[];
  seconds: number;
}

/** The label no node carries: the stream's pods stay Pending. */
export const NO_SUCH_NODE = { 'e2e.admission-operator.io/no-such-node': 'true' };

const MESSAGE_LIMIT = 300;

export class PodStream {
  private readonly core: CoreV1Api;
  private readonly failures: FailedCreate[] = [];
  private created = 0;
  private inFlight = 0;
  private stopped = false;
  private readonly started = Date.now();
  private readonly loop: Promise<void>;
  private readonly pending = new Set<Promise<void>>();

  constructor(
    kubeConfig: KubeConfig,
    private readonly namespace: string,
    private readonly ratePerSecond = 20,
    private readonly maxInFlight = 40,
  ) {
    this.core = kubeConfig.makeApiClient(CoreV1Api);
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    const intervalMs = 1000 / this.ratePerSecond;
    let next = Date.now();
    while (!this.stopped) {
      if (this.inFlight < this.maxInFlight) {
        const create = this.createOne().finally(() => this.pending.delete(create));
        this.pending.add(create);
      }
      next += intervalMs;
      await new Promise((resolveTimer) => setTimeout(resolveTimer, Math.max(0, next - Date.now())));
    }
  }

  private async createOne(): Promise<void> {
    const at = Date.now();
    this.inFlight += 1;
    try {
      await this.core.createNamespacedPod({
        namespace: this.namespace,
        body: {
          // Pods both pod webhooks are called for: the stream measures their availability.
          metadata: { name: uniqueName('load-'), ...governedMetadata() },
          spec: {
            nodeSelector: NO_SUCH_NODE,
            containers: [{ name: 'main', image: 'registry.invalid/load:1' }],
          },
        },
      });
      this.created += 1;
    } catch (error) {
      const body = (error as { body?: unknown }).body;
      const message = typeof body === 'string' ? body : String(error);
      this.failures.push({ at, message: message.slice(0, MESSAGE_LIMIT) });
    } finally {
      this.inFlight -= 1;
    }
  }

  /** Failed creates so far. */
  failureCount(): number {
    return this.failures.length;
  }

  /** Stops sending and waits for the creates in flight. */
  async stop(): Promise<StreamResult> {
    this.stopped = true;
    await this.loop;
    await Promise.all([...this.pending]);
    return {
      created: this.created,
      failures: [...this.failures],
      seconds: (Date.now() - this.started) / 1000,
    };
  }
}
