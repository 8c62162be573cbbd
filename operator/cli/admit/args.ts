/**
 * The command line of `admission-operator admit`. The flags that shape the webhook table
 * (feature gates, overrides, namespaces) read the same environment variables as the operator, so
 * a CI job configured like the Deployment judges like it.
 */
import { parseArgs } from 'node:util';
import { parseFeatureGates, type FeatureGates } from '../../../webhook/feature-gates.js';
import { readEnforcement, type Enforcement } from '../../../webhook/enforcement/enforcement.js';
import { FieldPath } from '../../../webhook/rules/shared/field-errors.js';
import type { Operation } from '../../../webhook/admission/types.js';
import { enforceableNames, type WebhookOverride } from '../../../webhook/table.js';
import type { V1LabelSelector } from '@kubernetes/client-node';
import { parseSelectorFlag, parseWebhookOverrides } from '../../config/options.js';

export type OutputFormat = 'text' | 'json' | 'yaml';

/** The flags that shape the webhook table, read as the operator reads them. */
export interface TableFlags {
  featureGates: FeatureGates;
  webhookOverrides: Record<string, WebhookOverride>;
  operatorNamespace: string;
  sloConfigNamespace: string;
  excludedNamespaces: string[];
  webhookNamespaceSelector: V1LabelSelector | undefined;
  webhookObjectSelector: V1LabelSelector | undefined;
  maxAmplificationRatio: number;
}

export interface AdmitOptions extends TableFlags {
  files: string[];
  state: string[];
  cluster: boolean;
  kubeconfig: string | undefined;
  context: string | undefined;
  /** The namespace of objects that name none (kubectl's -n); from the context with --cluster. */
  defaultNamespace: string | undefined;
  operation: Exclude<Operation, 'CONNECT'>;
  old: string[];
  output: OutputFormat;
  expandWorkloads: boolean;
  /** --enforcement; undefined: the one in force (see enforcement-in-force.ts). */
  enforcement: Enforcement | undefined;
  /** The exit code when nothing is denied but something is admitted only by its enforcement. */
  warnExitCode: number;
}

export class UsageError extends Error {
  override name = 'UsageError';
}

export function admitUsage(): string {
  return `Usage: admission-operator admit -f <file|dir|->... [flags]
       kubectl admit -f <file|dir|->... [flags]

Runs the operator's webhooks on manifests, offline: the same rules, paths and order as the API
server (mutating webhooks with reinvocation, then validating), with the cluster state the rules
read taken from --state files, from a live cluster (--cluster, read once, read-only), or both
(files win). Each webhook judges under its enforcement, as in the operator: a refusal under warn
or dryrun is reported as WARN and admitted. Exit 0: everything admitted (WARN too, unless
--warn-exit-code); 1: something denied; 2: bad input or usage.

Flags:
  -f, --filename PATH          manifests: a file, a directory (recursively) or - (stdin); repeatable
      --state PATH             state the rules read (Namespaces, ElasticQuotas, profiles, PriorityClasses,
                               the gpu-tier-mapping and SLO ConfigMaps,
                               Nodes, Pods counting against quotas...); repeatable
      --cluster                also read the state once from the cluster (kubeconfig)
      --kubeconfig PATH        kubeconfig for --cluster (default: $KUBECONFIG, ~/.kube/config)
      --context NAME           kubeconfig context for --cluster
  -n, --namespace NAME         namespace of objects that name none (default: the context's, else default)
      --operation OP           CREATE (default), UPDATE or DELETE
      --old PATH               the objects as they are now, for UPDATE (matched by kind, namespace, name)
  -o, --output FORMAT          text (default), json or yaml: the admitted objects as a List, plus a report
      --expand-workloads       also judge the pod each Deployment, StatefulSet, DaemonSet, ReplicaSet, Job
                               and CronJob would create
      --enforcement SPEC       as the operator's: deny, warn or dryrun per webhook, e.g. validate-pod=warn
                               or *=warn. Default: the operator ConfigMap's enforcement key in the state,
                               else (--cluster) the --enforcement of the operator's Deployment, else
                               env ADMISSION_ENFORCEMENT, else deny
      --warn-exit-code N       exit N when nothing is denied but something is WARN (default 0)
      --feature-gates GATES    as the operator's, e.g. NodeValidatingWebhook=false (env ADMISSION_FEATURE_GATES)
      --webhook-overrides JSON as the operator's (env ADMISSION_WEBHOOK_OVERRIDES)
      --operator-namespace NS  the operator's namespace (env ADMISSION_NAMESPACE, default admission-system)
      --slo-config-namespace NS  (env ADMISSION_SLO_CONFIG_NAMESPACE, default koordinator-system)
      --excluded-namespaces LIST (env ADMISSION_EXCLUDED_NAMESPACES)
      --webhook-namespace-selector JSON, --webhook-object-selector JSON  as the operator's
                               (env ADMISSION_WEBHOOK_NAMESPACE_SELECTOR, ADMISSION_WEBHOOK_OBJECT_SELECTOR)
      --max-amplification-ratio N (env ADMISSION_MAX_AMPLIFICATION_RATIO, default 10)
  -h, --help                   show this help
      --version                print the version and the git commit of the build`;
}

const OPERATIONS = ['CREATE', 'UPDATE', 'DELETE'] as const;
const FORMATS: readonly OutputFormat[] = ['text', 'json', 'yaml'];

