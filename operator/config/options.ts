/**
 * Command-line flags and environment variables. Every flag has an environment twin
 * (ADMISSION_<FLAG_IN_CAPS>), which a Deployment finds easier to set; a flag wins.
 */
import { parseArgs } from 'node:util';
import type { V1LabelSelector } from '@kubernetes/client-node';
import { subcommandsHelp } from './subcommands.js';
import { parseFeatureGates, type FeatureGates } from '../../webhook/feature-gates.js';
import { enforceableNames, webhookShortNames, type WebhookOverride } from '../../webhook/table.js';
import { readEnforcement, type Enforcement } from '../../webhook/enforcement/enforcement.js';
import { FieldPath } from '../../webhook/rules/shared/field-errors.js';
import { parseGoDuration } from '../../webhook/util/go-duration.js';
import { joinHostPort, splitHostPort } from '../../webhook/util/host-port.js';
import { parseLabelSelector } from '../../webhook/util/label-selector.js';
import type { JsonValue } from '../../webhook/admission/types.js';
import { labelKeyProblem, labelValueProblem } from '../../webhook/util/k8s-names.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface OperatorOptions {
  namespace: string;
  port: number;
  /** The port written into webhook URLs (URL mode); replicas on one host share it. */
  webhookPort: number;
  bindAddress: string;
  /**
   * host:port at which the other replicas reach this one's admission server, published on the
   * Lease while it leads (they forward it quota reservations); undefined: not published.
   */
  advertiseAddress: string | undefined;
  /** Where metrics and debug views are served over plain HTTP; undefined when turned off. */
  metricsAddress: { host: string; port: number } | undefined;
  serviceName: string;
  secretName: string;
  /** A cluster-scoped ClusterRole whose deletion garbage-collects the webhook configurations ('' for none). */
  ownerClusterRole: string;
  /** Host the API server calls when it reaches us by URL (outside a cluster). */
  webhookHost: string;
  /** Run against a local control plane started by the operator (no kubeconfig given). */
  local: boolean;
  caLifetimeMs: number;
  caRenewBeforeMs: number;
  certLifetimeMs: number;
  certRenewBeforeMs: number;
  bundlePropagationMs: number;
  featureGates: FeatureGates;
  webhookOverrides: Record<string, WebhookOverride>;
  /** Each webhook's enforcement when the operator's ConfigMap does not set one. */
  enforcement: Enforcement;
  maxAmplificationRatio: number;
  excludedNamespaces: string[];
  /** The admin's own exclusions for failurePolicy=Fail webhooks (see TableContext.namespaceSelector). */
  webhookNamespaceSelector: V1LabelSelector | undefined;
  webhookObjectSelector: V1LabelSelector | undefined;
  sloConfigNamespace: string;
  logLevel: LogLevel;
  shutdownGraceMs: number;
  /** Lease timings of the leader election (only the leader writes the Secret and configurations). */
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /**
   * How long SIGTERM keeps answering reviews with /readyz failing before it stops accepting;
   * undefined when not given (5 s, or 0 against the local control plane, which nothing balances).
   */
  shutdownDelayMs: number | undefined;
  /** How often the leader audits existing objects; 0 when it does not. */
  auditIntervalMs: number;
  /** The periodic audit also writes its results as wgpolicyk8s.io PolicyReports. */
  auditPolicyReports: boolean;
  /** Objects per list request of the periodic audit. */
  auditChunkSize: number;
  /** The container's memory limit in bytes (exported as a metric for the memory alert); undefined without one. */
  memoryLimitBytes: number | undefined;
  /** How the API server proves itself to the admission port (docs/security.md). */
  clientVerification: ClientVerification;
}

/** Verification of the admission port's callers: off when neither certificates nor tokens are configured. */
export interface ClientVerification {
  /** PEM file of the CAs that issue the API server's client certificates. */
  caFile: string | undefined;
  /** Subject common names or DNS names the API server's client certificate may carry. */
  subjectNames: string[];
  /** Users, as a TokenReview names them, whose bearer tokens are the API server's. */
  tokenUsers: string[];
  /**
   * Take every caller that reaches the admission port as the API server (managed clusters, whose
   * API server cannot present credentials): only true where a NetworkPolicy makes it so.
   */
  trustNetwork: boolean;
}

