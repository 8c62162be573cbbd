/**
 * Kthena v1.0.0 as its users run it, on the local node: kthena-controller-manager built from its
 * Go module into an image (scripts/upstream/kthena-controller-manager.ts), installed by Kthena's own
 * chart (charts/kthena of its module, unchanged) with its webhooks, Service and certificates.
 *
 * - Certificates: `global.certManagementMode=auto`, the chart's default. The controller-manager
 *   writes a self-signed CA and serving pair into the Secret `kthena-controller-manager-webhook-certs`
 *   and the CA into its two webhook configurations; the pod mounts that Secret (optional) at /etc/tls
 *   and serves (webhooks and the probes' /healthz, on 8443) once the kubelet has put the files there.
 *   On a first install the Secret does not exist when the pod starts, and the kubelet fills the
 *   volume only at its next sync of the pod: when that comes after the liveness probe's three
 *   failures (about 25 s), the container is restarted once (exit 0: it stops cleanly on SIGTERM)
 *   and the next one finds the files. With the kubelet's default sync (a minute) that was 1 install
 *   in 3 (Ready in about 42 s, else about 12 to 22 s); the local node's kubelet syncs every 10 s
 *   (scripts/cluster/node.ts). Wait for Ready, not for zero restarts. Later installs reuse the
 *   Secret (Helm does not own it: uninstalling leaves it, deleting the namespace removes it).
 * - Only the controller-manager runs: the router is another binary this suite does not build. The
 *   chart's `networking.kthenaRouter.enabled=false` drops the router's webhook configuration and
 *   Service but not its Deployment, so its replicas are 0 and its webhook (which would answer
 *   ModelRoutes and ModelServers with `Fail` and no pod) is off. The networking subchart stays on:
 *   it holds the ModelRoute and ModelServer CRDs.
 * - Nothing is pulled: the image is named as the chart names it, under `localhost/`, imported into
 *   the node's containerd, and the chart's pull policy is already `IfNotPresent`.
 * - Neither Volcano's PodGroups nor LeaderWorkerSets are needed: the controller-manager looks their
 *   CRDs up and runs without them.
 */
import { loadBinaryImage } from '../../../scripts/upstream/binary-image.js';
import {
  ensureKthenaControllerManager,
  KTHENA_CONTROLLER_MANAGER_VERSION,
} from '../../../scripts/upstream/kthena-controller-manager.js';
import { kthenaChart } from '../../harness/kthena-module.js';

export const kthenaRelease = 'kthena';
export const kthenaNamespace = 'kthena-system';

const IMAGE_REPOSITORY = 'localhost/volcano-sh/kthena-controller-manager';
/** The chart's Deployment sets no command: the image's entrypoint runs, at its Dockerfile's path. */
const BINARY_PATH = '/kthena-controller-manager';

/** The pod's label (the Deployment's selector has the release's labels too). */
export const KTHENA_POD_SELECTOR = 'app.kubernetes.io/component=kthena-controller-manager';

/**
 * The supported switch, Kthena's chart's own values: the controller-manager's two webhook
 * configurations and its webhook Service are no longer rendered (so Helm deletes them), and the
 * router's. The controller-manager keeps running and keeps serving on 8443 (its probes' port):
 * the chart does not pass `--enable-webhook=false`, which would leave the probes nothing to answer.
 */
export const KTHENA_WEBHOOKS_OFF = [
  'workload.controllerManager.webhook.enabled=false',
  'networking.kthenaRouter.webhook.enabled=false',
];

/** Builds kthena-controller-manager (or finds it built) and imports its image into the node. */
export async function loadKthenaControllerManagerImage(log: (line: string) => void): Promise<void> {
  const binary = await ensureKthenaControllerManager(log);
  await loadBinaryImage(
    { image: `${IMAGE_REPOSITORY}:${KTHENA_CONTROLLER_MANAGER_VERSION}`, binary, path: BINARY_PATH },
    log,
  );
}

/**
 * `helm upgrade --install` arguments (after the helm binary) for Kthena's chart: its
 * controller-manager's webhooks on (Kthena's defaults, certificates in `auto` mode) unless
 * `webhooks` is false, then switched off by KTHENA_WEBHOOKS_OFF. The Deployment renders the same
 * either way, so switching rolls no pod.
 *
 * Switching them back on (off, then on) recreates both configurations without a caBundle, and the
 * running controller-manager writes its CA into them only when it starts: until its pod restarts
 * (`kubectl rollout restart deployment/kthena-controller-manager -n kthena-system`) every call
 * fails TLS verification and, `failurePolicy: Fail`, every ModelBooster, AutoscalingPolicy and
 * ModelServing write is refused. An upgrade with them on all along keeps the caBundle.
 */
export async function kthenaHelmArguments(webhooks: boolean): Promise<string[]> {
  const values = [
    `workload.controllerManager.image.repository=${IMAGE_REPOSITORY}`,
    `workload.controllerManager.image.tag=${KTHENA_CONTROLLER_MANAGER_VERSION}`,
    'global.certManagementMode=auto',
    // The router is another binary: no pod (its Deployment is rendered whatever
    // `kthenaRouter.enabled` says), and no webhook left to refuse with no pod to answer it.
    'networking.kthenaRouter.replicas=0',
    ...(webhooks
      ? ['workload.controllerManager.webhook.enabled=true', 'networking.kthenaRouter.webhook.enabled=false']
      : KTHENA_WEBHOOKS_OFF),
  ];
  return [
    'upgrade',
    '--install',
    kthenaRelease,
    await kthenaChart(),
    '--namespace',
    kthenaNamespace,
    '--create-namespace',
    ...values.flatMap((value) => ['--set', value]),
  ];
}
