/**
 * Runs the operator as a real process (`operator/main.ts`, the image's entry point, or the same
 * start-up with a skewed clock), bundled as the image bundles it (operator-bundle.ts), against
 * the local control plane, and inspects what it serves.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { request as httpRequest, type ClientRequest } from 'node:http';
import { request } from 'node:https';
import { connect } from 'node:tls';
import type { TestContext } from 'node:test';
import { AdmissionregistrationV1Api, CoreV1Api, type V1Secret } from '@kubernetes/client-node';
import { freePorts } from '../../scripts/cluster/control-plane.js';
import { operatorEntry } from './operator-bundle.js';
import { kubeconfigPath, repoRoot } from '../../scripts/cluster/layout.js';
import {
  apiServerClient,
  clientVerificationArgs,
  clusterKubeConfig,
  statusCode,
  testNamespace,
  waitFor,
} from './cluster.js';

export const CONFIGURATION_NAME = 'admission-operator';

export interface OperatorProcess {
  namespace: string;
  port: number;
  webhookPort: number;
  /** The plain-HTTP port of /metrics and the debug views. */
  metricsPort: number;
  child: ChildProcess;
  /** Every log line so far (JSON lines from pino, or plain text). */
  logs: string[];
  /** The lines of those that came on stderr: none in normal operation. */
  stderr: string[];
  /** Sends `signal` and resolves with the exit code (null if killed by a signal). */
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
  exited: Promise<number | null>;
}

export interface StartOptions {
  namespace: string;
  port?: number;
  /** The port written into the webhook URLs; replicas share one. */
  webhookPort?: number;
  args?: string[];
  env?: NodeJS.ProcessEnv;
  /** Runs the process with its clock this far ahead (negative: behind) of the system clock. */
  clockOffsetMs?: number;
  /**
   * --shutdown-delay (a Go duration). Tests default to 0s: nothing balances over a lone replica,
   * and a stop should not wait.
   */
  shutdownDelay?: string;
  /**
   * Verify callers with the local API server's webhook client certificate (--client-ca-file and
   * --client-subject-names), as every test does unless it is about running without (false).
   */
  verifyCallers?: boolean;
}

/**
 * Starts `operator/main.ts` (or, given a clock offset, `skewed-operator.ts`, the same start-up
 * on a skewed clock), bundled, with the local cluster's kubeconfig; stops it when the test ends.
 */
export async function startOperator(t: TestContext, options: StartOptions): Promise<OperatorProcess> {
  const operator = await spawnOperator(options);
  const kill = async (): Promise<void> => {
    await operator.stop('SIGKILL');
  };
  t.after(kill);
  stopBeforeCleanup(t, kill);
  return operator;
}

const stopsOfTest = new WeakMap<TestContext, (() => Promise<unknown>)[]>();

/**
 * Registers how to stop an operator a test runs, so cleanConfigurationsAfter stops it before
 * deleting the configurations. node:test runs after-hooks in the order they were registered, and
 * tests register that cleanup first: a live operator would repair the deleted configurations and
 * then die, leaving them pointing at a closed port for the next test file.
 */
export function stopBeforeCleanup(t: TestContext, stop: () => Promise<unknown>): void {
  const stops = stopsOfTest.get(t) ?? [];
  stops.push(stop);
  stopsOfTest.set(t, stops);
}

/** As startOperator, for callers that are not tests (the demo): the caller stops the process. */
export async function spawnOperator(options: StartOptions): Promise<OperatorProcess> {
  await clusterKubeConfig();
  const [freePort, metricsPort] = (await freePorts(2)) as [number, number];
  const port = options.port ?? freePort;
  const webhookPort = options.webhookPort ?? port;
  const verification = options.verifyCallers === false ? [] : await clientVerificationArgs();
  const entry =
    options.clockOffsetMs === undefined
      ? [await operatorEntry('operator')]
      : [await operatorEntry('skewed'), String(options.clockOffsetMs)];
  const child = spawn(
    process.execPath,
    [
      ...entry,
      `--namespace=${options.namespace}`,
      `--port=${port}`,
      `--webhook-port=${webhookPort}`,
      '--bind-address=127.0.0.1',
      `--metrics-bind-address=127.0.0.1:${metricsPort}`,
      '--log-level=debug',
      `--shutdown-delay=${options.shutdownDelay ?? '0s'}`,
      ...verification,
      ...(options.args ?? []),
    ],
    {
      cwd: repoRoot,
      env: { ...process.env, KUBECONFIG: kubeconfigPath, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const logs: string[] = [];
  const stderr: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      logs.push(...lines);
      if (stream === child.stderr) stderr.push(...lines);
      // OPERATOR_LOGS=1 streams the operator's log into the test output, for debugging.
      if (process.env.OPERATOR_LOGS === '1')
        for (const line of lines) console.error(`[operator ${port}] ${line}`);
    });
  }
  const exited = new Promise<number | null>((resolvePromise) => {
    child.on('exit', (code) => {
      resolvePromise(code);
    });
  });
  const stop = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return exited;
  };
  return { namespace: options.namespace, port, webhookPort, metricsPort, child, logs, stderr, stop, exited };
}

/** Deletes both webhook configurations (and waits until they are gone) so the next test starts clean. */
export async function deleteConfigurations(): Promise<void> {
  const api = (await clusterKubeConfig()).makeApiClient(AdmissionregistrationV1Api);
  await api.deleteMutatingWebhookConfiguration({ name: CONFIGURATION_NAME }).catch(() => undefined);
  await api.deleteValidatingWebhookConfiguration({ name: CONFIGURATION_NAME }).catch(() => undefined);
}