/** The drain period when --shutdown-delay is not given and the operator is not in local mode. */
export const DEFAULT_SHUTDOWN_DELAY_MS = 5000;

interface FlagSpec {
  description: string;
  default: string;
}

const FLAGS = {
  namespace: {
    description: 'namespace of the operator, its Secret and its ConfigMaps',
    default: 'admission-system',
  },
  port: { description: 'HTTPS port of the admission server', default: '9443' },
  'webhook-port': {
    description: 'port written into the webhook URLs in URL mode (defaults to --port)',
    default: '',
  },
  'bind-address': { description: 'address the admission server listens on', default: '0.0.0.0' },
  'advertise-address': {
    description:
      "host:port other replicas reach this one's admission server at, so they can forward it quota admissions while it leads (default $POD_IP:--port, else --bind-address:--port when that is one address; none: off)",
    default: '',
  },
  'metrics-bind-address': {
    description:
      'host:port of the plain-HTTP server for /metrics and debug views (e.g. :8080, 127.0.0.1:8080); 0 turns it off',
    default: ':8080',
  },
  'service-name': {
    description: 'Service in front of the operator (in-cluster webhook endpoint)',
    default: 'admission-operator',
  },
  'secret-name': { description: 'Secret holding the CA and serving certificate', default: 'webhook-tls' },
  'owner-cluster-role': {
    description:
      'ClusterRole that owns the webhook configurations, so deleting it (helm uninstall) garbage-collects them',
    default: '',
  },
  'webhook-host': {
    description: 'host the API server calls when the operator runs outside the cluster (URL mode)',
    default: '127.0.0.1',
  },
  local: {
    description: 'start and use the local control plane (the default when no kubeconfig is found)',
    default: 'false',
  },
  'ca-lifetime': { description: 'lifetime of a CA (Go duration)', default: '26280h' },
  'ca-renew-before': { description: 'replace the CA this long before it expires', default: '8760h' },
  'cert-lifetime': { description: 'lifetime of a serving certificate', default: '2160h' },
  'cert-renew-before': {
    description: 'replace the serving certificate this long before it expires',
    default: '720h',
  },
  'bundle-propagation': {
    description: 'how long a new CA is published before the serving certificate switches to it',
    default: '10s',
  },
  'feature-gates': {
    description: 'webhooks to turn off or on, e.g. NodeValidatingWebhook=false',
    default: '',
  },
  'webhook-overrides': {
    description:
      'JSON: failure policy and timeout per webhook, e.g. {"validate-pod":{"failurePolicy":"Ignore","timeoutSeconds":5}}',
    default: '{}',
  },
  enforcement: {
    description:
      "deny, warn or dryrun per webhook, e.g. validate-pod=warn,*=dryrun (the operator ConfigMap's enforcement key overrides it at run time)",
    default: '',
  },
  'max-amplification-ratio': {
    description: 'the largest node resource-amplification ratio /validate-node accepts',
    default: '10',
  },
  'excluded-namespaces': {
    description:
      'comma-separated namespaces that failurePolicy=Fail webhooks never block (kube-system and the operator namespace always are)',
    default: '',
  },
  'webhook-namespace-selector': {
    description:
      'JSON label selector: failurePolicy=Fail webhooks only see namespaces it selects, e.g. {"matchExpressions":[{"key":"example.com/no-admission","operator":"DoesNotExist"}]}',
    default: '',
  },
  'webhook-object-selector': {
    description:
      'JSON label selector: failurePolicy=Fail webhooks only see objects it selects (by their own labels)',
    default: '',
  },
  'slo-config-namespace': {
    description: 'namespace of the slo-controller-config ConfigMap',
    default: 'koordinator-system',
  },
  'log-level': { description: `one of ${LOG_LEVELS.join(', ')}`, default: 'info' },
  'shutdown-grace': { description: 'how long SIGTERM waits for requests in flight', default: '10s' },
  'leader-elect-lease-duration': {
    description: 'how long a replica waits after the leader last renewed the Lease before taking it over',
    default: '15s',
  },
  'leader-elect-renew-deadline': {
    description: 'how long the leader keeps trying to renew the Lease before it stops writing',
    default: '10s',
  },
  'leader-elect-retry-period': {
    description: 'how often replicas try to acquire, and the leader renews, the Lease',
    default: '2s',
  },
  'audit-interval': {
    description:
      'how often the leader audits existing objects against the rules (metrics and Events; see `audit`); 0 turns it off',
    default: '0',
  },
  'audit-policy-reports': {
    description:
      'true: the periodic audit also writes its results as wgpolicyk8s.io/v1alpha2 PolicyReports (see `audit --policy-report`)',
    default: 'false',
  },
  'audit-chunk-size': {
    description:
      "objects per list request of the periodic audit (kubectl's --chunk-size): what one page holds in memory",
    default: '500',
  },
  'memory-limit': {
    description:
      "the container's memory limit in bytes, exported as admission_memory_limit_bytes (the chart sets it from the downward API)",
    default: '',
  },
  'client-ca-file': {
    description:
      "PEM file of the CAs that issue the API server's client certificate for webhooks; with it, only a verified caller gets an answer (docs/security.md)",
    default: '',
  },
  'client-subject-names': {
    description:
      "comma-separated names the API server's client certificate may carry (subject common name or DNS name); required with --client-ca-file",
    default: '',
  },
  'client-token-users': {
    description:
      "comma-separated users whose bearer tokens (checked with a TokenReview) are the API server's; with it, only a verified caller gets an answer",
    default: '',
  },
  'trust-network-callers': {
    description:
      'true: where the API server cannot present credentials (EKS, GKE, AKS), take every caller that reaches the admission port as the API server, so its admissions reserve quota; only with a NetworkPolicy that lets nobody else reach it (docs/security.md)',
    default: 'false',
  },
  'shutdown-delay': {
    description:
      'how long SIGTERM keeps serving with /readyz failing, so endpoints drop the replica first (5s; 0 in local mode)',
    default: '',
  },
} as const satisfies Record<string, FlagSpec>;

