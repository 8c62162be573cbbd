/**
 * The local control plane's PKI: one CA, the API server's serving certificate, client
 * certificates for the admin, the controller manager and the API server calling admission webhooks,
 * and the service-account keys; with a
 * node, client certificates for the kubelet, kube-scheduler, kube-proxy and for the API server
 * calling the kubelet, and the node's address in the API server's certificate.
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

/**
 * The subject of the client certificate the API server presents to admission webhooks (its
 * AdmissionConfiguration's kubeConfigFile): the name the operator is told to accept, as an admin
 * of a kubeadm cluster would issue it.
 */
export const WEBHOOK_CLIENT_NAME = 'kube-apiserver-webhook-client';

/** Paths of the PEM files, by role. */
export interface ClusterPki {
  caCert: string;
  apiserverCert: string;
  apiserverKey: string;
  adminCert: string;
  adminKey: string;
  controllerManagerCert: string;
  controllerManagerKey: string;
  /** The API server's client certificate for calling admission webhooks (WEBHOOK_CLIENT_NAME). */
  webhookClientCert: string;
  webhookClientKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
}

/** The node's client certificates, by role. */
export interface NodePki {
  kubeletCert: string;
  kubeletKey: string;
  schedulerCert: string;
  schedulerKey: string;
  proxyCert: string;
  proxyKey: string;
  apiserverKubeletClientCert: string;
  apiserverKubeletClientKey: string;
}

export interface NodeIdentity {
  /** The Node's name: the kubelet authenticates as `system:node:<name>`. */
  name: string;
  /** The address pods reach the API server on, named in its certificate. */
  address: string;
}

async function writePems<K extends string>(
  contents: Record<K, [file: string, pem: string]>,
): Promise<Record<K, string>> {
  const paths = {} as Record<K, string>;
  for (const [key, [file, pem]] of Object.entries(contents) as [K, [string, string]][]) {
    paths[key] = join(pkiDir, file);
    await writeFile(paths[key], pem, { mode: 0o600 });
  }
  return paths;
}

export async function createClusterPki(node?: NodeIdentity): Promise<ClusterPki & { node?: NodePki }> {
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
      ipAddresses: ['127.0.0.1', '10.0.0.1', ...(node ? [node.address] : [])],
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
  const webhookClient = await issueCertificate(
    { commonName: WEBHOOK_CLIENT_NAME, usage: 'client', lifetimeMs: YEAR_MS },
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
    webhookClientCert: ['webhook-client.crt', webhookClient.certificatePem],
    webhookClientKey: ['webhook-client.key', webhookClient.privateKeyPem],
    serviceAccountKey: ['sa.key', serviceAccount.privateKeyPem],
    serviceAccountPub: ['sa.pub', serviceAccount.publicKeyPem],
  };
  const paths = await writePems(contents);
  if (!node) return paths;

  const client = (commonName: string, organizations: string[] = []) =>
    issueCertificate({ commonName, organizations, usage: 'client', lifetimeMs: YEAR_MS }, ca);
  const kubelet = await client(`system:node:${node.name}`, ['system:nodes']);
  const scheduler = await client('system:kube-scheduler');
  const proxy = await client('system:kube-proxy');
  // The API server calls the kubelet for logs, exec and port-forward; the kubelet asks the API
  // server whether this user may, and system:masters may.
  const kubeletClient = await client('kube-apiserver-kubelet-client', ['system:masters']);
  const nodePaths = await writePems<keyof NodePki>({
    kubeletCert: ['kubelet.crt', kubelet.certificatePem],
    kubeletKey: ['kubelet.key', kubelet.privateKeyPem],
    schedulerCert: ['scheduler.crt', scheduler.certificatePem],
    schedulerKey: ['scheduler.key', scheduler.privateKeyPem],
    proxyCert: ['kube-proxy.crt', proxy.certificatePem],
    proxyKey: ['kube-proxy.key', proxy.privateKeyPem],
    apiserverKubeletClientCert: ['apiserver-kubelet-client.crt', kubeletClient.certificatePem],
    apiserverKubeletClientKey: ['apiserver-kubelet-client.key', kubeletClient.privateKeyPem],
  });
  return { ...paths, node: nodePaths };
}
