/**
 * The operator process's start-up, shared by `operator/main.ts` (the image's entry point),
 * `scripts/start-local.ts` (`npm start` from a checkout) and the test harness's entry that runs
 * it with a skewed clock. It runs against $KUBECONFIG or the in-cluster config; with neither, only
 * an entry point that can start a local control plane (`npm start`) has somewhere to go, so the
 * production entry point never reaches into `scripts/`.
 */
import { CoreV1Api, KubeConfig, VersionApi } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { exitWhenLogWritten, operatorLogger } from './logger.js';
import { logProcessWarnings } from './process-warnings.js';
import { setTimeout } from 'node:timers/promises';
import { applyFolder } from './kube/apply.js';
import { isNotFound } from './kube/errors.js';
import {
  DEFAULT_SHUTDOWN_DELAY_MS,
  OptionsError,
  parseOptions,
  usage,
  type OperatorOptions,
} from './config/options.js';
import {
  checkKubernetesVersion,
  formatVersion,
  MINIMUM_KUBERNETES,
  type VersionCheck,
} from './kubernetes-version.js';
import { runOperator } from './operator.js';
import type { Endpoint } from './webhooks/desired-configurations.js';
import { abortAfter, API_CALL_TIMEOUT_MS } from './kube/request-timeout.js';

interface Connection {
  kubeConfig: KubeConfig;
  endpoint: Endpoint;
  outOfCluster: boolean;
  /** The operator started the local control plane itself. */
  local: boolean;
  /** Our CRDs, to apply to a local control plane, which starts empty. */
  crdsDir?: string;
  /** How the local control plane's API server proves itself to webhooks. */
  webhookClient?: LocalCluster['webhookClient'];
}

/** A local control plane started for this process: where its kubeconfig and our CRDs are. */
export interface LocalCluster {
  kubeconfigPath: string;
  server: string;
  crdsDir: string;
  /** The CA and subject of the client certificate its API server presents to webhooks. */
  webhookClient: { caFile: string; subject: string } | undefined;
}

/** Starts (or joins) the local control plane; `log` receives its progress lines. */
export type LocalClusterStarter = (log: (line: string) => void) => Promise<LocalCluster>;

async function connect(
  options: OperatorOptions,
  env: NodeJS.ProcessEnv,
  logger: Logger,
  startLocalCluster: LocalClusterStarter | undefined,
): Promise<Connection> {
  const kubeConfig = new KubeConfig();
  const urlEndpoint: Endpoint = { mode: 'url', host: options.webhookHost, port: options.webhookPort };
  if (!options.local && env.KUBECONFIG) {
    kubeConfig.loadFromDefault();
    logger.info({ kubeconfig: env.KUBECONFIG }, 'using $KUBECONFIG; webhooks are reached by URL');
    return { kubeConfig, endpoint: urlEndpoint, outOfCluster: true, local: false };
  }
  if (!options.local && env.KUBERNETES_SERVICE_HOST) {
    kubeConfig.loadFromCluster();
    logger.info('using the in-cluster config; webhooks are reached through the Service');
    return {
      kubeConfig,
      endpoint: { mode: 'service', namespace: options.namespace, name: options.serviceName, port: 443 },
      outOfCluster: false,
      local: false,
    };
  }
  if (!startLocalCluster) {
    throw new NoClusterError(
      options.local
        ? '--local=true needs a local control plane: run `npm start` from a checkout'
        : 'no cluster to run against: set $KUBECONFIG, run in a cluster, or run `npm start` from a checkout for a local control plane',
    );
  }
  logger.info('no kubeconfig given: starting the local control plane');
  const local = await startLocalCluster((line) => {
    logger.info({ component: 'local-cluster' }, line);
  });
  kubeConfig.loadFromFile(local.kubeconfigPath);
  logger.info({ server: local.server, kubeconfig: local.kubeconfigPath }, 'local control plane is up');
  return {
    kubeConfig,
    endpoint: urlEndpoint,
    outOfCluster: true,
    local: true,
    crdsDir: local.crdsDir,
    webhookClient: local.webhookClient,
  };
}

/**
 * Against the local control plane, whose API server presents a client certificate to webhooks,
 * callers are verified unless verification was configured otherwise: `npm start` runs as a
 * hardened cluster should.
 */
function withLocalClientVerification(
  options: OperatorOptions,
  connection: Connection,
  logger: Logger,
): OperatorOptions {
  const { caFile, tokenUsers, trustNetwork } = options.clientVerification;
  const client = connection.webhookClient;
  if (!connection.local || !client || caFile !== undefined || tokenUsers.length > 0 || trustNetwork)
    return options;
  logger.info(
    { clientCaFile: client.caFile, subject: client.subject },
    "verifying callers with the local control plane's webhook client certificate",
  );
  return {
    ...options,
    clientVerification: {
      caFile: client.caFile,
      subjectNames: [client.subject],
      tokenUsers: [],
      trustNetwork: false,
    },
  };
}

/** Neither a kubeconfig, nor a cluster, nor a way to start a local control plane. */
class NoClusterError extends Error {}

async function ensureNamespace(kubeConfig: KubeConfig, namespace: string, logger: Logger): Promise<void> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  try {
    await core.readNamespace({ name: namespace }, abortAfter(API_CALL_TIMEOUT_MS));
  } catch (error) {
    if (!isNotFound(error)) throw error;
    await core.createNamespace({ body: { metadata: { name: namespace } } }, abortAfter(API_CALL_TIMEOUT_MS));
    logger.info({ namespace }, 'created the operator namespace');
  }
}

/** Waits between reads of /version: a pod that starts while the API server is briefly away still starts. */
const VERSION_READ_RETRIES_MS = [1000, 2000, 4000, 8000];

