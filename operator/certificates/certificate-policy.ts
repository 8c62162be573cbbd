/**
 * The certificate policy the options ask for: lifetimes and renewal margins, and the names the
 * serving certificate must carry for the API server (and the other replicas) to verify it.
 */
import type { OperatorOptions } from '../config/options.js';
import type { Endpoint } from '../webhooks/desired-configurations.js';
import type { CertificatePolicy } from './tls-plan.js';

/** The longest a certificate check may wait, so a renewal missed while suspended fires within a minute. */
const MAX_CHECK_INTERVAL_MS = 60_000;

type NameOptions = Pick<OperatorOptions, 'serviceName' | 'namespace'>;
type PolicyOptions = NameOptions &
  Pick<
    OperatorOptions,
    'caLifetimeMs' | 'caRenewBeforeMs' | 'certLifetimeMs' | 'certRenewBeforeMs' | 'bundlePropagationMs'
  >;

/**
 * The Service's names, and in URL mode the host the configurations name (with localhost and
 * 127.0.0.1, which the replicas on one host dial).
 */
function servingNames(
  options: NameOptions,
  endpoint: Endpoint,
): Pick<CertificatePolicy, 'dnsNames' | 'ipAddresses'> {
  const service = `${options.serviceName}.${options.namespace}.svc`;
  const dnsNames = [service, `${service}.cluster.local`];
  const ipAddresses: string[] = [];
  if (endpoint.mode === 'url') {
    dnsNames.push('localhost');
    ipAddresses.push('127.0.0.1');
    if (/^[\d.]+$/.test(endpoint.host) || endpoint.host.includes(':')) {
      if (!ipAddresses.includes(endpoint.host)) ipAddresses.push(endpoint.host);
    } else if (!dnsNames.includes(endpoint.host)) {
      dnsNames.push(endpoint.host);
    }
  }
  return { dnsNames, ipAddresses };
}

export function certificatePolicy(options: PolicyOptions, endpoint: Endpoint): CertificatePolicy {
  return {
    caLifetimeMs: options.caLifetimeMs,
    caRenewBeforeMs: options.caRenewBeforeMs,
    servingLifetimeMs: options.certLifetimeMs,
    servingRenewBeforeMs: options.certRenewBeforeMs,
    bundlePropagationMs: options.bundlePropagationMs,
    maxCheckIntervalMs: MAX_CHECK_INTERVAL_MS,
    ...servingNames(options, endpoint),
  };
}

/** The name the API server verifies the serving certificate against: the URL's host, or the Service's. */
export function verifiedName(policy: Pick<CertificatePolicy, 'dnsNames'>, endpoint: Endpoint): string {
  return endpoint.mode === 'url' ? endpoint.host : (policy.dnsNames[0] ?? '');
}