type Flag = keyof typeof FLAGS;

export function usage(): string {
  const lines = Object.entries(FLAGS).map(
    ([flag, spec]) =>
      `  --${flag.padEnd(28)} ${spec.description}\n  ${' '.repeat(30)} env ADMISSION_${flag.toUpperCase().replaceAll('-', '_')}, default ${JSON.stringify(spec.default)}`,
  );
  return [
    'Usage: admission-operator [flags]             (from a checkout: npm start -- [flags])',
    '       admission-operator <command> [flags]   (admission-operator <command> --help for its flags)',
    '',
    'Runs the admission operator against $KUBECONFIG, or the in-cluster config, or (with',
    'neither) a local control plane it starts itself.',
    '',
    'Commands:',
    ...subcommandsHelp(),
    '',
    'Flags:',
    ...lines,
    '  --help                         show this help',
    '  --version                      print the version and the git commit of the build',
  ].join('\n');
}

export class OptionsError extends Error {}

/** controller-runtime's form: `:8080`, `127.0.0.1:8080`, `[::1]:8080`; `0` turns the server off. */
function parseBindAddress(flag: string, text: string): { host: string; port: number } | undefined {
  if (text === '0') return undefined;
  const match = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text);
  const port = Number(match?.[3]);
  if (!match || port > 65535) {
    throw new OptionsError(
      `--${flag}: must be host:port (e.g. :8080, 127.0.0.1:8080) or 0 to turn it off (got ${JSON.stringify(text)})`,
    );
  }
  return { host: match[1] ?? (match[2] || '0.0.0.0'), port };
}

const ANY_ADDRESS = ['', '0.0.0.0', '::'];

/** The address published for quota forwarding (see OperatorOptions.advertiseAddress). */
function advertiseAddress(
  given: string,
  env: NodeJS.ProcessEnv,
  bindAddress: string,
  port: number,
): string | undefined {
  if (given === 'none') return undefined;
  if (given !== '') {
    if (!splitHostPort(given)) {
      throw new OptionsError(
        `--advertise-address: must be host:port, [ipv6]:port or none (got ${JSON.stringify(given)})`,
      );
    }
    return given;
  }
  if (env.POD_IP) return joinHostPort(env.POD_IP, port);
  return ANY_ADDRESS.includes(bindAddress) ? undefined : joinHostPort(bindAddress, port);
}

