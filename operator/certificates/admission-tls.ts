/**
 * Everything TLS on the admission port beyond the serving certificate: the CAs client
 * certificates are verified against (the admin's client CA file, for the API server, and the CA
 * bundle of `webhook-tls`, for replicas), and this replica's own client certificate, issued from
 * the Secret's CA, which it presents when it forwards a review to the leader.
 *
 * The client CA file is read at start (an unusable one stops the start: verification that
 * silently verifies nothing is worse than none) and read again every CLIENT_CA_RECHECK_MS, as a
 * mounted ConfigMap changes in place; a file that becomes unusable keeps the last good CAs.
 */
import { EventEmitter } from 'node:events';
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { REPLICA_COMMON_NAME } from '../../webhook/server/caller-verification.js';
import type { ServingTls } from '../../webhook/server/https-server.js';
import type { Clock } from '../kube/clock.js';
import type { ServingMaterial } from './tls-plan.js';
import { issueCertificate, parseCertificate, splitPemCertificates, type Signer } from './x509.js';

const CLIENT_CA_RECHECK_MS = 30_000;
/** A replica's client certificate lives a week and is renewed after two thirds of it. */
const REPLICA_CERTIFICATE_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000;
const REPLICA_RENEW_AFTER_MS = (REPLICA_CERTIFICATE_LIFETIME_MS * 2) / 3;

export interface ClientCertificate {
  certificatePem: string;
  privateKeyPem: string;
}

export interface AdmissionTlsOptions {
  /** PEM file of the CAs that issue the API server's client certificates; undefined: none. */
  clientCaFile: string | undefined;
  clock: Clock;
  logger: Logger;
}

/** The certificates of a PEM bundle; throws naming the file when there is none. */
function parseCas(pem: string, source: string): X509Certificate[] {
  const cas = splitPemCertificates(pem)
    .map((block) => parseCertificate(block))
    .filter((ca): ca is X509Certificate => ca !== undefined);
  if (cas.length === 0) throw new Error(`${source} holds no PEM certificate`);
  return cas;
}

export class AdmissionTls extends EventEmitter<{ changed: [ServingTls] }> {
  private material: ServingMaterial | undefined;
  private clientCaPem = '';
  private ownCas: X509Certificate[] = [];
  private replica: { signer: Signer; certificate: ClientCertificate; issuedAt: number } | undefined;
  private issuing: Promise<void> | undefined;
  private replicaRenewal: unknown;
  private recheck: unknown;
  private stopped = false;

  constructor(private readonly options: AdmissionTlsOptions) {
    super();
  }

  /** Reads the client CA file; rejects, naming the file and the problem, when it cannot be used. */
  async start(): Promise<void> {
    const { clientCaFile } = this.options;
    if (clientCaFile === undefined) return;
    this.clientCaPem = await this.readClientCas(clientCaFile);
    this.scheduleRecheck(clientCaFile);
  }

  stop(): void {
    this.stopped = true;
    this.options.clock.clearTimeout(this.recheck);
    this.options.clock.clearTimeout(this.replicaRenewal);
  }

  /** What the admission port serves and trusts; undefined before the first material. */
  get serving(): ServingTls | undefined {
    const material = this.material;
    if (!material) return undefined;
    return {
      certificatePem: material.servingCertPem,
      privateKeyPem: material.servingKeyPem,
      clientCaPem: joinPem(this.clientCaPem, material.caBundlePem),
    };
  }

  /** The CAs of `webhook-tls`: what a replica's client certificate must chain to. */
  replicaCas(): readonly X509Certificate[] {
    return this.ownCas;
  }

  /** This replica's client certificate for forwards; undefined until issued, or without the Secret's CA key. */
  replicaCertificate(): ClientCertificate | undefined {
    return this.replica?.certificate;
  }

  /** Takes new serving material (a rotation): serves it, and issues a client certificate from its CA. */
  setMaterial(material: ServingMaterial): void {
    const bundleChanged = this.material?.caBundlePem !== material.caBundlePem;
    this.material = material;
    if (bundleChanged) this.ownCas = parseCas(material.caBundlePem, 'ca.crt of webhook-tls');
    this.changed();
    this.followSigner();
  }

  /** Resolves once the replica certificate for the current signer is issued (tests and start-up). */
  async replicaCertificateIssued(): Promise<void> {
    while (this.issuing) await this.issuing;
  }

  private changed(): void {
    const serving = this.serving;
    if (serving) this.emit('changed', serving);
  }

  private followSigner(): void {
    const signer = this.material?.signer;
    const kept = this.replica;
    const sameSigner =
      kept !== undefined &&
      signer !== undefined &&
      kept.signer.certificatePem === signer.certificatePem &&
      kept.signer.privateKeyPem === signer.privateKeyPem;
    if (sameSigner && this.options.clock.monotonic() - kept.issuedAt < REPLICA_RENEW_AFTER_MS) return;
    if (!signer) {
      // A bring-your-own Secret holds no CA key: this replica cannot prove itself, so it decides
      // every review itself (see docs/security.md).
      this.replica = undefined;
      return;
    }
    if (this.issuing) return;
    this.issuing = this.issueReplicaCertificate(signer).finally(() => {
      this.issuing = undefined;
      // The material may have moved on while the key was generated.
      if (!this.stopped && this.material?.signer !== signer) this.followSigner();
    });
  }

  private async issueReplicaCertificate(signer: Signer): Promise<void> {
    const { clock, logger } = this.options;
    try {
      const certificate = await issueCertificate(
        {
          commonName: REPLICA_COMMON_NAME,
          usage: 'client',
          lifetimeMs: REPLICA_CERTIFICATE_LIFETIME_MS,
          now: clock.now(),
        },
        signer,
      );
      this.replica = {
        signer,
        certificate: { certificatePem: certificate.certificatePem, privateKeyPem: certificate.privateKeyPem },
        issuedAt: clock.monotonic(),
      };
      clock.clearTimeout(this.replicaRenewal);
      this.replicaRenewal = clock.setTimeout(
        () => {
          this.followSigner();
        },
        REPLICA_RENEW_AFTER_MS,
        true,
      );
    } catch (error) {
      logger.error(
        { err: error },
        'cannot issue the replica client certificate; forwards to the leader stop',
      );
      this.replica = undefined;
    }
  }

  private async readClientCas(path: string): Promise<string> {
    let pem: string;
    try {
      pem = await readFile(path, 'utf8');
    } catch (error) {
      throw new Error(`--client-ca-file: cannot read ${path}: ${(error as Error).message}`, { cause: error });
    }
    parseCas(pem, `--client-ca-file ${path}`);
    return pem;
  }

  private scheduleRecheck(path: string): void {
    if (this.stopped) return;
    this.recheck = this.options.clock.setTimeout(
      () => {
        void this.readClientCas(path)
          .then((pem) => {
            if (pem === this.clientCaPem) return;
            this.clientCaPem = pem;
            this.options.logger.info({ file: path }, 'the client CA file changed');
            this.changed();
          })
          .catch((error: unknown) => {
            this.options.logger.error(
              { err: error, file: path },
              'the client CA file cannot be used; keeping the CAs read before',
            );
          })
          .finally(() => {
            this.scheduleRecheck(path);
          });
      },
      CLIENT_CA_RECHECK_MS,
      true,
    );
  }
}

function joinPem(...parts: string[]): string {
  return parts
    .filter((part) => part.trim() !== '')
    .map((part) => (part.endsWith('\n') ? part : `${part}\n`))
    .join('');
}
