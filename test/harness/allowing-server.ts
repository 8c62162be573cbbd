/**
 * A certificate for 127.0.0.1/localhost from a throwaway CA, and the real admission server over
 * TLS with one webhook that allows everything: what transport tests (limits, drain) need.
 */
import { pino } from 'pino';
import { allow } from '../../webhook/admission/decisions.js';
import { admissionMetrics, type AdmissionMetrics } from '../../webhook/metrics/admission-metrics.js';
import { createAdmissionApp, type AdmissionAppOptions } from '../../webhook/server/app.js';
import { AdmissionHttpsServer, type TransportLimits } from '../../webhook/server/https-server.js';
import { createCertificateAuthority, issueCertificate } from '../../operator/certificates/x509.js';
import type { WebhookEntry } from '../../webhook/table.js';
import { stateSnapshot } from './state.js';

export interface LocalCertificate {
  /** The CA that signed it (PEM), for clients to trust. */
  ca: string;
  certificatePem: string;
  privateKeyPem: string;
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
  return {
    ca: authority.certificatePem,
    certificatePem: leaf.certificatePem,
    privateKeyPem: leaf.privateKeyPem,
  };
}

export interface AllowingServer {
  server: AdmissionHttpsServer;
  port: number;
  ca: string;
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
}

/** The admission server on 127.0.0.1 (a free port) with `/validate-pod` allowing everything. */
export async function startAllowingServer(
  limits?: TransportLimits,
  options: AllowingServerOptions = {},
): Promise<AllowingServer> {
  const metrics = admissionMetrics();
  const { ca, certificatePem, privateKeyPem } = await localServingCertificate();
  const { log } = options;
  const logger = log ? pino({ level: 'debug' }, { write: log }) : pino({ level: 'silent' });
  const app = createAdmissionApp({
    webhooks: () => [testValidatePodEntry('allow.test.io', options.handler ?? (() => allow()))],
    state: () => stateSnapshot(),
    readiness: () => Promise.resolve({ ready: true, checks: {} }),
    metrics,
    logger,
    ...(options.forward ? { forward: options.forward } : {}),
  });
  const server = new AdmissionHttpsServer(app, logger, metrics, limits);
  const port = await server.listen(0, '127.0.0.1', { certificatePem, privateKeyPem });
  return { server, port, ca, metrics };
}
