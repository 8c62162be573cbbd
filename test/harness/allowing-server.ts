/**
 * A certificate for 127.0.0.1/localhost from a throwaway CA, and the real admission server over
 * TLS with one webhook that allows everything: what transport tests (limits, drain) need.
 */
import { pino } from 'pino';
import { allow } from '../../webhook/admission/decisions.js';
import { admissionMetrics, type AdmissionMetrics } from '../../webhook/metrics/admission-metrics.js';
import { createAdmissionApp, type AdmissionAppOptions } from '../../webhook/server/app.js';
import {
  AdmissionHttpsServer,
  type ServingTls,
  type TransportLimits,
} from '../../webhook/server/https-server.js';
import { CallerVerifier } from '../../webhook/server/caller-verification.js';
import { WEBHOOK_CLIENT_NAME } from '../../scripts/cluster/pki.js';
import {
  createCertificateAuthority,
  issueCertificate,
  type Signer,
} from '../../operator/certificates/x509.js';
import type { WebhookEntry } from '../../webhook/table.js';
import { stateSnapshot } from './state.js';

export interface LocalCertificate {
  /** The CA that signed it (PEM), for clients to trust; it also issued `apiServer`. */
  ca: string;
  certificatePem: string;
  privateKeyPem: string;
  /** A client certificate named as the local cluster's API server's (WEBHOOK_CLIENT_NAME), from `ca`. */
  apiServer: { cert: string; key: string };
  /** The CA and its key, to issue more certificates from (a replica's). */
  authority: Signer;
}

export async function localServingCertificate(commonName = 'test-ca'): Promise<LocalCertificate> {
  const authority = await createCertificateAuthority({ commonName, lifetimeMs: 3600_000 });
  const leaf = await issueCertificate(
    {
      commonName: 'localhost',
      usage: 'server',
      lifetimeMs: 3600_000,
      dnsNames: ['localhost'],
      ipAddresses: ['127.0.0.1'],
    },
    authority,
  );
  const client = await issueCertificate(
    { commonName: WEBHOOK_CLIENT_NAME, usage: 'client', lifetimeMs: 3600_000 },
    authority,
  );
  return {
    ca: authority.certificatePem,
    certificatePem: leaf.certificatePem,
    privateKeyPem: leaf.privateKeyPem,
    apiServer: { cert: client.certificatePem, key: client.privateKeyPem },
    authority: { certificatePem: authority.certificatePem, privateKeyPem: authority.privateKeyPem },
  };
}

/**
 * Callers as the operator verifies them with --client-ca-file and --client-subject-names: only
 * `apiServer` of the certificate gets an answer (or, with `required: false`, as with verification
 * off, everyone does, and nobody's admission reserves quota).
 */
export function apiServerCallers(required = true): CallerVerifier {
  return new CallerVerifier({
    policy: { subjectNames: required ? [WEBHOOK_CLIENT_NAME] : [], tokenUsers: [] },
    replicaCas: () => [],
  });
}

/**
 * Takes every caller for the verified API server: for unit tests of the app over plain HTTP,
 * where there is no TLS to verify anyone with.
 */
export const trustingCallers: AdmissionAppOptions['callers'] = {
  required: false,
  identify: () => Promise.resolve({ verified: true, as: 'api-server', via: 'certificate' }),
};

/** The TLS of a test server: `certificate` served, its CA trusted for client certificates. */
export function servingTls(certificate: LocalCertificate): ServingTls {
  return {
    certificatePem: certificate.certificatePem,
    privateKeyPem: certificate.privateKeyPem,
    clientCaPem: certificate.ca,
  };
}

export interface AllowingServer {
  server: AdmissionHttpsServer;
  port: number;
  ca: string;
  /** The API server's client certificate, for callers when `verifyCallers` is on. */
  apiServer: LocalCertificate['apiServer'];
  metrics: AdmissionMetrics;
}

/** A `/validate-pod` webhook (Fail, no selectors) answering with `handler`. */
export function testValidatePodEntry(name: string, handler: WebhookEntry['handler']): WebhookEntry {
  return {
    name,
    path: '/validate-pod',
    type: 'validating',
    resourceRules: [],
    failurePolicy: 'Fail',
    timeoutSeconds: 10,
    namespaceSelector: {},
    objectSelector: {},
    matchConditions: [],
    featureGate: 'PodValidatingWebhook',
    handler,
  };
}

export interface AllowingServerOptions {
  /** Receives every log line of the app and the transport, from debug up; none are kept when omitted. */
  log?: (line: string) => void;
  /** The `/validate-pod` rule; allows everything when omitted. */
  handler?: WebhookEntry['handler'];
  forward?: AdmissionAppOptions['forward'];
  /** Only the API server's client certificate gets an answer (default: everyone does, as with verification off). */
  verifyCallers?: boolean;
}

/** The admission server on 127.0.0.1 (a free port) with `/validate-pod` allowing everything. */
export async function startAllowingServer(
  limits?: TransportLimits,
  options: AllowingServerOptions = {},
): Promise<AllowingServer> {
  const metrics = admissionMetrics();
  const certificate = await localServingCertificate();
  const { log } = options;
  const logger = log ? pino({ level: 'debug' }, { write: log }) : pino({ level: 'silent' });
  const app = createAdmissionApp({
    webhooks: () => [testValidatePodEntry('allow.test.io', options.handler ?? (() => allow()))],
    state: () => stateSnapshot(),
    readiness: () => Promise.resolve({ ready: true, checks: {} }),
    metrics,
    logger,
    ...(options.forward ? { forward: options.forward } : {}),
    callers: apiServerCallers(options.verifyCallers === true),
  });
  const server = new AdmissionHttpsServer(app, logger, metrics, limits);
  const port = await server.listen(0, '127.0.0.1', servingTls(certificate));
  return { server, port, ca: certificate.ca, apiServer: certificate.apiServer, metrics };
}
