/**
 * What Koordinator v1.8.0's official chart says about koord-manager, read from its `helm template`
 * render: which of its objects a host process of koord-manager needs in the cluster, and the
 * process's flags and environment. Pure functions of the rendered documents (unit-tested); the
 * harness that renders and runs is koord-manager.ts.
 */

/** One rendered object, as much of it as these functions read. */
export interface RenderedObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  [field: string]: unknown;
}

/**
 * The gates the bench runs koord-manager with: the chart's default (`featureGates: ""`, so every
 * gate at koord-manager's own default: the pod and ElasticQuota webhooks on, node, ConfigMap and
 * reservation webhooks off) plus quota admission, off by default, without which its pod webhook
 * checks no quota at all.
 */
export const KOORD_MANAGER_GATES = 'EnableQuotaAdmission=true';

/** `helm template` arguments for the chart with those gates and `replicas` koord-managers. */
export function chartRenderArguments(chart: string, replicas: number, gates = KOORD_MANAGER_GATES): string[] {
  if (!Number.isInteger(replicas) || replicas < 1)
    throw new Error(`replicas must be a positive integer, got ${replicas}`);
  return [
    'template',
    'koordinator',
    chart,
    '--set',
    `featureGates=${gates}`,
    '--set',
    `manager.replicas=${replicas}`,
  ];
}

/** The kinds koord-manager needs from the chart when it runs as a process outside the cluster. */
const NEEDED_KINDS = new Set([
  'Namespace',
  'CustomResourceDefinition',
  'PriorityClass',
  'MutatingWebhookConfiguration',
  'ValidatingWebhookConfiguration',
]);

/**
 * The chart's objects a host process of koord-manager needs: its namespace, the CRDs its caches
 * and controllers watch (it does not start without them), the priority classes, both webhook
 * configurations unchanged (koord-manager itself turns their `service` into a `url` when
 * WEBHOOK_HOST is set, and fills the caBundle), and its namespace's ConfigMaps and the webhook
 * certificate Secret. Left out: the Deployments, DaemonSets and Services of its pods (none run
 * here), and RBAC (the process runs with the cluster's admin kubeconfig).
 */
export function koordManagerObjects(
  documents: readonly RenderedObject[],
  namespace: string,
): RenderedObject[] {
  return documents.filter((object) => {
    const kind = object.kind ?? '';
    if (NEEDED_KINDS.has(kind)) return true;
    return (kind === 'ConfigMap' || kind === 'Secret') && object.metadata?.namespace === namespace;
  });
}

interface Container {
  name?: string;
  command?: string[];
  args?: string[];
  env?: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath?: string } } }[];
}

export interface KoordManagerProcess {
  /** The flags the chart passes, in its order. */
  args: string[];
  /** The chart's environment with the Downward API resolved, then the host mode's variables. */
  env: Record<string, string>;
}

export interface HostMode {
  /** What the API server dials: the configurations get `https://<host>:<port><path>`. */
  host: string;
  /** koord-manager listens on it (in its own network namespace) and writes it into the URLs. */
  port: number;
  /** Where its webhook controller writes the serving certificate it generated. */
  certDir: string;
}

/**
 * koord-manager's flags and environment from the chart's Deployment, run in host mode:
 * WEBHOOK_HOST makes its webhook controller write `url`s instead of the chart's `service` and a
 * certificate for that address; WEBHOOK_CERT_WRITER=secret keeps its CA in the chart's Secret (host
 * mode otherwise keeps one per process on its own disk, and two replicas would fight over the
 * caBundle); WEBHOOK_PORT is the chart's variable, moved to the port the balancer listens on.
 */
export function koordManagerProcess(
  documents: readonly RenderedObject[],
  mode: HostMode,
): KoordManagerProcess {
  const deployment = documents.find(
    (object) => object.kind === 'Deployment' && object.metadata?.name === 'koord-manager',
  );
  if (!deployment) throw new Error('the render holds no Deployment koord-manager');
  const namespace = deployment.metadata?.namespace;
  if (!namespace) throw new Error('Deployment koord-manager: metadata.namespace is missing');
  const spec = deployment.spec as { template?: { spec?: { containers?: Container[] } } } | undefined;
  const container = spec?.template?.spec?.containers?.find((each) => each.name === 'manager');
  if (!container) throw new Error('Deployment koord-manager: spec.template.spec.containers has no "manager"');
  const env: Record<string, string> = {};
  for (const variable of container.env ?? []) {
    if (variable.value !== undefined) env[variable.name] = variable.value;
    else if (variable.valueFrom?.fieldRef?.fieldPath === 'metadata.namespace') env[variable.name] = namespace;
    else
      throw new Error(
        `Deployment koord-manager: env ${variable.name} has a source this harness cannot resolve`,
      );
  }
  if (!Number.isInteger(mode.port) || mode.port < 1 || mode.port > 65535)
    throw new Error(`the webhook port must be an integer from 1 to 65535, got ${mode.port}`);
  return {
    args: [...(container.args ?? [])],
    env: {
      ...env,
      WEBHOOK_HOST: mode.host,
      WEBHOOK_PORT: String(mode.port),
      WEBHOOK_CERT_WRITER: 'secret',
      WEBHOOK_CERT_DIR: mode.certDir,
    },
  };
}

/** The names of the chart's two webhook configurations (koord-manager finds them by these). */
export function webhookConfigurationNames(documents: readonly RenderedObject[]): {
  mutating: string;
  validating: string;
} {
  const named = (kind: string): string => {
    const name = documents.find((object) => object.kind === kind)?.metadata?.name;
    if (!name) throw new Error(`the render holds no ${kind}`);
    return name;
  };
  return {
    mutating: named('MutatingWebhookConfiguration'),
    validating: named('ValidatingWebhookConfiguration'),
  };
}
