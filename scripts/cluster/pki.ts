/**
 * The local control plane's PKI: one CA, the API server's serving certificate, client
 * certificates for the admin and the controller manager, and the service-account keys.
 * It reuses the operator's own X.509 code, so the cluster scripts exercise it too.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  createCertificateAuthority,
  generateRsaKeyPair,
  issueCertificate,
} from '../../operator/certificates/x509.js';
import { pkiDir } from './layout.js';

const YEAR_MS = 365 * 24 * 60 * 60 * 1000;

/** Paths of the PEM files, by role. */
export interface ClusterPki {
  caCert: string;
  apiserverCert: string;
  apiserverKey: string;
  adminCert: string;
  adminKey: string;
  controllerManagerCert: string;
  controllerManagerKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
}

export async function createClusterPki(): Promise<ClusterPki> {
  await mkdir(pkiDir, { recursive: true, mode: 0o700 });
  const ca = await createCertificateAuthority({
    commonName: 'admission-operator-local-cluster-ca',
    lifetimeMs: YEAR_MS,
  });
  const apiserver = await issueCertificate(
    {
      commonName: 'kube-apiserver',
      usage: 'server',
      lifetimeMs: YEAR_MS,
      dnsNames: [
        'localhost',
        'kubernetes',
        'kubernetes.default',
        'kubernetes.default.svc',
        'kubernetes.default.svc.cluster.local',
      ],
      ipAddresses: ['127.0.0.1', '10.0.0.1'],
    },
    ca,
  );
  const admin = await issueCertificate(
    { commonName: 'admin', organizations: ['system:masters'], usage: 'client', lifetimeMs: YEAR_MS },
    ca,
  );
  const controllerManager = await issueCertificate(
    { commonName: 'system:kube-controller-manager', usage: 'client', lifetimeMs: YEAR_MS },
    ca,
  );
  const serviceAccount = await generateRsaKeyPair();

  const contents: Record<keyof ClusterPki, [file: string, pem: string]> = {
    caCert: ['ca.crt', ca.certificatePem],
    apiserverCert: ['apiserver.crt', apiserver.certificatePem],
    apiserverKey: ['apiserver.key', apiserver.privateKeyPem],
    adminCert: ['admin.crt', admin.certificatePem],
    adminKey: ['admin.key', admin.privateKeyPem],
    controllerManagerCert: ['controller-manager.crt', controllerManager.certificatePem],
    controllerManagerKey: ['controller-manager.key', controllerManager.privateKeyPem],
    serviceAccountKey: ['sa.key', serviceAccount.privateKeyPem],
    serviceAccountPub: ['sa.pub', serviceAccount.publicKeyPem],
  };
  const paths = {} as Record<keyof ClusterPki, string>;
  for (const [key, [file, pem]] of Object.entries(contents) as [keyof ClusterPki, [string, string]][]) {
    paths[key] = join(pkiDir, file);
    await writeFile(paths[key], pem, { mode: 0o600 });
  }
  return paths;
}
