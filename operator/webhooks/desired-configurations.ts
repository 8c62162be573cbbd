/**
 * The two webhook configurations, generated from the webhook table, the CA bundle and how
 * the API server reaches us; and the comparison that tells whether what is stored drifted.
 */
import type {
  AdmissionregistrationV1WebhookClientConfig,
  V1OwnerReference,
  V1MutatingWebhook,
  V1MutatingWebhookConfiguration,
  V1ValidatingWebhook,
  V1ValidatingWebhookConfiguration,
} from '@kubernetes/client-node';
import type { WebhookEntry } from '../../webhook/table.js';
import { own } from '../../webhook/util/own.js';

export const CONFIGURATION_NAME = 'admission-operator';
const MANAGED_LABELS = { 'app.kubernetes.io/managed-by': 'admission-operator' } as const;

/** How the API server reaches the admission server. */
export type Endpoint =
  | { mode: 'service'; namespace: string; name: string; port: number }
  | { mode: 'url'; host: string; port: number };

function clientConfig(
  endpoint: Endpoint,
  path: string,
  caBundlePem: string,
): AdmissionregistrationV1WebhookClientConfig {
  const caBundle = Buffer.from(caBundlePem).toString('base64');
  if (endpoint.mode === 'service') {
    return {
      service: { namespace: endpoint.namespace, name: endpoint.name, path, port: endpoint.port },
      caBundle,
    };
  }
  const host = endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host;
  return { url: `https://${host}:${endpoint.port}${path}`, caBundle };
}

function common(entry: WebhookEntry, endpoint: Endpoint, caBundlePem: string): V1ValidatingWebhook {
  return {
    name: entry.name,
    admissionReviewVersions: ['v1'],
    clientConfig: clientConfig(endpoint, entry.path, caBundlePem),
    rules: entry.resourceRules.map((rule) => ({ ...rule })),
    failurePolicy: entry.failurePolicy,
    matchPolicy: 'Equivalent',
    sideEffects: 'None',
    timeoutSeconds: entry.timeoutSeconds,
    namespaceSelector: entry.namespaceSelector,
    objectSelector: entry.objectSelector,
    matchConditions: entry.matchConditions,
  };
}

export function desiredMutating(
  entries: readonly WebhookEntry[],
  endpoint: Endpoint,
  caBundlePem: string,
): V1MutatingWebhookConfiguration {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: CONFIGURATION_NAME, labels: { ...MANAGED_LABELS } },
    webhooks: entries
      .filter((entry) => entry.type === 'mutating')
      .map((entry): V1MutatingWebhook => ({
        ...common(entry, endpoint, caBundlePem),
        reinvocationPolicy: entry.reinvocationPolicy ?? 'Never',
      })),
  };
}

export function desiredValidating(
  entries: readonly WebhookEntry[],
  endpoint: Endpoint,
  caBundlePem: string,
): V1ValidatingWebhookConfiguration {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: CONFIGURATION_NAME, labels: { ...MANAGED_LABELS } },
    webhooks: entries
      .filter((entry) => entry.type === 'validating')
      .map((entry) => common(entry, endpoint, caBundlePem)),
  };
}

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(value).length === 0;
}

/**
 * Where `actual` differs from `desired`, as a field path, or undefined when it does not.
 * Only what we set is compared (an empty list or object equals an absent one, as the API
 * server may omit them); arrays must match element by element, so an entry someone added
 * or removed is drift too.
 */
export function findDrift(desired: unknown, actual: unknown, path = ''): string | undefined {
  if (isEmpty(desired) && isEmpty(actual)) return undefined;
  if (Array.isArray(desired)) {
    if (!Array.isArray(actual) || actual.length !== desired.length) return path || '.';
    for (const [index, item] of desired.entries()) {
      const drift = findDrift(item, actual[index], `${path}[${index}]`);
      if (drift) return drift;
    }
    return undefined;
  }
  if (typeof desired === 'object' && desired !== null) {
    if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return path || '.';
    const actualRecord = actual as Record<string, unknown>;
    for (const [key, value] of Object.entries(desired)) {
      const drift = findDrift(value, own(actualRecord, key), path ? `${path}.${key}` : key);
      if (drift) return drift;
    }
    return undefined;
  }
  return desired === actual ? undefined : path || '.';
}

/** Same owner: the same uid, or the same kind and name (a recreated owner has a new uid). */
function sameOwner(a: V1OwnerReference, b: V1OwnerReference): boolean {
  return a.uid === b.uid || (a.kind === b.kind && a.name === b.name && a.apiVersion === b.apiVersion);
}

/**
 * Where the owner references drift: only when we have an owner to set and it is not there as
 * we write it. Others' references are left alone, and so are all of them when our owner cannot
 * be resolved (not configured, or its ClusterRole missing): a replace keeps the stored ones, so
 * calling that drift would repair the same object forever.
 */
export function ownerReferenceDrift(
  owner: V1OwnerReference | undefined,
  actual: readonly V1OwnerReference[] | undefined,
): string | undefined {
  if (!owner) return undefined;
  const index = (actual ?? []).findIndex((reference) => sameOwner(reference, owner));
  const found = index >= 0 ? actual?.[index] : undefined;
  if (!found) return 'metadata.ownerReferences';
  return findDrift(owner, found, `metadata.ownerReferences[${index}]`);
}

/** The owner references to write: the stored ones, with ours (when resolved) replacing any older one. */
export function mergeOwnerReferences(
  owner: V1OwnerReference | undefined,
  actual: readonly V1OwnerReference[] | undefined,
): V1OwnerReference[] | undefined {
  if (!owner) return actual ? [...actual] : undefined;
  return [...(actual ?? []).filter((reference) => !sameOwner(reference, owner)), owner];
}

/** True when every webhook of `configuration` trusts `caPem` (a configuration with no webhooks trusts anything). */
export function trustsCa(
  configuration: { webhooks?: { clientConfig: { caBundle?: string } }[] },
  caPem: string,
): boolean {
  const wanted = normalizePem(caPem);
  return (configuration.webhooks ?? []).every((webhook) =>
    normalizePem(Buffer.from(webhook.clientConfig.caBundle ?? '', 'base64').toString('utf8')).includes(
      wanted,
    ),
  );
}

function normalizePem(pem: string): string {
  return pem.replace(/\s+/g, '');
}