/**
 * Registers cleanup of the cluster-scoped configurations after the test: first every operator
 * the test started (startOperator, or stopBeforeCleanup for one run in process) is stopped.
 */
export function cleanConfigurationsAfter(t: TestContext): void {
  t.after(async () => {
    for (const stop of stopsOfTest.get(t) ?? []) await stop();
    await deleteConfigurations();
  });
}

export async function readSecret(namespace: string, name = 'webhook-tls'): Promise<V1Secret | undefined> {
  const core = (await clusterKubeConfig()).makeApiClient(CoreV1Api);
  try {
    return await core.readNamespacedSecret({ namespace, name });
  } catch (error) {
    if (statusCode(error) === 404) return undefined;
    throw error;
  }
}

export function secretValue(secret: V1Secret | undefined, key: string): string {
  return Buffer.from(secret?.data?.[key] ?? '', 'base64').toString('utf8');
}

/** The caBundle of every webhook of both configurations, decoded (empty when a configuration is missing). */
export async function publishedBundles(): Promise<string[]> {
  const api = (await clusterKubeConfig()).makeApiClient(AdmissionregistrationV1Api);
  const bundles: string[] = [];
  for (const read of [
    () => api.readMutatingWebhookConfiguration({ name: CONFIGURATION_NAME }),
    () => api.readValidatingWebhookConfiguration({ name: CONFIGURATION_NAME }),
  ]) {
    try {
      const configuration = await read();
      for (const webhook of configuration.webhooks ?? []) {
        bundles.push(Buffer.from(webhook.clientConfig.caBundle ?? '', 'base64').toString('utf8'));
      }
    } catch (error) {
      if (statusCode(error) !== 404) throw error;
      bundles.push('');
    }
  }
  return bundles;
}

/** Waits until the Secret exists and every webhook of both configurations carries its ca.crt. */
export async function waitForPublishedSecret(namespace: string, timeoutMs = 90_000): Promise<V1Secret> {
  return waitFor(
    'the Secret and both configurations with its CA bundle',
    async () => {
      const secret = await readSecret(namespace);
      const ca = secretValue(secret, 'ca.crt');
      if (!ca) return undefined;
      const bundles = await publishedBundles();
      return bundles.length >= 2 && bundles.every((bundle) => bundle === ca) ? secret : undefined;
    },
    { timeoutMs },
  );
}

/** The certificate a TLS handshake with 127.0.0.1:port presents (no verification). */
export function servedCertificate(port: number): Promise<X509Certificate> {
  return new Promise((resolvePromise, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const raw = socket.getPeerCertificate().raw;
      socket.destroy();
      resolvePromise(new X509Certificate(raw));
    });
    socket.on('error', reject);
  });
}

export interface HttpsCall {
  /** The CA to verify the server with (as `curl --cacert`); without it nothing is verified (`curl -k`). */
  ca?: string;
  /** Call as the API server does, with its webhook client certificate (`curl --cert --key`). */
  asApiServer?: boolean;
  /** Or with this client certificate. */
  client?: { cert: string; key: string };
  method?: string;
  body?: string;
  contentType?: string;
  headers?: Record<string, string>;
}

export interface HttpAnswer {
  status: number;
  body: string;
}

/** Sends `req` with `body` and resolves with the status and body whatever the status. */
function answerOf(req: ClientRequest, body?: string): Promise<HttpAnswer> {
  return new Promise((resolvePromise, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        resolvePromise({ status: res.statusCode ?? 0, body: text });
      });
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

/** One HTTPS request to the operator on 127.0.0.1. */
export async function httpsCall(port: number, path: string, call: HttpsCall = {}): Promise<HttpAnswer> {
  const req = request({
    host: '127.0.0.1',
    port,
    path,
    method: call.method ?? 'GET',
    ...(call.asApiServer ? await apiServerClient() : (call.client ?? {})),
    ...(call.ca ? { ca: call.ca } : { rejectUnauthorized: false }),
    headers: { ...(call.contentType ? { 'Content-Type': call.contentType } : {}), ...call.headers },
    timeout: 5000,
  });
  return answerOf(req, call.body);
}

/** GET trusting `ca`. */
export const httpsGet = (port: number, path: string, ca: string): Promise<HttpAnswer> =>
  httpsCall(port, path, { ca });

/** GET over plain HTTP on 127.0.0.1 (the metrics port). */
export const httpGet = (port: number, path: string): Promise<HttpAnswer> =>
  answerOf(httpRequest({ host: '127.0.0.1', port, path, timeout: 5000 }));

/** Lines of the operator's log whose `msg` matches. */
export function logsMatching(operator: OperatorProcess, msg: RegExp): Record<string, unknown>[] {
  return operator.logs
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        return undefined;
      }
    })
    .filter((entry): entry is Record<string, unknown> => entry !== undefined && msg.test(String(entry.msg)));
}

export interface FreshOperator {
  operator: OperatorProcess;
  namespace: string;
  /** The Secret once it and both configurations are published. */
  secret: V1Secret;
  ca: string;
}

/**
 * An operator process in a namespace of its own, waited on until its Secret and both
 * configurations are published; the configurations are deleted when the test ends.
 */
export async function freshOperator(
  t: TestContext,
  options: Omit<StartOptions, 'namespace'> = {},
): Promise<FreshOperator> {
  cleanConfigurationsAfter(t);
  const namespace = await testNamespace(t, 'op');
  const operator = await startOperator(t, { namespace, ...options });
  const secret = await waitForPublishedSecret(namespace);
  return { operator, namespace, secret, ca: secretValue(secret, 'ca.crt') };
}