/** The API server's /version against the oldest Kubernetes the operator supports. */
async function checkServerVersion(kubeConfig: KubeConfig, logger: Logger): Promise<VersionCheck> {
  const api = kubeConfig.makeApiClient(VersionApi);
  for (let attempt = 0; ; attempt++) {
    try {
      return checkKubernetesVersion(await api.getCode({}, abortAfter(API_CALL_TIMEOUT_MS)));
    } catch (error) {
      const wait = VERSION_READ_RETRIES_MS[attempt];
      if (wait === undefined) throw error;
      logger.warn({ err: error, retryInMs: wait }, 'cannot read the Kubernetes version (/version); retrying');
      await setTimeout(wait);
    }
  }
}

/** Logs the server's version; false (logged fatal, naming both versions) when it is too old or unreadable. */
async function runsOnSupportedKubernetes(kubeConfig: KubeConfig, logger: Logger): Promise<boolean> {
  const minimum = formatVersion(MINIMUM_KUBERNETES);
  let version: VersionCheck;
  try {
    version = await checkServerVersion(kubeConfig, logger);
  } catch (error) {
    logger.fatal({ err: error, minimum }, 'cannot read the Kubernetes version (/version) of the API server');
    return false;
  }
  switch (version.verdict) {
    case 'too-old':
      logger.fatal({ minimum }, version.message);
      return false;
    case 'unknown':
      logger.warn(
        { kubernetes: version.shown, minimum },
        'cannot tell the Kubernetes version; running anyway',
      );
      return true;
    case 'supported':
      logger.info({ kubernetes: version.shown, minimum }, 'Kubernetes version supported');
      return true;
  }
}

/** What the process start-up depends on, so a test can run the same start-up with its own clock. */
export interface StartupDependencies {
  /** The command-line arguments, without the node executable and script. */
  argv: readonly string[];
  env: NodeJS.ProcessEnv;
  /** The certificates' notion of now; the system clock when omitted. */
  clock?: () => Date;
  /** How to start a local control plane when no cluster is configured; none in the image. */
  startLocalCluster?: LocalClusterStarter;
}

/**
 * Parses the command line, connects, runs the operator and stops it on SIGTERM or SIGINT:
 * everything `operator/main.ts` does as a process.
 */
export async function startOperatorProcess({
  argv,
  env,
  clock,
  startLocalCluster,
}: StartupDependencies): Promise<void> {
  let parsed;
  try {
    parsed = parseOptions([...argv], env);
  } catch (error) {
    if (!(error instanceof OptionsError)) throw error;
    console.error(error.message);
    process.exitCode = 2;
    return;
  }
  if (parsed.help) {
    console.log(usage());
    return;
  }
  const { options } = parsed;
  const logger = operatorLogger(options.logLevel);
  logProcessWarnings(logger);
  process.on('uncaughtException', (error) => {
    logger.fatal({ err: error }, 'uncaught exception');
    exitWhenLogWritten(logger, 1);
  });
  process.on('unhandledRejection', (reason) => {
    logger.error({ err: reason }, 'unhandled promise rejection');
  });

  let connection;
  try {
    connection = await connect(options, env, logger, startLocalCluster);
  } catch (error) {
    if (!(error instanceof NoClusterError)) throw error;
    logger.fatal(error.message);
    process.exitCode = 2;
    return;
  }
  // Refused before anything is written: an API server too old for the configurations' fields would
  // silently drop them.
  if (!(await runsOnSupportedKubernetes(connection.kubeConfig, logger))) {
    exitWhenLogWritten(logger, 1);
    return;
  }
  // Out of a cluster nobody else creates our namespace; in a cluster the chart does.
  if (connection.outOfCluster) await ensureNamespace(connection.kubeConfig, options.namespace, logger);
  if (connection.crdsDir !== undefined) {
    // The local control plane starts empty; a cluster gets the CRDs from the chart.
    const files = await applyFolder(connection.kubeConfig, connection.crdsDir, 'admission-operator');
    logger.info({ crds: files }, 'applied the CRDs to the local control plane');
  }
  const operator = await runOperator(
    withLocalClientVerification(options, connection, logger),
    connection.kubeConfig,
    connection.endpoint,
    logger,
    clock ? { clock } : {},
  );
  logger.info({ port: operator.port, namespace: options.namespace }, 'operator running');

  // Nothing balances over the local control plane's single replica, so there is nothing to drain from.
  const shutdownDelayMs = options.shutdownDelayMs ?? (connection.local ? 0 : DEFAULT_SHUTDOWN_DELAY_MS);
  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    // Endpoints are removed asynchronously: the API server keeps calling a terminating replica for a
    // few seconds, and each call that fails refuses an object (failurePolicy Fail). So: not ready at
    // once, keep answering for the delay, then stop accepting.
    operator.drain();
    logger.info({ signal, shutdownDelayMs }, 'shutting down: /readyz fails, still serving for the delay');
    setTimeout(shutdownDelayMs)
      .then(() => {
        logger.info('drain delay over: no new connections, finishing requests in flight');
        return operator.stop();
      })
      .then(() => {
        logger.info('stopped');
        exitWhenLogWritten(logger, 0);
      })
      .catch((error: unknown) => {
        logger.error({ err: error }, 'error while stopping');
        exitWhenLogWritten(logger, 1);
      });
  };
  process.on('SIGTERM', () => {
    shutdown('SIGTERM');
  });
  process.on('SIGINT', () => {
    shutdown('SIGINT');
  });
  process.on('SIGHUP', () => {
    logger.info('SIGHUP: listing every watched kind again');
    operator.relist();
  });
}