/**
 * Parses a label selector flag as the API server will validate it in the webhook configurations
 * (a selector it refuses would stop every write of them); undefined when empty.
 */
export function parseSelectorFlag(flag: string, text: string): V1LabelSelector | undefined {
  if (text.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new OptionsError(`--${flag}: not valid JSON: ${(error as Error).message}`);
  }
  const read = parseLabelSelector(parsed as JsonValue, `--${flag}`);
  if (!read.ok) throw new OptionsError(read.error);
  const extra = Object.keys(parsed as object).filter(
    (key) => key !== 'matchLabels' && key !== 'matchExpressions',
  );
  if (extra.length > 0)
    throw new OptionsError(`--${flag}.${extra[0]}: unknown field; use matchLabels or matchExpressions`);
  for (const { key, values } of read.value.requirements) {
    const keyProblem = labelKeyProblem(key);
    if (keyProblem) throw new OptionsError(`--${flag}: key ${JSON.stringify(key)}: ${keyProblem}`);
    for (const value of values) {
      const valueProblem = labelValueProblem(value);
      if (valueProblem)
        throw new OptionsError(`--${flag}: value ${JSON.stringify(value)} of ${key}: ${valueProblem}`);
    }
  }
  return parsed as V1LabelSelector;
}

/** Parses --webhook-overrides, naming the webhook and field of anything wrong. */
export function parseWebhookOverrides(text: string): Record<string, WebhookOverride> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new OptionsError(`--webhook-overrides: not valid JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new OptionsError('--webhook-overrides: must be a JSON object keyed by webhook name');
  }
  const overrides: Record<string, WebhookOverride> = {};
  const known = webhookShortNames();
  for (const [name, raw] of Object.entries(parsed)) {
    const path = `--webhook-overrides.${name}`;
    if (!known.includes(name))
      throw new OptionsError(`${path}: unknown webhook; known: ${[...known].sort().join(', ')}`);
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
      throw new OptionsError(`${path}: must be an object`);
    const override: WebhookOverride = {};
    for (const [field, value] of Object.entries(raw as Record<string, unknown>)) {
      if (field === 'failurePolicy') {
        if (value !== 'Fail' && value !== 'Ignore')
          throw new OptionsError(`${path}.failurePolicy: must be Fail or Ignore`);
        override.failurePolicy = value;
      } else if (field === 'timeoutSeconds') {
        if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 30) {
          throw new OptionsError(`${path}.timeoutSeconds: must be an integer from 1 to 30`);
        }
        override.timeoutSeconds = value;
      } else {
        throw new OptionsError(`${path}.${field}: unknown field; use failurePolicy or timeoutSeconds`);
      }
    }
    overrides[name] = override;
  }
  return overrides;
}

/** A comma-separated list, blanks dropped. */
function list(text: string): string[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

function duration(flag: Flag, value: string): number {
  try {
    const ms = parseGoDuration(value);
    if (ms <= 0) throw new Error('must be positive');
    return ms;
  } catch (error) {
    throw new OptionsError(`--${flag}: ${(error as Error).message} (got ${JSON.stringify(value)})`);
  }
}

/** A duration that may be zero (a wait that can be turned off). */
function delay(flag: Flag, value: string): number {
  try {
    const ms = parseGoDuration(value);
    if (ms < 0) throw new Error('must not be negative');
    return ms;
  } catch (error) {
    throw new OptionsError(`--${flag}: ${(error as Error).message} (got ${JSON.stringify(value)})`);
  }
}

export function parseOptions(
  argv: string[],
  env: NodeJS.ProcessEnv,
): { help: true } | { help: false; options: OperatorOptions } {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        help: { type: 'boolean' },
        ...Object.fromEntries(Object.keys(FLAGS).map((flag) => [flag, { type: 'string' as const }])),
      },
      allowPositionals: false,
      strict: true,
    });
  } catch (error) {
    throw new OptionsError(`${(error as Error).message}\n\n${usage()}`);
  }
  if (parsed.values.help) return { help: true };

  const value = (flag: Flag): string => {
    const fromFlag = (parsed.values as Record<string, string | boolean | undefined>)[flag];
    if (typeof fromFlag === 'string') return fromFlag;
    return env[`ADMISSION_${flag.toUpperCase().replaceAll('-', '_')}`] ?? FLAGS[flag].default;
  };

  const portOf = (flag: Flag, text: string): number => {
    const number = Number(text);
    if (!Number.isInteger(number) || number < 1 || number > 65535) {
      throw new OptionsError(`--${flag}: must be an integer from 1 to 65535 (got ${JSON.stringify(text)})`);
    }
    return number;
  };
  const port = portOf('port', value('port'));
  const webhookPort = value('webhook-port') === '' ? port : portOf('webhook-port', value('webhook-port'));
  const logLevel = value('log-level');
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new OptionsError(
      `--log-level: must be one of ${LOG_LEVELS.join(', ')} (got ${JSON.stringify(logLevel)})`,
    );
  }
  const local = value('local');
  if (local !== 'true' && local !== 'false') {
    throw new OptionsError(`--local: must be true or false (got ${JSON.stringify(local)})`);
  }
  let featureGates: FeatureGates;
  try {
    featureGates = parseFeatureGates(value('feature-gates'));
  } catch (error) {
    throw new OptionsError((error as Error).message);
  }
  const options: OperatorOptions = {
    namespace: value('namespace'),
    port,
    webhookPort,
    bindAddress: value('bind-address'),
    advertiseAddress: advertiseAddress(value('advertise-address'), env, value('bind-address'), port),
    metricsAddress: parseBindAddress('metrics-bind-address', value('metrics-bind-address')),
    serviceName: value('service-name'),
    secretName: value('secret-name'),
    ownerClusterRole: value('owner-cluster-role'),
    webhookHost: value('webhook-host'),
    local: local === 'true',
    caLifetimeMs: duration('ca-lifetime', value('ca-lifetime')),
    caRenewBeforeMs: duration('ca-renew-before', value('ca-renew-before')),
    certLifetimeMs: duration('cert-lifetime', value('cert-lifetime')),
    certRenewBeforeMs: duration('cert-renew-before', value('cert-renew-before')),
    bundlePropagationMs: duration('bundle-propagation', value('bundle-propagation')),
    featureGates,
    webhookOverrides: parseWebhookOverrides(value('webhook-overrides')),
    enforcement: ((): Enforcement => {
      const read = readEnforcement(value('enforcement'), enforceableNames(), FieldPath.of('--enforcement'));
      if (!read.ok) throw new OptionsError(read.error.join('; '));
      return read.value;
    })(),
    maxAmplificationRatio: ((): number => {
      const ratio = Number(value('max-amplification-ratio'));
      if (!Number.isFinite(ratio) || ratio < 1) {
        throw new OptionsError(
          `--max-amplification-ratio: must be a number of at least 1 (got ${JSON.stringify(value('max-amplification-ratio'))})`,
        );
      }
      return ratio;
    })(),
    excludedNamespaces: list(value('excluded-namespaces')),
    webhookNamespaceSelector: parseSelectorFlag(
      'webhook-namespace-selector',
      value('webhook-namespace-selector'),
    ),
    webhookObjectSelector: parseSelectorFlag('webhook-object-selector', value('webhook-object-selector')),
    sloConfigNamespace: value('slo-config-namespace'),
    logLevel: logLevel as LogLevel,
    shutdownGraceMs: duration('shutdown-grace', value('shutdown-grace')),
    leaseDurationMs: duration('leader-elect-lease-duration', value('leader-elect-lease-duration')),
    renewDeadlineMs: duration('leader-elect-renew-deadline', value('leader-elect-renew-deadline')),
    retryPeriodMs: duration('leader-elect-retry-period', value('leader-elect-retry-period')),
    auditIntervalMs: delay('audit-interval', value('audit-interval')),
    auditPolicyReports: ((): boolean => {
      const text = value('audit-policy-reports');
      if (text !== 'true' && text !== 'false') {
        throw new OptionsError(`--audit-policy-reports: must be true or false (got ${JSON.stringify(text)})`);
      }
      return text === 'true';
    })(),
    auditChunkSize: ((): number => {
      const text = value('audit-chunk-size');
      const size = Number(text);
      if (!/^\d+$/.test(text) || !Number.isSafeInteger(size) || size === 0) {
        throw new OptionsError(
          `--audit-chunk-size: must be a whole number above 0 (got ${JSON.stringify(text.slice(0, 64))})`,
        );
      }
      return size;
    })(),
    shutdownDelayMs:
      value('shutdown-delay') === '' ? undefined : delay('shutdown-delay', value('shutdown-delay')),
    memoryLimitBytes: ((): number | undefined => {
      const text = value('memory-limit');
      if (text === '') return undefined;
      const bytes = Number(text);
      if (!/^\d+$/.test(text) || !Number.isSafeInteger(bytes) || bytes === 0) {
        throw new OptionsError(
          `--memory-limit: must be a whole number of bytes above 0 (got ${JSON.stringify(text.slice(0, 64))})`,
        );
      }
      return bytes;
    })(),
    clientVerification: {
      caFile: value('client-ca-file') === '' ? undefined : value('client-ca-file'),
      subjectNames: list(value('client-subject-names')),
      tokenUsers: list(value('client-token-users')),
      trustNetwork: ((): boolean => {
        const text = value('trust-network-callers');
        if (text !== 'true' && text !== 'false') {
          throw new OptionsError(
            `--trust-network-callers: must be true or false (got ${JSON.stringify(text)})`,
          );
        }
        return text === 'true';
      })(),
    },
  };
  const { clientVerification } = options;
  if ((clientVerification.caFile === undefined) !== (clientVerification.subjectNames.length === 0)) {
    throw new OptionsError(
      clientVerification.caFile === undefined
        ? '--client-subject-names needs --client-ca-file: the CA that issues those certificates'
        : "--client-ca-file needs --client-subject-names: a cluster CA also issues every node's and controller's certificate, so name the API server's",
    );
  }
  if (
    clientVerification.trustNetwork &&
    (clientVerification.caFile !== undefined || clientVerification.tokenUsers.length > 0)
  ) {
    throw new OptionsError(
      '--trust-network-callers stands in for verifying the API server where it cannot present credentials: beside --client-ca-file or --client-token-users it would let callers without them reserve quota; use one or the other',
    );
  }
  if (options.renewDeadlineMs >= options.leaseDurationMs) {
    throw new OptionsError(
      '--leader-elect-renew-deadline must be shorter than --leader-elect-lease-duration',
    );
  }
  if (options.retryPeriodMs >= options.renewDeadlineMs) {
    throw new OptionsError('--leader-elect-retry-period must be shorter than --leader-elect-renew-deadline');
  }
  if (options.leaseDurationMs < 1000) {
    throw new OptionsError('--leader-elect-lease-duration must be at least 1s');
  }
  if (options.caRenewBeforeMs >= options.caLifetimeMs) {
    throw new OptionsError('--ca-renew-before must be shorter than --ca-lifetime');
  }
  if (options.certRenewBeforeMs >= options.certLifetimeMs) {
    throw new OptionsError('--cert-renew-before must be shorter than --cert-lifetime');
  }
  if (options.certLifetimeMs > options.caLifetimeMs) {
    throw new OptionsError('--cert-lifetime must not exceed --ca-lifetime');
  }
  // During a CA rotation the serving certificate and the old CA must both outlive the wait
  // before the switch to the new CA; a shorter life expires while still served.
  if (options.certLifetimeMs <= options.bundlePropagationMs) {
    throw new OptionsError('--cert-lifetime must be longer than --bundle-propagation');
  }
  if (options.caRenewBeforeMs <= options.bundlePropagationMs) {
    throw new OptionsError('--ca-renew-before must be longer than --bundle-propagation');
  }
  return { help: false, options };
}