/** Parses `argv` (after `admit`); throws UsageError naming the flag. */
export function parseAdmitArgs(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): AdmitOptions | 'help' | 'version' {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: {
        filename: { type: 'string', short: 'f', multiple: true },
        state: { type: 'string', multiple: true },
        cluster: { type: 'boolean' },
        kubeconfig: { type: 'string' },
        context: { type: 'string' },
        namespace: { type: 'string', short: 'n' },
        operation: { type: 'string' },
        old: { type: 'string', multiple: true },
        output: { type: 'string', short: 'o' },
        'expand-workloads': { type: 'boolean' },
        enforcement: { type: 'string' },
        'warn-exit-code': { type: 'string' },
        ...TABLE_FLAG_OPTIONS,
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean' },
      },
      allowPositionals: false,
      strict: true,
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const values = parsed.values;
  if (values.help) return 'help';
  if (values.version) return 'version';
  const files = values.filename ?? [];
  if (files.length === 0) throw new UsageError('-f: at least one manifest file, directory or - is required');

  const operation = (values.operation ?? 'CREATE').toUpperCase();
  if (!(OPERATIONS as readonly string[]).includes(operation)) {
    throw new UsageError(
      `--operation: must be one of ${OPERATIONS.join(', ')} (got ${JSON.stringify(values.operation)})`,
    );
  }
  const old = values.old ?? [];
  if (operation === 'UPDATE' && old.length === 0) {
    throw new UsageError('--old: UPDATE needs the objects as they are now (--old <file>)');
  }
  if (operation !== 'UPDATE' && old.length > 0) throw new UsageError('--old: only UPDATE takes old objects');
  const output = values.output ?? 'text';
  if (!(FORMATS as readonly string[]).includes(output)) {
    throw new UsageError(`-o: must be one of ${FORMATS.join(', ')} (got ${JSON.stringify(output)})`);
  }
  if (!values.cluster && (values.kubeconfig !== undefined || values.context !== undefined)) {
    throw new UsageError('--kubeconfig and --context need --cluster');
  }
  let enforcement: Enforcement | undefined;
  if (values.enforcement !== undefined) {
    const read = readEnforcement(values.enforcement, enforceableNames(), FieldPath.of('--enforcement'));
    if (!read.ok) throw new UsageError(read.error.join('; '));
    enforcement = read.value;
  }
  const warnExitText = values['warn-exit-code'] ?? '0';
  const warnExitCode = Number(warnExitText);
  if (!/^\d{1,3}$/.test(warnExitText) || warnExitCode > 255) {
    throw new UsageError(
      `--warn-exit-code: must be an exit code from 0 to 255 (got ${JSON.stringify(warnExitText)})`,
    );
  }

  return {
    files,
    state: values.state ?? [],
    cluster: values.cluster ?? false,
    kubeconfig: values.kubeconfig,
    context: values.context,
    defaultNamespace: values.namespace,
    operation: operation as AdmitOptions['operation'],
    old,
    output: output as OutputFormat,
    expandWorkloads: values['expand-workloads'] ?? false,
    enforcement,
    warnExitCode,
    ...tableFlagsOf(values, env),
  };
}

/** parseArgs options of the flags that shape the webhook table (shared by admit and audit). */
export const TABLE_FLAG_OPTIONS = {
  'feature-gates': { type: 'string' },
  'webhook-overrides': { type: 'string' },
  'operator-namespace': { type: 'string' },
  'slo-config-namespace': { type: 'string' },
  'excluded-namespaces': { type: 'string' },
  'webhook-namespace-selector': { type: 'string' },
  'webhook-object-selector': { type: 'string' },
  'max-amplification-ratio': { type: 'string' },
} as const;

type TableFlagValues = { [flag in keyof typeof TABLE_FLAG_OPTIONS]?: string | undefined };

/** The table flags from the command line, else the operator's environment variables, else defaults. */
export function tableFlagsOf(values: TableFlagValues, env: NodeJS.ProcessEnv): TableFlags {
  const fromEnv = (flag: string, fallback: string): string =>
    env[`ADMISSION_${flag.toUpperCase().replaceAll('-', '_')}`] ?? fallback;
  let featureGates: FeatureGates;
  let webhookOverrides: Record<string, WebhookOverride>;
  let webhookNamespaceSelector: V1LabelSelector | undefined;
  let webhookObjectSelector: V1LabelSelector | undefined;
  try {
    featureGates = parseFeatureGates(values['feature-gates'] ?? fromEnv('feature-gates', ''));
    webhookOverrides = parseWebhookOverrides(
      values['webhook-overrides'] ?? fromEnv('webhook-overrides', '{}'),
    );
    webhookNamespaceSelector = parseSelectorFlag(
      'webhook-namespace-selector',
      values['webhook-namespace-selector'] ?? fromEnv('webhook-namespace-selector', ''),
    );
    webhookObjectSelector = parseSelectorFlag(
      'webhook-object-selector',
      values['webhook-object-selector'] ?? fromEnv('webhook-object-selector', ''),
    );
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const ratioText = values['max-amplification-ratio'] ?? fromEnv('max-amplification-ratio', '10');
  const maxAmplificationRatio = Number(ratioText);
  if (!Number.isFinite(maxAmplificationRatio) || maxAmplificationRatio < 1) {
    throw new UsageError(
      `--max-amplification-ratio: must be a number of at least 1 (got ${JSON.stringify(ratioText)})`,
    );
  }
  return {
    featureGates,
    webhookOverrides,
    operatorNamespace: values['operator-namespace'] ?? fromEnv('namespace', 'admission-system'),
    sloConfigNamespace:
      values['slo-config-namespace'] ?? fromEnv('slo-config-namespace', 'koordinator-system'),
    excludedNamespaces: (values['excluded-namespaces'] ?? fromEnv('excluded-namespaces', ''))
      .split(',')
      .map((ns) => ns.trim())
      .filter((ns) => ns !== ''),
    webhookNamespaceSelector,
    webhookObjectSelector,
    maxAmplificationRatio,
  };
}
