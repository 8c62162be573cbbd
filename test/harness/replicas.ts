/**
 * Several operator replicas behind the test balancer, as a Deployment behind its Service: every
 * replica runs in URL mode with the balancer's address in the webhook URLs, listens on a port
 * of its own and shares the namespace (so the Secret). Also a steady stream of pod creates
 * through the API server, recording each failure with its time, and the setup the replica tests
 * share (two replicas in service behind a balancer).
 */
import type { TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { messageOf } from '../../operator/kube/errors.js';
import { freePorts } from '../../scripts/cluster/control-plane.js';
import { TcpBalancer } from './balancer.js';
import { createPod, podReadyNamespace, testNamespace, waitFor } from './cluster.js';
import {
  deleteConfigurations,
  startOperator,
  waitForPublishedSecret,
  type OperatorProcess,
  type StartOptions,
} from './operator.js';

export type Starter = (options: StartOptions) => Promise<OperatorProcess>;

export class Replicas {
  readonly members: OperatorProcess[] = [];

  constructor(
    private readonly balancer: TcpBalancer,
    private readonly start: Starter,
    private readonly options: Omit<StartOptions, 'port' | 'webhookPort'>,
  ) {}

  /** Starts one more replica and adds it to the balancer (it gets traffic once ready). */
  async add(): Promise<OperatorProcess> {
    const [port] = (await freePorts(1)) as [number];
    const replica = await this.start({ ...this.options, port, webhookPort: this.balancer.port });
    this.balancer.add(port);
    this.members.push(replica);
    return replica;
  }

  /** Waits until the balancer sends connections to `replica` (it passed a readiness probe). */
  async inService(replica: OperatorProcess, timeoutMs = 60_000): Promise<void> {
    await waitFor(
      `replica ${replica.port} to be in service`,
      () => Promise.resolve(this.balancer.readyPorts().includes(replica.port)),
      { timeoutMs, intervalMs: 100 },
    );
  }

  /**
   * Replaces the replica at `index` as a rolling update does: SIGTERM, wait for it to exit, remove
   * its endpoint (its pod is gone), start a new one and wait until it is in service.
   */
  async restart(index: number): Promise<{ exitCode: number | null; replica: OperatorProcess }> {
    const old = this.members[index];
    if (!old) throw new Error(`no replica ${index}`);
    const exitCode = await old.stop('SIGTERM');
    this.balancer.remove(old.port);
    this.members.splice(index, 1);
    const replica = await this.add();
    // Keep the order: the new replica takes the old one's place.
    this.members.splice(this.members.indexOf(replica), 1);
    this.members.splice(index, 0, replica);
    await this.inService(replica);
    return { exitCode, replica };
  }
}

export interface Attempt {
  startedAt: number;
  endedAt: number;
  /** The API server's message when the create failed. */
  error?: string;
}

export interface PodStream {
  /** Stops sending, waits for the creates in flight and returns every attempt. */
  stop: () => Promise<Attempt[]>;
  /** Attempts finished so far. */
  attempts: () => readonly Attempt[];
}

/** Creates pods in `namespace` at `perSecond`, each on its own (a slow one does not delay the next). */
export function podStream(namespace: string, perSecond = 20): PodStream {
  const attempts: Attempt[] = [];
  const inFlight = new Set<Promise<void>>();
  let running = true;
  const loop = (async (): Promise<void> => {
    const interval = 1000 / perSecond;
    let next = Date.now();
    while (running) {
      const startedAt = Date.now();
      const attempt: Promise<void> = createPod(namespace)
        .then(() => {
          attempts.push({ startedAt, endedAt: Date.now() });
        })
        .catch((error: unknown) => {
          attempts.push({ startedAt, endedAt: Date.now(), error: messageOf(error) });
        })
        .finally(() => {
          inFlight.delete(attempt);
        });
      inFlight.add(attempt);
      next += interval;
      await sleep(Math.max(0, next - Date.now()));
    }
  })();
  return {
    attempts: () => attempts,
    stop: async () => {
      running = false;
      await loop;
      await Promise.all([...inFlight]);
      return attempts.sort((a, b) => a.startedAt - b.startedAt);
    },
  };
}

/** The drain the replicas run with: the chart's default, above the balancer's 2 s removal window. */
export const SHUTDOWN_DELAY = '5s';

export interface Setup {
  balancer: TcpBalancer;
  replicas: Replicas;
  namespace: string;
  workload: string;
}

/** Two (or `count`) replicas behind a balancer, in service, and a namespace their pod webhooks see. */
export async function replicated(
  t: TestContext,
  options: Omit<StartOptions, 'namespace' | 'port' | 'webhookPort'> = {},
  count = 2,
  /** What the n-th replica started gets on top of `options` (its own kubeconfig, say). */
  perReplica: (n: number) => Partial<StartOptions> = () => ({}),
): Promise<Setup> {
  // Registered first, so it runs first: a replica still running would recreate what is deleted.
  const started: { replicas?: Replicas } = {};
  t.after(async () => {
    await Promise.all((started.replicas?.members ?? []).map((replica) => replica.stop('SIGKILL')));
    await deleteConfigurations();
  });
  const namespace = await testNamespace(t, 'op');
  const workload = await podReadyNamespace(t);
  const balancer = new TcpBalancer();
  await balancer.listen();
  t.after(() => balancer.close());
  let startedCount = 0;
  const replicas = new Replicas(
    balancer,
    (start) => startOperator(t, { ...start, ...perReplica(startedCount++) }),
    {
      namespace,
      shutdownDelay: SHUTDOWN_DELAY,
      ...options,
    },
  );
  started.replicas = replicas;
  // The first replica issues the Secret before the others start; replicas starting at the same
  // instant are covered by certificate-rotation.test.ts.
  await replicas.add();
  await waitForPublishedSecret(namespace, 30_000);
  for (let i = 1; i < count; i++) await replicas.add();
  for (const replica of replicas.members) await replicas.inService(replica);
  await waitFor('a pod admitted through the balancer', () => createPod(workload), { timeoutMs: 30_000 });
  return { balancer, replicas, namespace, workload };
}

export function failuresOf(attempts: readonly Attempt[]): Attempt[] {
  return attempts.filter((attempt) => attempt.error !== undefined);
}

export function summary(attempts: readonly Attempt[]): string {
  const failed = failuresOf(attempts);
  const first = failed.slice(0, 3).map((attempt) => attempt.error);
  return `${attempts.length - failed.length} admitted, ${failed.length} failed${first.length ? `: ${first.join(' | ')}` : ''}`;
}
